/// 64-bit FNV-1a, the project's one stable hash: device partitions and the tracker's table key
/// (`stableHash64`), and in FenceNATS configuration fingerprints, fence digests and event
/// message ids. Stable across processes, machines and Swift versions (unlike `Hasher`), so a
/// value may be stored, sent, or compared with another worker's.
public enum FNV1a {
    /// The FNV-1a offset basis: the hash of no bytes, and the seed of a fresh hash.
    public static let offset: UInt64 = 0xCBF2_9CE4_8422_2325

    /// The hash of `bytes`, continuing from `seed` (so hashing a then b with the first result
    /// as the second's seed equals hashing a + b).
    ///
    /// Reads a contiguous collection as one buffer: about half the time of stepping through a
    /// `String.UTF8View`, whose iterator re-checks the string's form per byte.
    /// - Complexity: O(bytes).
    @inlinable
    public static func hash<Bytes: Sequence<UInt8>>(_ bytes: Bytes, seed: UInt64 = offset) -> UInt64 {
        if let h = bytes.withContiguousStorageIfAvailable({ step($0, seed) }) { return h }
        return step(bytes, seed)
    }

    /// The hash of a string's UTF-8. A small string is copied to the stack to be read as one
    /// buffer; a string without contiguous UTF-8 (a bridged one) is stepped through, with the
    /// same result.
    @inlinable
    public static func hash(_ s: String, seed: UInt64 = offset) -> UInt64 { hash(s.utf8, seed: seed) }

    @inlinable
    static func step<Bytes: Sequence<UInt8>>(_ bytes: Bytes, _ seed: UInt64) -> UInt64 {
        var h = seed
        for b in bytes {
            h ^= UInt64(b)
            h = h &* 0x100_0000_01B3
        }
        return h
    }
}
