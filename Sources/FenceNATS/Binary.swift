/// Little-endian byte building and reading for the worker's wire and checkpoint formats.
///
/// The engine keeps its own copies of these helpers internal; the few lines are repeated here
/// rather than widening the engine's public surface for them.
struct ByteWriter {
    var bytes: [UInt8] = []
    init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }
    mutating func u8(_ v: UInt8) { bytes.append(v) }
    mutating func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func u64(_ v: UInt64) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func f64(_ v: Double) { u64(v.bitPattern) }
    /// A length-prefixed (u32) UTF-8 string.
    mutating func string(_ s: String) {
        u32(UInt32(s.utf8.count))
        bytes.append(contentsOf: s.utf8)
    }
    /// A length-prefixed (u64) byte block.
    mutating func block(_ b: [UInt8]) {
        u64(UInt64(b.count))
        bytes.append(contentsOf: b)
    }
}

/// Reads what `ByteWriter` wrote; every read returns nil instead of running past the end.
struct ByteReader {
    let bytes: UnsafeRawBufferPointer
    var offset = 0
    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var remaining: Int { bytes.count - offset }

    mutating func take(_ n: Int) -> UnsafeRawBufferPointer? {
        guard n >= 0, remaining >= n else { return nil }
        defer { offset += n }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + n)])
    }
    mutating func u8() -> UInt8? { take(1)?.first }
    mutating func u16() -> UInt16? { take(2).map { UInt16(littleEndian: $0.loadUnaligned(as: UInt16.self)) } }
    mutating func u32() -> UInt32? { take(4).map { UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)) } }
    mutating func u64() -> UInt64? { take(8).map { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) } }
    mutating func f64() -> Double? { u64().map(Double.init(bitPattern:)) }
    mutating func string() -> String? {
        guard let n = u32(), let b = take(Int(n)) else { return nil }
        return String(decoding: b, as: UTF8.self)
    }
    mutating func block() -> [UInt8]? {
        guard let n = u64(), n <= UInt64(remaining), let b = take(Int(n)) else { return nil }
        return [UInt8](b)
    }
}

/// CRC-32 (IEEE 802.3, reflected, as zlib computes it): the checkpoint's integrity check.
enum CRC32 {
    static let table: [UInt32] = (0..<256).map { i -> UInt32 in
        var c = UInt32(i)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in bytes { c = table[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }
}
