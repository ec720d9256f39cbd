/// A versioned, checksummed binary form of `TrackerSnapshot`.
///
/// Layout (little-endian): magic `FENCESTATE` (10 bytes), format version (u32), payload length
/// (u64), CRC-32 (IEEE) of the payload (u32), then the payload: watermark (f64), device count
/// (u64), and per device: id (u32 length + UTF-8), last time, lon, lat (f64), pair count (u32),
/// per pair: fence id (u32 length + UTF-8), flags (u8), enter time, pending-since (f64).
/// A truncated or altered file fails the length or checksum test and is refused; it is never
/// read as an empty state.
extension TrackerSnapshot {
    static let magic = Array("FENCESTATE".utf8)
    public static let formatVersion: UInt32 = 1

    public func encoded() -> [UInt8] {
        var payload = ByteWriter()
        payload.f64(watermark)
        payload.u64(UInt64(devices.count))
        for d in devices {
            payload.string(d.id)
            payload.f64(d.lastTime)
            payload.f64(d.lastLon)
            payload.f64(d.lastLat)
            payload.u32(UInt32(d.pairs.count))
            for p in d.pairs {
                payload.string(p.fence)
                payload.u8((p.stayed ? 1 : 0) | (p.exitPending ? 2 : 0))
                payload.f64(p.enterTime)
                payload.f64(p.pendingSince)
            }
        }
        var out = ByteWriter()
        out.bytes.append(contentsOf: Self.magic)
        out.u32(Self.formatVersion)
        out.u64(UInt64(payload.bytes.count))
        out.u32(CRC32.checksum(payload.bytes))
        out.bytes.append(contentsOf: payload.bytes)
        return out.bytes
    }

    /// Decodes and verifies a snapshot.
    /// - Throws: `FenceError` (`malformedInput`) naming what is wrong: not a state file, an
    ///   unknown version, truncated, checksum mismatch, or inconsistent content.
    public init(decoding bytes: [UInt8]) throws(FenceError) {
        func fail(_ why: String) -> FenceError { FenceError(.malformedInput, reason: "state file: \(why)") }
        var header = ByteReader(bytes)
        guard let magic = header.take(Self.magic.count), magic.elementsEqual(Self.magic) else {
            throw fail("not a fence state file (bad magic)")
        }
        guard let version = header.u32() else { throw fail("truncated header") }
        guard version == Self.formatVersion else { throw fail("format version \(version), this build reads \(Self.formatVersion)") }
        guard let length = header.u64(), let crc = header.u32() else { throw fail("truncated header") }
        let remaining = bytes.count - header.offset
        guard UInt64(remaining) == length else {
            throw fail("truncated or padded: header says \(length) payload bytes, file has \(remaining)")
        }
        let payload = Array(bytes[header.offset...])
        guard CRC32.checksum(payload) == crc else { throw fail("checksum mismatch: the file is corrupted") }
        var r = ByteReader(payload)
        guard let watermark = r.f64(), let count = r.u64() else { throw fail("truncated payload") }
        // Each device takes at least 32 bytes: a count beyond that is corruption, not a reason to allocate.
        guard count <= UInt64(payload.count / 32) else { throw fail("device count \(count) does not fit the file") }
        var devices: [Device] = []
        devices.reserveCapacity(Int(count))
        for _ in 0..<count {
            guard let id = r.string(), let t = r.f64(), let lon = r.f64(), let lat = r.f64(), let n = r.u32() else {
                throw fail("truncated device record")
            }
            guard UInt64(n) <= UInt64(payload.count / 21) else { throw fail("pair count \(n) does not fit the file") }
            var pairs: [Pair] = []
            for _ in 0..<n {
                guard let fence = r.string(), let flags = r.u8(), let enter = r.f64(), let pending = r.f64() else {
                    throw fail("truncated pair record")
                }
                pairs.append(Pair(fence: fence, stayed: flags & 1 != 0, exitPending: flags & 2 != 0, enterTime: enter, pendingSince: pending))
            }
            devices.append(Device(id: id, lastTime: t, lastLon: lon, lastLat: lat, pairs: pairs))
        }
        guard r.offset == payload.count else { throw fail("\(payload.count - r.offset) unexpected bytes after the last device") }
        self.init(watermark: watermark, devices: devices)
    }
}

struct ByteWriter {
    var bytes: [UInt8] = []
    mutating func u8(_ v: UInt8) { bytes.append(v) }
    mutating func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func u64(_ v: UInt64) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func f64(_ v: Double) { u64(v.bitPattern) }
    mutating func string(_ s: String) {
        u32(UInt32(s.utf8.count))
        bytes.append(contentsOf: s.utf8)
    }
}

struct ByteReader {
    let bytes: [UInt8]
    var offset = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    mutating func take(_ n: Int) -> ArraySlice<UInt8>? {
        guard n >= 0, bytes.count - offset >= n else { return nil }
        defer { offset += n }
        return bytes[offset..<(offset + n)]
    }
    mutating func u8() -> UInt8? { take(1)?.first }
    mutating func u32() -> UInt32? {
        guard let b = take(4) else { return nil }
        return b.reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }
    mutating func u64() -> UInt64? {
        guard let b = take(8) else { return nil }
        return b.reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }
    mutating func f64() -> Double? { u64().map(Double.init(bitPattern:)) }
    mutating func string() -> String? {
        guard let n = u32(), let b = take(Int(n)) else { return nil }
        return String(decoding: b, as: UTF8.self)
    }
}

/// CRC-32 (IEEE 802.3, reflected, as zlib and gzip compute it).
enum CRC32 {
    static let table: [UInt32] = (0..<256).map { i -> UInt32 in
        var c = UInt32(i)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in bytes { c = table[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }
}
