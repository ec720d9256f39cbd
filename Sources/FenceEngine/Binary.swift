// Little-endian byte building and reading for the engine's state file and the NATS worker's
// wire and checkpoint formats. `package` access: every module of this package shares them,
// and they are not part of the library's public surface. Inlinable: FenceNATS decodes every
// message with them, and a call across the module boundary per byte read would cost.

/// Appends little-endian values to a byte array.
package struct ByteWriter {
    package var bytes: [UInt8] = []
    @inlinable package init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }
    /// A record that opens with `magic` and a one-byte `version` (`ByteReader.opens`).
    @inlinable package init(magic: [UInt8], version: UInt8) {
        bytes = magic
        bytes.append(version)
    }
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

    /// Whether the bytes go on with `magic` and then the one-byte `version`, read past them
    /// when they do (`ByteWriter.init(magic:version:)`).
    @inlinable package mutating func opens(magic: [UInt8], version: UInt8) -> Bool {
        guard let m = take(magic.count), m.elementsEqual(magic), u8() == version else { return false }
        return true
    }

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
    /// Set once `string()` met bytes that are not UTF-8 (and read them as nil, as it reads a
    /// string cut short): a decoder can then say which it was.
    package var sawInvalidText = false
    /// A u32-length-prefixed UTF-8 string; nil past the end, or when the bytes are not UTF-8
    /// (`sawInvalidText`): never repaired to U+FFFD, which would make two ids one.
    @inlinable package mutating func string() -> String? {
        guard let n = u32(), let b = take(Int(n)) else { return nil }
        guard let s = b.withMemoryRebound(to: UInt8.self, { String.validUTF8($0) }) else {
            sawInvalidText = true
            return nil
        }
        return s
    }
    @inlinable package mutating func block() -> [UInt8]? {
        guard let n = u64(), n <= UInt64(remaining), let b = take(Int(n)) else { return nil }
        return [UInt8](b)
    }
}

/// CRC-32 (IEEE 802.3, reflected, as zlib and gzip compute it): the state file's and the
/// checkpoints' integrity check. O(n), eight bytes a step.
package enum CRC32 {
    /// `tables[k * 256 + b]`: the CRC of byte b followed by k zero bytes (slicing-by-8).
    @usableFromInline static let tables: [UInt32] = {
        var t = [UInt32](repeating: 0, count: 8 * 256)
        for i in 0..<256 {
            var c = UInt32(i)
            for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
            t[i] = c
        }
        for k in 1..<8 {
            for i in 0..<256 { t[k * 256 + i] = (t[(k - 1) * 256 + i] >> 8) ^ t[Int(t[(k - 1) * 256 + i] & 0xFF)] }
        }
        return t
    }()

    /// The CRC-32 (IEEE 802.3, as zlib) of the bytes: eight at a time through eight tables
    /// (slicing-by-8), about 1 ns a byte against 3-5 for a byte at a time through a generic
    /// sequence; the rest a byte at a time. A checkpoint of a million bytes is checked three
    /// times on its way out.
    /// - Complexity: O(n).
    @inlinable package static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        let n = bytes.count
        var i = 0
        tables.withUnsafeBufferPointer { t in
            let t = t.baseAddress!
            if let base = bytes.baseAddress {
                while i &+ 8 <= n {
                    let word = UInt64(littleEndian: (base + i).loadUnaligned(as: UInt64.self))
                    let low = UInt32(truncatingIfNeeded: word) ^ c
                    let high = UInt32(truncatingIfNeeded: word >> 32)
                    c = t[7 * 256 + Int(low & 0xFF)] ^ t[6 * 256 + Int((low >> 8) & 0xFF)]
                        ^ t[5 * 256 + Int((low >> 16) & 0xFF)] ^ t[4 * 256 + Int(low >> 24)]
                        ^ t[3 * 256 + Int(high & 0xFF)] ^ t[2 * 256 + Int((high >> 8) & 0xFF)]
                        ^ t[256 + Int((high >> 16) & 0xFF)] ^ t[Int(high >> 24)]
                    i &+= 8
                }
                while i < n {
                    c = t[Int((c ^ UInt32(base.load(fromByteOffset: i, as: UInt8.self))) & 0xFF)] ^ (c >> 8)
                    i &+= 1
                }
            }
        }
        return c ^ 0xFFFF_FFFF
    }

    /// `checksum` of any bytes: contiguous ones directly, others copied first.
    @inlinable package static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        if let c = bytes.withContiguousStorageIfAvailable({ checksum(UnsafeRawBufferPointer($0)) }) { return c }
        return Array(bytes).withUnsafeBytes { checksum($0) }
    }
}

extension ByteReader {
    /// The payload of a record `ByteWriter.framed` wrote, and its version; or, as text, why
    /// the bytes are not one: another magic, a version not in `versions`, a header cut short,
    /// a length that is not the bytes there, a checksum that does not hold. The caller names
    /// the kind of record (`what`, e.g. "fence state file") and prefixes its own context.
    /// - Complexity: O(payload) (the checksum).
    package static func unframed(
        _ raw: UnsafeRawBufferPointer, magic: [UInt8], versions: Set<UInt32>, current: UInt32, what: String
    ) -> Result<(version: UInt32, payload: UnsafeRawBufferPointer), FrameProblem> {
        var header = ByteReader(raw)
        guard let m = header.take(magic.count), m.elementsEqual(magic) else { return .failure(FrameProblem("not a \(what) (bad magic)")) }
        guard let version = header.u32() else { return .failure(FrameProblem("truncated header")) }
        guard versions.contains(version) else { return .failure(FrameProblem("format version \(version), this build reads \(current)")) }
        guard let length = header.u64(), let crc = header.u32() else { return .failure(FrameProblem("truncated header")) }
        guard UInt64(header.remaining) == length else {
            return .failure(FrameProblem("truncated or padded: header says \(length) payload bytes, there are \(header.remaining)"))
        }
        let payload = UnsafeRawBufferPointer(rebasing: raw[header.offset...])
        guard CRC32.checksum(payload) == crc else { return .failure(FrameProblem("checksum mismatch: the \(what) is corrupted")) }
        return .success((version, payload))
    }
}

/// Why bytes are not a framed record (`ByteReader.unframed`).
package struct FrameProblem: Error {
    package let reason: String
    package init(_ reason: String) { self.reason = reason }
}
