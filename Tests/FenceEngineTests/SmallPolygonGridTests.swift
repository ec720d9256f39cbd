@testable import FenceEngine
import XCTest

/// The small grid of polygons of up to 64 positions (`SmallPolygonGrid`): it gives the answer of
/// the plain ray count (`RingLocator.locate`) at every point, and GEOS's wherever a fence is
/// asked; points on edges, vertices, cell borders and the box's sides, and 1 to 4 ulps either
/// side of them, included.
final class SmallPolygonGridTests: XCTestCase {
    /// The record of a stored fence.
    func withRecord<T>(_ store: FenceStore, _ id: String, _ body: (UnsafePointer<Double>) -> T) -> T {
        let slot = Int(store.handle(id: id)!.rawValue)
        XCTAssertEqual(store.slotHot[slot] & 3, FlatGeometry.Kind.polygon.rawValue)
        return store.geometry.withUnsafeBufferPointer { body($0.baseAddress! + store.geometryStart(slot)) }
    }

    /// The grid's header: minX, minY, scaleX, scaleY.
    func header(_ record: UnsafePointer<Double>) -> (minX: Double, minY: Double, scaleX: Double, scaleY: Double) {
        let h = record + FlatGeometry.coordinatesEnd(of: record)
        return (h[0], h[1], h[2], h[3])
    }

    /// Points that probe the grid of a record: random ones in and around the box, every vertex
    /// and edge midpoint, and the cell borders and box sides crossed with vertex coordinates,
    /// each with neighbours a few ulps away.
    func probePoints(_ record: UnsafePointer<Double>, _ polygons: [Polygon], _ rng: inout TestRandom) -> [LonLat] {
        let h = header(record)
        var xs = polygons.flatMap { $0.rings.flatMap { $0.map(\.lon) } }
        var ys = polygons.flatMap { $0.rings.flatMap { $0.map(\.lat) } }
        if h.scaleX > 0 { xs += (0...SmallPolygonGrid.columns).map { h.minX + Double($0) / h.scaleX } }
        if h.scaleY > 0 { ys += (0...SmallPolygonGrid.rows).map { h.minY + Double($0) / h.scaleY } }
        let nearX = xs.flatMap(ulpsAround)
        let nearY = ys.flatMap(ulpsAround)
        let (lo, hi) = (xs.min()!, xs.max()!)
        let (bottom, top) = (ys.min()!, ys.max()!)
        var points: [LonLat] = (0..<200).map { _ in
            LonLat(lon: rng.uniform(lo - 0.1 * (hi - lo), hi + 0.1 * (hi - lo)), lat: rng.uniform(bottom - 0.1 * (top - bottom), top + 0.1 * (top - bottom)))
        }
        points += Shapes.boundaryPoints(polygons)
        for _ in 0..<300 {
            points.append(LonLat(lon: nearX[Int(rng.next() % UInt64(nearX.count))], lat: nearY[Int(rng.next() % UInt64(nearY.count))]))
            points.append(LonLat(lon: nearX[Int(rng.next() % UInt64(nearX.count))], lat: rng.uniform(bottom, top)))
            points.append(LonLat(lon: rng.uniform(lo, hi), lat: nearY[Int(rng.next() % UInt64(nearY.count))]))
        }
        return points.filter(\.isValidWGS84Range)
    }

    /// Stores each fence and checks the grid against the plain count and the store against
    /// GEOS at every probe point; returns how many grid answers came from a pure cell.
    @discardableResult
    func check(_ fences: [Fence], _ rng: inout TestRandom, _ label: String, file: StaticString = #filePath, line: UInt = #line) -> (pure: Int, all: Int) {
        var store = FenceStore()
        let results = store.add(fences, threads: 1)
        XCTAssertTrue(results.allSatisfy { $0.error == nil }, "\(label): \(results.compactMap(\.error))", file: file, line: line)
        let oracle = Oracle(fences)
        var pure = 0
        var all = 0
        for f in fences {
            guard case .polygons(let polygons) = f.shape, let handle = store.handle(id: f.id) else { continue }
            let points = withRecord(store, f.id) { probePoints($0, polygons, &rng) }
            for p in points {
                let (grid, plain) = withRecord(store, f.id) { r in
                    (SmallPolygonGrid.locate(x: p.lon, y: p.lat, record: r), RingLocator.locate(x: p.lon, y: p.lat, record: r))
                }
                all += 1
                if grid != plain {
                    // Only a certain answer where the count was uncertain may differ, and it must be GEOS's.
                    XCTAssertEqual(plain, .uncertain, "\(label) \(f.id) \(p): grid \(grid), count \(plain)", file: file, line: line)
                } else if plain == .interior || plain == .exterior {
                    // Counted or not, the same; tally how often no count was needed.
                    let counted = withRecord(store, f.id) { r in gridCell(r, p) == 2 }
                    if !counted { pure += 1 }
                }
                let covered = store.fence(handle, covers: p)
                XCTAssertEqual(covered, oracle.ids(covering: p).contains(f.id), "\(label) \(f.id) \(p)", file: file, line: line)
            }
        }
        return (pure, all)
    }

    /// The code of the cell a point maps to (0 exterior, 1 interior, 2 mixed), or 3 outside.
    func gridCell(_ record: UnsafePointer<Double>, _ p: LonLat) -> Int {
        let n = FlatGeometry.positionCount(of: record)
        let h = header(record)
        let u = (p.lon - h.minX) * h.scaleX
        let v = (p.lat - h.minY) * h.scaleY
        guard u >= 0 && v >= 0 && u <= Double(SmallPolygonGrid.columns) + 1e-7 && v <= Double(SmallPolygonGrid.rows) + 1e-7 else { return 3 }
        let cell = min(Int(v), SmallPolygonGrid.rows - 1) * SmallPolygonGrid.columns + min(Int(u), SmallPolygonGrid.columns - 1)
        let masks = UnsafeRawPointer(record + FlatGeometry.coordinatesEnd(of: record) + SmallPolygonGrid.headerCount)
        let codes = masks + SmallPolygonGrid.rows * SmallPolygonGrid.maskBytes(positions: n)
        return Int(codes.load(fromByteOffset: cell / 4, as: UInt8.self) >> UInt8(2 * (cell % 4)) & 3)
    }

    /// Stars of 4 to 32 vertices (every mask width), some with holes, and MultiPolygons, over
    /// many seeds.
    func testRandomSmallPolygonsMatchCountAndGEOS() throws {
        var pure = 0
        var all = 0
        for seed in UInt64(1)...30 {
            var rng = TestRandom(mixing: 7000 + seed)
            var fences: [Fence] = []
            for i in 0..<8 {
                let lon = rng.uniform(-20, 20)
                let lat = rng.uniform(-60, 60)
                let radius = rng.uniform(0.001, 3)
                switch i % 4 {
                case 0:
                    let ring = Shapes.star(&rng, lon: lon, lat: lat, radius: radius, vertices: 4 + Int(rng.next() % 29))
                    fences.append(.polygon(id: "s\(i)", exterior: ring))
                case 1:
                    fences.append(Fence(id: "h\(i)", shape: .polygons([Shapes.polygonWithHoles(&rng, lon: lon, lat: lat, radius: radius)])))
                case 2:
                    let a = Shapes.star(&rng, lon: lon, lat: lat, radius: radius, vertices: 4 + Int(rng.next() % 12))
                    let b = Shapes.star(&rng, lon: lon + 3 * radius, lat: lat + radius, radius: radius / 2, vertices: 4 + Int(rng.next() % 12))
                    fences.append(Fence(id: "m\(i)", shape: .polygons([Polygon(exterior: a), Polygon(exterior: b)])))
                default:
                    // The benchmark's shape: 16 vertices, stretched in longitude.
                    let ring = Shapes.star(&rng, lon: lon, lat: lat, radius: radius, vertices: 16).map {
                        LonLat(lon: lon + ($0.lon - lon) * 1.4, lat: $0.lat)
                    }
                    fences.append(.polygon(id: "b\(i)", exterior: ring))
                }
            }
            let counts = check(fences, &rng, "seed \(seed)")
            pure += counts.pure
            all += counts.all
        }
        // The grid answers a good share without counting, even with the points crowded onto edges.
        XCTAssertGreaterThan(Double(pure) / Double(all), 0.2, "\(pure) of \(all)")
    }

    /// The benchmark's 16-vertex stars: most random points in the box need no count.
    func testGridDecidesMostPointsOfSmallStars() throws {
        var rng = TestRandom(mixing: 11)
        var store = FenceStore()
        var fences: [Fence] = []
        for i in 0..<50 {
            let ring = Shapes.star(&rng, lon: 5, lat: 45, radius: 0.02, vertices: 16).map { LonLat(lon: 5 + ($0.lon - 5) * 1.4, lat: $0.lat) }
            fences.append(.polygon(id: "s\(i)", exterior: ring))
        }
        XCTAssertTrue(store.add(fences, threads: 1).allSatisfy { $0.error == nil })
        var codes = [0, 0, 0, 0]
        for f in fences {
            guard case .polygons(let p) = f.shape else { continue }
            let box = (p[0].exterior.map(\.lon).min()!, p[0].exterior.map(\.lon).max()!, p[0].exterior.map(\.lat).min()!, p[0].exterior.map(\.lat).max()!)
            for _ in 0..<200 {
                let q = LonLat(lon: rng.uniform(box.0, box.1), lat: rng.uniform(box.2, box.3))
                codes[withRecord(store, f.id) { gridCell($0, q) }] += 1
            }
        }
        XCTAssertEqual(codes[3], 0)
        XCTAssertGreaterThan(codes[0], 0)
        XCTAssertGreaterThan(codes[1], 0)
        XCTAssertGreaterThan(Double(codes[0] + codes[1]) / Double(codes[0] + codes[1] + codes[2]), 0.45, "codes \(codes)")
    }

    /// Axis-parallel walls on cell borders: a staircase whose steps sit exactly on the grid's
    /// borders (a box of 16 x 8 degrees), with a hole whose sides are borders too.
    func testWallsOnCellBordersMatchToTheUlp() throws {
        var stairs: [LonLat] = [LonLat(lon: 0, lat: 0), LonLat(lon: 16, lat: 0)]
        for s in 0..<8 {
            stairs.append(LonLat(lon: Double(16 - 2 * s), lat: Double(s + 1)))
            stairs.append(LonLat(lon: Double(14 - 2 * s), lat: Double(s + 1)))
        }
        stairs[stairs.count - 1] = LonLat(lon: 0, lat: 8)
        stairs.append(LonLat(lon: 0, lat: 0))
        let hole = [(1.0, 1.0), (1, 3), (3, 3), (3, 1), (1, 1)].map { LonLat(lon: $0.0, lat: $0.1) }
        let square = [(20.0, 0.0), (21, 0), (21, 1), (20, 1), (20, 0)].map { LonLat(lon: $0.0, lat: $0.1) }
        var rng = TestRandom(mixing: 3)
        check(
            [
                Fence(id: "stairs", shape: .polygons([Polygon(exterior: stairs, holes: [hole])])),
                Fence(id: "two", shape: .polygons([Polygon(exterior: stairs), Polygon(exterior: square)])),
            ], &rng, "stairs")
    }

    /// Fences cut at the antimeridian (two parts at either end of the longitudes, so one grid
    /// over almost the whole width), near the poles, and tiny and huge ones.
    func testCutTinyAndHugeFences() throws {
        func ring(_ pts: [(Double, Double)]) -> [LonLat] { pts.map { LonLat(lon: $0.0, lat: $0.1) } }
        var rng = TestRandom(mixing: 17)
        let west = Polygon(exterior: ring([(170, -20), (180, -20), (180, -10), (175, -12), (170, -10), (170, -20)]))
        let east = Polygon(exterior: ring([(-180, -20), (-170, -20), (-172, -15), (-170, -10), (-180, -10), (-180, -20)]))
        let tiny = Shapes.star(&rng, lon: 1e-9, lat: 1e-9, radius: 1e-12, vertices: 12)
        let huge = Shapes.star(&rng, lon: 0, lat: 0, radius: 89, vertices: 20)
        let polar = ring([(-180, 80), (180, 80), (180, 90), (0, 85), (-180, 90), (-180, 80)])
        check(
            [
                Fence(id: "cut", shape: .polygons([west, east])), .polygon(id: "tiny", exterior: tiny), .polygon(id: "huge", exterior: huge),
                .polygon(id: "polar", exterior: polar),
            ], &rng, "cut")
    }

    /// A box narrower than `minimumExtent` gets an all-mixed grid and still answers exactly.
    func testSubnormalWidthFallsBackToCounting() throws {
        let ring = [LonLat(lon: 0, lat: 0), LonLat(lon: 1e-300, lat: 0.5), LonLat(lon: 0, lat: 1), LonLat(lon: 0, lat: 0)]
        var store = FenceStore()
        let added = store.add([.polygon(id: "thin", exterior: ring)], threads: 1)
        XCTAssertNil(added[0].error)
        let handle = try XCTUnwrap(store.handle(id: "thin"))
        XCTAssertEqual(withRecord(store, "thin") { header($0).scaleX }, 0)
        let oracle = Oracle([.polygon(id: "thin", exterior: ring)])
        for p in [LonLat(lon: 0, lat: 0.5), LonLat(lon: 5e-301, lat: 0.5), LonLat(lon: 1e-300, lat: 0.5), LonLat(lon: 2e-300, lat: 0.5), LonLat(lon: -1e-300, lat: 0.5), LonLat(lon: 0, lat: 1.5)] {
            XCTAssertEqual(store.fence(handle, covers: p), oracle.ids(covering: p) == ["thin"], "\(p)")
        }
    }

    /// Records of 17, 18, 33, 34 and 64 positions: each mask width and its ends.
    func testEveryMaskWidth() throws {
        var rng = TestRandom(mixing: 23)
        var fences: [Fence] = []
        for n in [16, 17, 32, 33, 63] {
            fences.append(.polygon(id: "n\(n)", exterior: Shapes.star(&rng, lon: Double(n), lat: 10, radius: 0.4, vertices: n)))
        }
        check(fences, &rng, "widths")
        var store = FenceStore()
        XCTAssertTrue(store.add(fences, threads: 1).allSatisfy { $0.error == nil })
        for (n, w) in [(16, 2), (17, 4), (32, 4), (33, 8), (63, 8)] {
            withRecord(store, "n\(n)") { r in XCTAssertEqual(SmallPolygonGrid.maskBytes(positions: Int(r[1])), w) }
        }
    }
}
