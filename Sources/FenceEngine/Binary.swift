// Little-endian byte building and reading for the engine's state file and the NATS worker's
// wire and checkpoint formats. `package` access: every module of this package shares them,
// and they are not part of the library's public surface. Inlinable: FenceNATS decodes every
// message with them, and a call across the module boundary per byte read would cost.

/// Appends little-endian values to a byte array.
package struct ByteWriter {
    package var bytes: [UInt8] = []
    @inlinable package init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }
    @inlinable package mutating func u8(_ v: UInt8) { bytes.append(v) }
    @inlinable package mutating func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    @inlinable package mutating func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    @inlinable package mutating func u64(_ v: UInt64) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    @inlinable package mutating func f64(_ v: Double) { u64(v.bitPattern) }
    /// A length-prefixed (u32) UTF-8 string.
    @inlinable package mutating func string(_ s: String) {
        u32(UInt32(s.utf8.count))
        bytes.append(contentsOf: s.utf8)
    }
    /// A length-prefixed (u64) byte block.
    @inlinable package mutating func block(_ b: [UInt8]) {
        u64(UInt64(b.count))
        bytes.append(contentsOf: b)
    }
}

extension ByteWriter {
    /// A checksummed file: `magic`, `version` (u32), the payload's length (u64) and CRC-32
    /// (u32), then the payload: the layout of the state file and the partition checkpoint.
    @inlinable
    package static func framed(magic: [UInt8], version: UInt32, payload: [UInt8]) -> [UInt8] {
        var out = ByteWriter(capacity: magic.count + 16 + payload.count)
        out.bytes.append(contentsOf: magic)
        out.u32(version)
        out.u64(UInt64(payload.count))
        out.u32(CRC32.checksum(payload))
        out.bytes.append(contentsOf: payload)
        return out.bytes
    }
}

/// Reads what `ByteWriter` wrote; every read returns nil instead of running past the end.
/// The buffer must outlive the reader (use it inside `withUnsafeBytes`).
package struct ByteReader {
    package let bytes: UnsafeRawBufferPointer
    package var offset = 0
    @inlinable package init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    @inlinable package var remaining: Int { bytes.count - offset }

    @inlinable package mutating func take(_ n: Int) -> UnsafeRawBufferPointer? {
        guard n >= 0, remaining >= n else { return nil }
        defer { offset += n }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + n)])
    }
    @inlinable package mutating func u8() -> UInt8? { take(1)?.first }
    @inlinable package mutating func u16() -> UInt16? { take(2).map { UInt16(littleEndian: $0.loadUnaligned(as: UInt16.self)) } }
    @inlinable package mutating func u32() -> UInt32? { take(4).map { UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)) } }
    @inlinable package mutating func u64() -> UInt64? { take(8).map { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) } }
    @inlinable package mutating func f64() -> Double? { u64().map(Double.init(bitPattern:)) }
    @inlinable package mutating func string() -> String? {
        guard let n = u32(), let b = take(Int(n)) else { return nil }
        return String(decoding: b, as: UTF8.self)
    }
    @inlinable package mutating func block() -> [UInt8]? {
        guard let n = u64(), n <= UInt64(remaining), let b = take(Int(n)) else { return nil }
        return [UInt8](b)
    }
}

/// CRC-32 (IEEE 802.3, reflected, as zlib and gzip compute it): the state file's and the
/// checkpoints' integrity check. O(n), a table lookup a byte.
package enum CRC32 {
    @usableFromInline static let table: [UInt32] = (0..<256).map { i -> UInt32 in
        var c = UInt32(i)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    @inlinable package static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in bytes { c = table[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }
}
