extension Array where Element == UInt8 {
    /// Appends a string's UTF-8 in one copy (a native string's bytes, literals' included, are
    /// contiguous already; another is made so first). `append(contentsOf: "...".utf8)` walks
    /// the string through the generic sequence path instead: about 170 instructions for a
    /// short literal, paid several times for every output row.
    @inline(__always)
    public mutating func appendUTF8(_ string: String) {
        var s = string
        s.withUTF8 { append(contentsOf: $0) }
    }
}
