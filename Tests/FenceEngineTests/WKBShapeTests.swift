@testable import FenceEngine
import XCTest

/// A WKB writer for the tests: the obvious byte layout of the OGC standard.
struct WKBWriter {
    var bytes: [UInt8] = []
    var bigEndian = false
    /// Extra ordinates per position (1 for Z) and how to flag them.
    var zStyle: ZStyle = .none
    var srid: UInt32?

    enum ZStyle { case none, iso, extended }

    mutating func u32(_ v: UInt32) {
        let raw = bigEndian ? v.bigEndian : v.littleEndian
        withUnsafeBytes(of: raw) { bytes.append(contentsOf: $0) }
    }

    mutating func f64(_ v: Double) {
        let raw = bigEndian ? v.bitPattern.bigEndian : v.bitPattern.littleEndian
        withUnsafeBytes(of: raw) { bytes.append(contentsOf: $0) }
    }

    mutating func header(_ type: UInt32, top: Bool = true) {
        bytes.append(bigEndian ? 0 : 1)
        var t = type
        switch zStyle {
        case .none: break
        case .iso: t += 1000
        case .extended: t |= 0x8000_0000
        }
        if top, srid != nil { t |= 0x2000_0000 }
        u32(t)
        if top, let srid { u32(srid) }
    }

    mutating func position(_ p: LonLat) {
        f64(p.lon)
        f64(p.lat)
        if zStyle != .none { f64(42) }
    }

    mutating func polygonBody(_ polygon: Polygon) {
        u32(UInt32(polygon.rings.count))
        for ring in polygon.rings {
            u32(UInt32(ring.count))
            for p in ring { position(p) }
        }
    }

    /// A polygon's body (no header) with four ordinates per position (Z 42, M 43).
    static func zmBody(_ polygon: Polygon) -> [UInt8] {
        var w = WKBWriter()
        w.u32(UInt32(polygon.rings.count))
        for ring in polygon.rings {
            w.u32(UInt32(ring.count))
            for p in ring {
                w.f64(p.lon)
                w.f64(p.lat)
                w.f64(42)
                w.f64(43)
            }
        }
        return w.bytes
    }

    static func point(_ p: LonLat, style: WKBWriter = WKBWriter()) -> [UInt8] {
        var w = style
        w.header(1)
        w.position(p)
        return w.bytes
    }

    static func polygon(_ polygon: Polygon, style: WKBWriter = WKBWriter()) -> [UInt8] {
        var w = style
        w.header(3)
        w.polygonBody(polygon)
        return w.bytes
    }

    static func multiPolygon(_ polygons: [Polygon], style: WKBWriter = WKBWriter()) -> [UInt8] {
        var w = style
        w.header(6)
        w.u32(UInt32(polygons.count))
        for p in polygons {
            w.header(3, top: false)
            w.polygonBody(p)
        }
        return w.bytes
    }
}

final class WKBShapeTests: XCTestCase {
    let square = Polygon(exterior: [
        LonLat(lon: 0, lat: 0), LonLat(lon: 1, lat: 0), LonLat(lon: 1, lat: 1), LonLat(lon: 0, lat: 1), LonLat(lon: 0, lat: 0),
    ])

    func error(_ wkb: [UInt8], radius: Double? = nil, limits: FenceLimits = FenceLimits()) -> FenceError? {
        do {
            _ = try FenceShape(wkb: wkb, radius: radius, limits: limits)
            return nil
        } catch {
            return error
        }
    }

    /// Random polygons and MultiPolygons with holes, in every byte order and dimension style,
    /// come back from GEOS's WKB reader exactly as they were written.
    func testRoundTripOverSeeds() throws {
        let reader = WKBShapeReader()
        let styles: [WKBWriter] = [
            WKBWriter(), WKBWriter(bigEndian: true), WKBWriter(zStyle: .iso), WKBWriter(bigEndian: true, zStyle: .extended, srid: 4326),
        ]
        for seed in 1...200 {
            var rng = TestRandom(mixing: UInt64(seed))
            let count = 1 + Int(rng.next() % 3)
            let polygons = (0..<count).map { k in
                Shapes.polygonWithHoles(&rng, lon: rng.uniform(-170, 170) + 0 * Double(k), lat: rng.uniform(-80, 80), radius: rng.uniform(0.001, 1))
            }
            let style = styles[seed % styles.count]
            let wkb = count == 1 && seed % 2 == 0 ? WKBWriter.polygon(polygons[0], style: style) : WKBWriter.multiPolygon(polygons, style: style)
            XCTAssertEqual(try reader.shape(wkb, radius: nil), .polygons(polygons), "seed \(seed)")
        }
    }

    func testPointWithRadiusIsACircle() throws {
        let p = LonLat(lon: 13.4, lat: 52.5)
        XCTAssertEqual(try FenceShape(wkb: WKBWriter.point(p), radius: 250), .circle(center: p, radius: 250))
        XCTAssertEqual(try FenceShape(wkb: WKBWriter.point(p, style: WKBWriter(bigEndian: true, zStyle: .iso)), radius: 1), .circle(center: p, radius: 1))
        let e = error(WKBWriter.point(p))
        XCTAssertEqual(e?.kind, .invalidRadius)
        XCTAssertEqual(e?.reason, "a Point fence needs a radius in metres")
        XCTAssertEqual(error(WKBWriter.point(LonLat(lon: .nan, lat: .nan)), radius: 5)?.reason, "the geometry is empty")
    }

    /// Ring faults are found before GEOS reads anything, with the engine's own words.
    func testBrokenRingsAreReportedByRing() {
        let open = Polygon(exterior: [LonLat(lon: 0, lat: 0), LonLat(lon: 1, lat: 0), LonLat(lon: 1, lat: 1), LonLat(lon: 0, lat: 1)])
        var e = error(WKBWriter.polygon(open))
        XCTAssertEqual(e?.kind, .ringNotClosed)
        XCTAssertEqual(e?.reason, "exterior ring is not closed: it starts at (0.0, 0.0) and ends at (0.0, 1.0)")
        let short = Polygon(exterior: [LonLat(lon: 0, lat: 0), LonLat(lon: 1, lat: 0), LonLat(lon: 0, lat: 0)])
        e = error(WKBWriter.multiPolygon([square, short]))
        XCTAssertEqual(e?.kind, .ringTooShort)
        XCTAssertEqual(e?.reason, "polygon 2 exterior ring has 3 positions; a ring needs at least 4")
        var holed = square
        holed.holes = [[LonLat(lon: 0.2, lat: 0.2), LonLat(lon: 0.4, lat: 0.2), LonLat(lon: 0.4, lat: 0.4), LonLat(lon: 0.2, lat: 0.3)]]
        e = error(WKBWriter.polygon(holed, style: WKBWriter(bigEndian: true)))
        XCTAssertEqual(e?.reason, "hole 1 is not closed: it starts at (0.2, 0.2) and ends at (0.2, 0.3)")
        // The same faults in a Fence value give the same texts from the store.
        var store = FenceStore()
        let results = store.add([Fence(id: "open", shape: .polygons([open])), Fence(id: "short", shape: .polygons([square, short]))])
        XCTAssertEqual(results[0].error?.reason, "exterior ring is not closed: it starts at (0.0, 0.0) and ends at (0.0, 1.0)")
        XCTAssertEqual(results[1].error?.reason, "polygon 2 exterior ring has 3 positions; a ring needs at least 4")
    }

    func testOtherTypesAndDamagedBytesAreRefused() {
        var line = WKBWriter()
        line.header(2)
        line.u32(2)
        line.position(LonLat(lon: 0, lat: 0))
        line.position(LonLat(lon: 1, lat: 1))
        XCTAssertEqual(error(line.bytes)?.reason, "geometry type LineString cannot be a fence (Polygon, MultiPolygon or Point with radius)")
        let good = WKBWriter.polygon(square)
        XCTAssertEqual(
            error(Array(good.dropLast(8)))?.reason, "the WKB is truncated: 5 positions announced at byte 9, 72 bytes remain")
        XCTAssertEqual(error([7, 1, 0, 0, 0])?.reason, "not WKB: byte order marker 7 at byte 0 is neither 0 nor 1")
        XCTAssertEqual(error([])?.reason, "the WKB is truncated: a geometry header at byte 0 needs 5 bytes, 0 remain")
        // A count far beyond the buffer is refused before anything is allocated for it.
        var huge = WKBWriter()
        huge.header(3)
        huge.u32(1)
        huge.u32(UInt32.max)
        XCTAssertEqual(error(huge.bytes)?.kind, .malformedInput)
    }

    /// Found by the `wkb` fuzz target: a type code with bits above the ISO range (a MultiPolygon
    /// member coded 0xD6D60003) was read as a Polygon, since only the code modulo 1000 and the
    /// thousands were looked at. GEOS looks at the low 16 bits, so a code such as 0x007D0000 +
    /// 1003 was a 2D Polygon to the header walk and a 3D one to GEOS: the ring checks walked
    /// other bytes than GEOS read. Codes of 4000 and above are refused, as PostGIS refuses them;
    /// the flag bits, the bounding-box one included, still read.
    func testTypeCodesOutsideTheISORangeAreRefused() throws {
        // A 3D square written with z = 0: its bytes pass the 2D walk too (the ninth and tenth
        // doubles, read as the last 2D position, are the third z and the fourth x: 0, 0).
        var threeD = WKBWriter()
        threeD.u32(1)
        threeD.u32(5)
        for p in square.exterior {
            threeD.f64(p.lon)
            threeD.f64(p.lat)
            threeD.f64(0)
        }
        for code: UInt32 in [0x007D_0000 + 1003, 7003, 4003, 0x06D6_0003 | 0xD000_0000] {
            var w = WKBWriter()
            w.bytes.append(1)
            w.u32(code)
            let e = error(w.bytes + threeD.bytes)
            XCTAssertEqual(e?.kind, .malformedInput, "code \(code)")
            XCTAssertEqual(e?.reason, "not WKB: geometry type code \(code & 0x0FFF_FFFF) at byte 0 (WKB codes are below 4000)")
        }
        // Inside a MultiPolygon the member's offset is named.
        var multi = WKBWriter()
        multi.header(6)
        multi.u32(1)
        multi.bytes.append(1)
        multi.u32(7003)
        XCTAssertEqual(error(multi.bytes + threeD.bytes)?.reason, "not WKB: geometry type code 7003 at byte 9 (WKB codes are below 4000)")
        // ISO 3003 (ZM), and PostGIS flags with the bounding-box bit, still read.
        var zm = WKBWriter()
        zm.bytes.append(1)
        zm.u32(3003)
        zm.bytes += WKBWriter.zmBody(square)
        XCTAssertEqual(try FenceShape(wkb: zm.bytes), .polygons([square]))
        var flagged = WKBWriter()
        flagged.bytes.append(1)
        flagged.u32(0x9000_0003)  // Z and the bounding-box flag
        XCTAssertEqual(try FenceShape(wkb: flagged.bytes + threeD.bytes), .polygons([square]))
    }

    /// The limits hold before GEOS builds the geometry: ten million positions and a million
    /// polygons are refused from their headers.
    func testLimitsAreCheckedFromTheHeaders() {
        var limits = FenceLimits()
        limits.maxPositions = 100
        let ring = (0..<200).map { LonLat(lon: Double($0 % 7), lat: Double($0 / 7)) }
        XCTAssertEqual(
            error(WKBWriter.polygon(Polygon(exterior: ring + [ring[0]])), limits: limits)?.reason,
            "201 positions exceed the limit of 100")
        // A ten-million-vertex polygon with the default limits: 160 MB of WKB, refused from the
        // counts alone.
        var big = WKBWriter()
        big.header(3)
        big.u32(1)
        big.u32(10_000_000)
        big.bytes.append(contentsOf: [UInt8](repeating: 0, count: 160_000_000))
        let e = error(big.bytes)
        XCTAssertEqual(e?.kind, .limitExceeded)
        XCTAssertEqual(e?.reason, "10000000 positions exceed the limit of 1000000")
        // A million-member MultiPolygon: the count alone decides.
        var multi = WKBWriter()
        multi.header(6)
        multi.u32(1_000_000)
        for _ in 0..<1_000_000 {
            multi.header(3, top: false)
            multi.u32(0)
        }
        XCTAssertEqual(error(multi.bytes)?.reason, "1000000 polygons exceed the limit of 100000")
    }
}
