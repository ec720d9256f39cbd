import Foundation

/// The byte order of strings' UTF-8, the order ids take in output and in state files
/// (independent of Unicode normalisation and locale, unlike `String.<`).
public enum UTF8Order {
    /// Whether `a`'s UTF-8 comes before `b`'s: the first differing byte decides, a proper
    /// prefix comes first. The same answer as `a.utf8.lexicographicallyPrecedes(b.utf8)`, by
    /// one `memcmp` over the strings' own storage (that generic walk cost a worker's checkpoint
    /// most of its sort); bridged strings without contiguous UTF-8 take the walk.
    /// - Complexity: O(common prefix).
    @inline(__always)
    public static func precedes(_ a: String, _ b: String) -> Bool { compare(a, b) < 0 }

    /// `a`'s UTF-8 against `b`'s, in that order: negative when `a` comes first, 0 when the bytes
    /// are equal, positive otherwise. One `memcmp`; bridged strings without contiguous UTF-8
    /// take a walk.
    /// - Complexity: O(common prefix).
    @inline(__always)
    public static func compare(_ a: String, _ b: String) -> Int {
        let fast = a.utf8.withContiguousStorageIfAvailable { pa in
            b.utf8.withContiguousStorageIfAvailable { pb -> Int in
                let common = min(pa.count, pb.count)
                if common > 0 {
                    let r = memcmp(pa.baseAddress!, pb.baseAddress!, common)
                    if r != 0 { return Int(r) }
                }
                return pa.count - pb.count
            }
        }
        if let fast, let answer = fast { return answer }
        if a.utf8.elementsEqual(b.utf8) { return 0 }
        return a.utf8.lexicographicallyPrecedes(b.utf8) ? -1 : 1
    }

    /// A string's first 8 UTF-8 bytes as a big-endian number, zero-padded: a smaller prefix
    /// means a string that comes first (`compare`); equal prefixes decide nothing (a proper
    /// prefix pads with zeros, as a string with NUL bytes there would).
    /// - Complexity: O(1), at most 8 bytes read.
    @inline(__always)
    static func prefix(_ s: String) -> UInt64 {
        var p: UInt64 = 0
        var n = 0
        for b in s.utf8 {
            p = p << 8 | UInt64(b)
            n += 1
            if n == 8 { break }
        }
        return n == 8 ? p : p << UInt64(8 * (8 - n))
    }

    /// A sort key over a string's first 16 UTF-8 bytes (big-endian, zero-padded) and its
    /// length: comparing the two words, then the lengths, is comparing the strings (as `sort`
    /// does), except for two ids longer than 16 bytes with the same 16 first, which `precedes`
    /// then decides.
    struct Key {
        var high: UInt64
        var low: UInt64
        var length: Int

        init(_ s: String) {
            var bytes: (UInt64, UInt64) = (0, 0)
            let length = withUnsafeMutableBytes(of: &bytes) { raw -> Int in
                var n = 0
                for b in s.utf8 {
                    if n < 16 { raw[n] = b }
                    n += 1
                    if n > 16 { break }
                }
                return n
            }
            high = UInt64(bigEndian: bytes.0)
            low = UInt64(bigEndian: bytes.1)
            self.length = length
        }
    }

    /// Sorts `items` by their ids' UTF-8 (`precedes`), through `Key`s: a few integer compares
    /// for most pairs instead of a walk over two strings' storage.
    /// - Complexity: O(n log n) compares, O(n) moves of the items.
    static func sort<T>(_ items: inout [T], by id: (T) -> String) {
        let keys = items.map { Key(id($0)) }
        var order = Array(items.indices)
        order.sort { i, j in
            let a = keys[i]
            let b = keys[j]
            if a.high != b.high { return a.high < b.high }
            if a.low != b.low { return a.low < b.low }
            if a.length <= 16 || b.length <= 16 { return a.length < b.length }
            return precedes(id(items[i]), id(items[j]))
        }
        items = order.map { items[$0] }
    }

    /// `ids` in the byte order of their UTF-8 (`precedes`): the order every listing of ids
    /// takes. Two canonically equivalent spellings are two ids, each in its place.
    /// - Complexity: O(n log n) compares.
    public static func sorted(_ ids: [String]) -> [String] {
        var ids = ids
        sort(&ids) { $0 }
        return ids
    }
}
