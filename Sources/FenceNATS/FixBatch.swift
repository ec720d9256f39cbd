import FenceEngine

/// The payload of a fix message: one device's fixes, in the order the producer read them.
///
/// Binary, little-endian: `F` `X` (magic), version (u8) = 1, device id (u16 length + UTF-8),
/// fix count (u32), then per fix: time, lon, lat, accuracy (f64; NaN when unknown) and the
/// coordinate system (u8: 0 WGS84, 1 GCJ-02, 2 BD-09LL): 33 bytes a fix. An empty message
/// (no bytes) is a tick: no fixes. A payload that is not this format is refused as a whole
/// and counted; it never reaches any device's state.
public enum FixBatch {
    static let magic: (UInt8, UInt8) = (0x46, 0x58)
    static let version: UInt8 = 1
    public static let bytesPerFix = 33

    /// Encodes fixes of one device.
    /// - Precondition: every fix has `device` as its device.
    public static func encode(device: String, fixes: some Collection<Position>) -> [UInt8] {
        var w = ByteWriter(capacity: 10 + device.utf8.count + fixes.count * bytesPerFix)
        w.u8(magic.0)
        w.u8(magic.1)
        w.u8(version)
        w.u16(UInt16(min(device.utf8.count, Int(UInt16.max))))
        w.bytes.append(contentsOf: device.utf8.prefix(Int(UInt16.max)))
        w.u32(UInt32(fixes.count))
        for f in fixes {
            w.f64(f.time)
            w.f64(f.lon)
            w.f64(f.lat)
            w.f64(f.accuracy ?? .nan)
            w.u8(coordCode(f.coord))
        }
        return w.bytes
    }

    /// Decodes a payload, appending its fixes to `out`.
    /// - Returns: the number of fixes appended (0 for a tick).
    /// - Throws: a reason when the payload is not a fix batch (bad magic, version, length).
    @discardableResult
    public static func decode(_ bytes: UnsafeRawBufferPointer, into out: inout [Position]) throws(FixBatchError) -> Int {
        if bytes.isEmpty { return 0 }
        var r = ByteReader(bytes)
        guard r.u8() == magic.0, r.u8() == magic.1 else { throw FixBatchError("not a fix batch (bad magic)") }
        guard let v = r.u8(), v == version else { throw FixBatchError("fix batch version is not \(version)") }
        guard let n = r.u16(), let id = r.take(Int(n)), let count = r.u32() else { throw FixBatchError("truncated header") }
        guard r.remaining == Int(count) * bytesPerFix else {
            throw FixBatchError("\(count) fixes need \(Int(count) * bytesPerFix) bytes, the message has \(r.remaining)")
        }
        // Never repaired to U+FFFD: two producers' distinct ids would become one device.
        guard let device = id.withMemoryRebound(to: UInt8.self, { String.validUTF8($0) }) else {
            throw FixBatchError("the device id is not valid UTF-8")
        }
        let start = out.count
        out.reserveCapacity(start + Int(count))
        for _ in 0..<count {
            let t = r.f64()!
            let lon = r.f64()!
            let lat = r.f64()!
            let acc = r.f64()!
            guard let c = coord(r.u8()!) else {
                out.removeSubrange(start...)
                throw FixBatchError("unknown coordinate system code")
            }
            out.append(Position(device: device, time: t, lon: lon, lat: lat, accuracy: acc.isNaN ? nil : acc, coord: c))
        }
        return Int(count)
    }

    static func coordCode(_ c: CoordinateSystem) -> UInt8 {
        switch c {
        case .wgs84: return 0
        case .gcj02: return 1
        case .bd09ll: return 2
        }
    }

    static func coord(_ code: UInt8) -> CoordinateSystem? {
        switch code {
        case 0: return .wgs84
        case 1: return .gcj02
        case 2: return .bd09ll
        default: return nil
        }
    }
}

public struct FixBatchError: Error, Sendable, CustomStringConvertible {
    public var reason: String
    init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}
