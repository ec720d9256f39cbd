import FenceEngine

/// An independent reading of the same bytes, written from the OGC and PostGIS layouts rather
/// than from the engine's code: the oracle the fuzz target compares `WKBShapeReader` with.
///
/// Type codes are read as PostGIS reads them (`lwin_wkb.c`): the flag bits 0x80000000 (Z),
/// 0x40000000 (M), 0x20000000 (an SRID follows) and 0x10000000 (bounding box, ignored); the
/// rest a code below 4000: a base type (1 Point, 3 Polygon, 6 MultiPolygon) plus 1000 (Z),
/// 2000 (M) or 3000 (ZM) for ISO WKB. A flag and an ISO range together add up. Empty polygons
/// inside a MultiPolygon are dropped, as the engine does.
enum ReferenceWKB {
    enum Shape: CustomStringConvertible {
        case point(Double, Double)
        case polygons([[[(Double, Double)]]])

        var description: String {
            switch self {
            case .point(let x, let y): return "Point(\(x) \(y))"
            case .polygons(let ps): return "\(ps.count) polygons, \(ps.map { $0.map(\.count) })"
            }
        }
    }

    struct Reader {
        let bytes: UnsafeRawBufferPointer
        var at = 0

        mutating func take(_ n: Int) -> UnsafeRawBufferPointer? {
            guard n >= 0, bytes.count - at >= n else { return nil }
            defer { at += n }
            return UnsafeRawBufferPointer(rebasing: bytes[at..<at + n])
        }

        mutating func u32(_ big: Bool) -> UInt32? {
            guard let b = take(4) else { return nil }
            var v: UInt32 = 0
            for i in 0..<4 { v |= UInt32(b[big ? i : 3 - i]) << (8 * (3 - i)) }
            return v
        }

        mutating func f64(_ big: Bool) -> Double? {
            guard let b = take(8) else { return nil }
            var v: UInt64 = 0
            for i in 0..<8 { v |= UInt64(b[big ? i : 7 - i]) << (8 * (7 - i)) }
            return Double(bitPattern: v)
        }

        /// Byte order, base type and ordinates per position.
        mutating func header() -> (big: Bool, type: UInt32, dims: Int)? {
            guard let order = take(1)?[0], order <= 1 else { return nil }
            let big = order == 0
            guard let raw = u32(big) else { return nil }
            let flags = raw & 0xE000_0000
            // 0x10000000 is PostGIS's bounding-box flag, which its reader ignores (as GEOS's).
            let code = raw & 0x0FFF_FFFF
            guard code < 4000 else { return nil }
            let iso = code / 1000
            var dims = 2
            if iso == 1 || iso == 3 || flags & 0x8000_0000 != 0 { dims += 1 }
            if iso == 2 || iso == 3 || flags & 0x4000_0000 != 0 { dims += 1 }
            if flags & 0x2000_0000 != 0 { guard u32(big) != nil else { return nil } }
            return (big, code % 1000, dims)
        }

        mutating func polygon(_ big: Bool, _ dims: Int) -> [[(Double, Double)]]? {
            guard let rings = u32(big) else { return nil }
            var out: [[(Double, Double)]] = []
            for _ in 0..<rings {
                guard let n = u32(big), Int(n) <= (bytes.count - at) / (8 * dims) else { return nil }
                var ring: [(Double, Double)] = []
                for _ in 0..<n {
                    guard let x = f64(big), let y = f64(big) else { return nil }
                    for _ in 2..<dims { guard f64(big) != nil else { return nil } }
                    ring.append((x, y))
                }
                out.append(ring)
            }
            return out
        }
    }

    static func decode(_ bytes: UnsafeRawBufferPointer) -> Shape? {
        var r = Reader(bytes: bytes)
        guard let h = r.header() else { return nil }
        switch h.type {
        case 1:
            guard let x = r.f64(h.big), let y = r.f64(h.big) else { return nil }
            for _ in 2..<h.dims { guard r.f64(h.big) != nil else { return nil } }
            return .point(x, y)
        case 3:
            guard let p = r.polygon(h.big, h.dims) else { return nil }
            return .polygons(p.isEmpty ? [] : [p])
        case 6:
            guard let n = r.u32(h.big) else { return nil }
            var out: [[[(Double, Double)]]] = []
            for _ in 0..<n {
                guard let part = r.header(), part.type == 3, let p = r.polygon(part.big, part.dims) else { return nil }
                if !p.isEmpty { out.append(p) }
            }
            return .polygons(out)
        default:
            return nil
        }
    }

    static func same(_ a: Double, _ b: Double) -> Bool { a.bitPattern == b.bitPattern || (a.isNaN && b.isNaN) }

    static func same(_ shape: FenceShape, _ expected: Shape) -> Bool {
        switch (shape, expected) {
        case (.circle(let c, _), .point(let x, let y)):
            return same(c.lon, x) && same(c.lat, y)
        case (.polygons(let parts), .polygons(let ref)):
            guard parts.count == ref.count else { return false }
            for (p, q) in zip(parts, ref) {
                let rings = [p.exterior] + p.holes
                guard rings.count == q.count else { return false }
                for (a, b) in zip(rings, q) {
                    guard a.count == b.count, zip(a, b).allSatisfy({ same($0.lon, $1.0) && same($0.lat, $1.1) }) else { return false }
                }
            }
            return true
        default:
            return false
        }
    }

    static func same(_ a: FenceShape, _ b: FenceShape) -> Bool {
        switch (a, b) {
        case (.circle(let c, let r), .circle(let d, let s)):
            return same(c.lon, d.lon) && same(c.lat, d.lat) && same(r, s)
        case (.polygons(let p), .polygons(let q)):
            guard p.count == q.count else { return false }
            return zip(p, q).allSatisfy { x, y in
                let xr = [x.exterior] + x.holes
                let yr = [y.exterior] + y.holes
                return xr.count == yr.count && zip(xr, yr).allSatisfy { a, b in
                    a.count == b.count && zip(a, b).allSatisfy { same($0.lon, $1.lon) && same($0.lat, $1.lat) }
                }
            }
        default:
            return false
        }
    }
}
