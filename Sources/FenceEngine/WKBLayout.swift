/// What a WKB geometry holds, read from its headers alone: the type, the counts, and the two
/// ends of each ring. Nothing is copied and nothing is allocated, so a hostile geometry (ten
/// million positions, a million polygons, counts larger than the buffer) is refused before GEOS
/// builds anything.
struct WKBLayout {
    enum Kind { case point, polygon, multiPolygon }
    var kind: Kind
    var polygons = 0
    var positions = 0
    var isEmpty = false

    /// Walks the headers of ISO WKB (types 1000+ for Z, 2000+ M, 3000+ ZM) or PostGIS extended
    /// WKB (Z, M and SRID flag bits), in either byte order.
    ///
    /// Checks, in the order `FenceValidation` applies them to values: the type (Point, Polygon,
    /// MultiPolygon), the buffer holding every count it announces, `limits`, then each ring's
    /// length (at least 4 positions) and closure (first position equal to the last in x and y).
    /// Error texts are the ones the engine gives for the same fault in a `Fence` value.
    /// - Complexity: O(rings), independent of the number of positions.
    static func read(_ bytes: UnsafeRawBufferPointer, limits: FenceLimits) -> Result<WKBLayout, FenceError> {
        var cursor = Cursor(bytes: bytes)
        do throws(FenceError) {
            let header = try cursor.header()
            switch header.type {
            case 1:
                let x = try cursor.double(header.bigEndian)
                let y = try cursor.double(header.bigEndian)
                try cursor.skip(8 * (header.dimensions - 2), what: "the point")
                return .success(WKBLayout(kind: .point, positions: 1, isEmpty: x.isNaN && y.isNaN))
            case 3:
                var layout = WKBLayout(kind: .polygon, polygons: 1)
                let start = cursor.offset
                let rings = try cursor.polygonRings(header, polygon: nil, counting: true, positions: &layout.positions)
                if layout.positions > limits.maxPositions {
                    throw FenceError(.limitExceeded, reason: "\(layout.positions) positions exceed the limit of \(limits.maxPositions)")
                }
                cursor.offset = start
                var ignored = 0
                _ = try cursor.polygonRings(header, polygon: nil, counting: false, positions: &ignored)
                layout.isEmpty = rings == 0
                return .success(layout)
            case 6:
                let count = try cursor.count(header.bigEndian, unit: 9, what: "polygons")
                if count > limits.maxPolygons {
                    return .failure(FenceError(.limitExceeded, reason: "\(count) polygons exceed the limit of \(limits.maxPolygons)"))
                }
                var layout = WKBLayout(kind: .multiPolygon, polygons: count, isEmpty: count == 0)
                // Counts first, for every part, so a limit is reported before any ring fault.
                let start = cursor.offset
                for p in 0..<count {
                    let part = try cursor.header()
                    guard part.type == 3 else {
                        throw FenceError(.malformedInput, reason: "member \(p + 1) of the MultiPolygon is a \(Self.typeName(part.type))")
                    }
                    _ = try cursor.polygonRings(part, polygon: nil, counting: true, positions: &layout.positions)
                }
                if layout.positions > limits.maxPositions {
                    throw FenceError(.limitExceeded, reason: "\(layout.positions) positions exceed the limit of \(limits.maxPositions)")
                }
                cursor.offset = start
                var ignored = 0
                for p in 0..<count {
                    let part = try cursor.header()
                    _ = try cursor.polygonRings(part, polygon: count > 1 ? p + 1 : nil, counting: false, positions: &ignored)
                }
                return .success(layout)
            default:
                throw FenceError(
                    .malformedInput,
                    reason: "geometry type \(Self.typeName(header.type)) cannot be a fence (Polygon, MultiPolygon or Point with radius)")
            }
        } catch {
            return .failure(error)
        }
    }

    /// The OGC name of a WKB type code (without dimensions).
    static func typeName(_ type: UInt32) -> String {
        let names = [
            "Geometry", "Point", "LineString", "Polygon", "MultiPoint", "MultiLineString", "MultiPolygon",
            "GeometryCollection", "CircularString", "CompoundCurve", "CurvePolygon", "MultiCurve", "MultiSurface",
            "Curve", "Surface", "PolyhedralSurface", "TIN", "Triangle",
        ]
        return type < names.count ? names[Int(type)] : "WKB type \(type)"
    }

    struct Header {
        var bigEndian: Bool
        /// Base type: 1 Point, 3 Polygon, 6 MultiPolygon, ...
        var type: UInt32
        /// 2, 3 or 4 doubles per position.
        var dimensions: Int
    }

    struct Cursor {
        let bytes: UnsafeRawBufferPointer
        var offset = 0

        init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        mutating func need(_ n: Int, what: String) throws(FenceError) {
            guard n >= 0, n <= bytes.count - offset else {
                throw FenceError(
                    .malformedInput, reason: "the WKB is truncated: \(what) at byte \(offset) needs \(n) bytes, \(bytes.count - offset) remain")
            }
        }

        mutating func skip(_ n: Int, what: String) throws(FenceError) {
            try need(n, what: what)
            offset += n
        }

        mutating func uint32(_ bigEndian: Bool) throws(FenceError) -> UInt32 {
            try need(4, what: "a count")
            let v = bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
            offset += 4
            return bigEndian ? UInt32(bigEndian: v) : UInt32(littleEndian: v)
        }

        mutating func double(_ bigEndian: Bool) throws(FenceError) -> Double {
            try need(8, what: "a coordinate")
            let v = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            offset += 8
            return Double(bitPattern: bigEndian ? UInt64(bigEndian: v) : UInt64(littleEndian: v))
        }

        /// A count, checked against what is left of the buffer at `unit` bytes per item at least,
        /// so no count can promise more than the buffer holds.
        mutating func count(_ bigEndian: Bool, unit: Int, what: String) throws(FenceError) -> Int {
            let at = offset
            let n = Int(try uint32(bigEndian))
            guard n <= (bytes.count - offset) / unit else {
                throw FenceError(
                    .malformedInput,
                    reason: "the WKB is truncated: \(n) \(what) announced at byte \(at), \(bytes.count - offset) bytes remain")
            }
            return n
        }

        mutating func header() throws(FenceError) -> Header {
            try need(5, what: "a geometry header")
            let order = bytes[offset]
            guard order <= 1 else {
                throw FenceError(.malformedInput, reason: "not WKB: byte order marker \(order) at byte \(offset) is neither 0 nor 1")
            }
            let at = offset
            offset += 1
            let bigEndian = order == 0
            let raw = try uint32(bigEndian)
            // PostGIS extended WKB: flag bits (Z, M, SRID, and 0x10000000 for a bounding box,
            // ignored); ISO WKB: thousands. What is left must be an ISO code (below 4000), as
            // PostGIS requires: GEOS's reader looks at the low 16 bits only, so a code with
            // higher bits could otherwise have other dimensions here than in GEOS, and the
            // checks below would walk other bytes than GEOS reads.
            var z = raw & 0x8000_0000 != 0
            var m = raw & 0x4000_0000 != 0
            let base = raw & 0x0FFF_FFFF
            guard base < 4000 else {
                throw FenceError(.malformedInput, reason: "not WKB: geometry type code \(base) at byte \(at) (WKB codes are below 4000)")
            }
            if raw & 0x2000_0000 != 0 { try skip(4, what: "an SRID") }
            switch base / 1000 {
            case 1: z = true
            case 2: m = true
            case 3: z = true; m = true
            default: break
            }
            return Header(bigEndian: bigEndian, type: base % 1000, dimensions: 2 + (z ? 1 : 0) + (m ? 1 : 0))
        }

        /// Walks one polygon's rings after its header. When `counting`, adds
        /// its positions to `positions`; otherwise, checks each ring's length
        /// and closure.
        /// - Returns: the number of rings.
        mutating func polygonRings(_ header: Header, polygon: Int?, counting: Bool, positions: inout Int) throws(FenceError) -> Int {
            let size = 8 * header.dimensions
            let rings = try count(header.bigEndian, unit: 4, what: "rings")
            for r in 0..<rings {
                let n = try count(header.bigEndian, unit: size, what: "positions")
                if counting {
                    positions += n
                    offset += n * size
                    continue
                }
                let where_ = (polygon.map { "polygon \($0) " } ?? "") + (r == 0 ? "exterior ring" : "hole \(r)")
                if n < 4 {
                    throw FenceError(.ringTooShort, reason: "\(where_) has \(n) positions; a ring needs at least 4")
                }
                let firstX = try double(header.bigEndian)
                let firstY = try double(header.bigEndian)
                offset += size - 16 + (n - 2) * size
                let lastX = try double(header.bigEndian)
                let lastY = try double(header.bigEndian)
                offset += size - 16
                let first = LonLat(lon: firstX, lat: firstY)
                let last = LonLat(lon: lastX, lat: lastY)
                if first != last {
                    throw FenceError(.ringNotClosed, reason: "\(where_) is not closed: it starts at \(first) and ends at \(last)")
                }
            }
            return rings
        }
    }
}
