import Foundation

extension String {
    /// The text of `bytes` when they are well-formed UTF-8, nil otherwise; never repaired to
    /// U+FFFD, which would make distinct ids one. The check every reader of ids shares: the
    /// position reader (an optional, not a `Result`: that ran about 37 more instructions a
    /// line under callgrind), FenceIO's JSON scanners (`validating`) and NATS fix batches.
    ///
    /// ASCII bytes (the common id) are valid as they are and take the decoding fast path
    /// (`String(validating:as:)` took 3x the time of `String(decoding:as:)`, 0.15 against 0.05
    /// us per 10-byte id); other bytes are decoded, repairing, and are valid when nothing was
    /// repaired: a repair puts U+FFFD where the first invalid sequence starts, and since
    /// U+FFFD's bytes are themselves valid they cannot have stood there. An ASCII text of at
    /// most 15 bytes (a small string, no allocation: most device and fence ids) is made by
    /// copying its bytes in, the same string without the decoding pass (112 instructions an
    /// id in callgrind where that took 171).
    /// - Complexity: O(count).
    @inlinable @inline(__always)
    public static func validUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        var high: UInt8 = 0
        for c in bytes { high |= c }
        if high < 0x80 {
            guard bytes.count <= 15, let p = bytes.baseAddress else { return String(decoding: bytes, as: UTF8.self) }
            return String(unsafeUninitializedCapacity: bytes.count) { out in
                out.baseAddress!.update(from: p, count: bytes.count)
                return bytes.count
            }
        }
        var s = String(decoding: bytes, as: UTF8.self)
        let unchanged = s.withUTF8 { u in u.count == bytes.count && memcmp(u.baseAddress!, bytes.baseAddress!, bytes.count) == 0 }
        return unchanged ? s : nil
    }
}
