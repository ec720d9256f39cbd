@testable import FenceEngine
import XCTest

/// The index + fast filters against the oracle (GEOS prepared covers / ellipsoidal distance on
/// every fence), over many seeds.
final class ContainmentOracleTests: XCTestCase {
    /// Random polygons with holes, multipolygons and circles; random points, points on every
    /// vertex and edge midpoint, points in holes.
    func testRandomFencesMatchOracleOverSeeds() throws {
        for seed in UInt64(1)...24 {
            var rng = TestRandom(mixing: seed)
            var fences: [Fence] = []
            for i in 0..<60 {
                let lon = rng.uniform(-10, 10)
                let lat = rng.uniform(40, 50)
                switch rng.next() % 3 {
                case 0:
                    fences.append(.circle(id: "c\(i)", lon: lon, lat: lat, radius: rng.uniform(500, 150_000)))
                case 1:
                    let p = Shapes.polygonWithHoles(&rng, lon: lon, lat: lat, radius: rng.uniform(0.2, 2))
                    fences.append(Fence(id: "p\(i)", group: "g\(i % 4)", shape: .polygons([p])))
                default:
                    let a = Shapes.polygonWithHoles(&rng, lon: lon, lat: lat, radius: 0.5)
                    let b = Shapes.polygonWithHoles(&rng, lon: lon + 1.5, lat: lat + 0.3, radius: 0.4)
                    fences.append(Fence(id: "m\(i)", shape: .polygons([a, b])))
                }
            }
            var store = FenceStore()
            let results = store.add(fences, threads: 2)
            XCTAssertEqual(results.filter { $0.error != nil }.count, 0, "seed \(seed): \(results.compactMap(\.error))")
            store.tree.checkInvariants()
            let oracle = Oracle(fences)

            var points: [LonLat] = (0..<400).map { _ in LonLat(lon: rng.uniform(-12, 14), lat: rng.uniform(38, 52)) }
            for f in fences {
                if case .polygons(let polygons) = f.shape {
                    points += Shapes.boundaryPoints(polygons).shuffled(using: &rng).prefix(12)
                    // The holes' centres are in holes; the star's centre is inside.
                    for p in polygons { for h in p.holes { points.append(centroid(h)) } }
                }
            }
            for (i, p) in points.enumerated() {
                XCTAssertEqual(store.ids(covering: p), oracle.ids(covering: p), "seed \(seed) point \(i) \(p)")
            }
            // The batch call agrees with the single call, on several thread counts.
            let single = points.map { store.fences(covering: $0) }
            for threads in [1, 2, 8] {
                let batch = store.covering(points, threads: threads)
                for i in points.indices { XCTAssertEqual(Array(batch[i]), single[i], "seed \(seed) threads \(threads)") }
            }
        }
    }

    /// Points exactly on vertices and on axis-parallel edges are covered; just outside them is not.
    func testBoundaryIsInside() throws {
        var store = FenceStore()
        let square = [(0.0, 0.0), (2, 0), (2, 2), (0, 2), (0, 0)].map { LonLat(lon: $0.0, lat: $0.1) }
        let hole = [(0.5, 0.5), (1.5, 0.5), (1.5, 1.5), (0.5, 1.5), (0.5, 0.5)].map { LonLat(lon: $0.0, lat: $0.1) }
        try store.add(.polygon(id: "sq", exterior: square, holes: [hole]))
        for p in square + hole { XCTAssertEqual(store.ids(covering: p), ["sq"], "\(p)") }
        for (lon, lat) in [(1.0, 0.0), (2.0, 1.0), (0.0, 1.3), (1.0, 0.5), (1.5, 1.0), (0.25, 0.25)] {
            XCTAssertEqual(store.ids(covering: LonLat(lon: lon, lat: lat)), ["sq"], "(\(lon), \(lat))")
        }
        for (lon, lat) in [(1.0, 1.0), (2.0000001, 1.0), (-1e-12, 1.0), (1.0, 0.6), (3, 3)] {
            XCTAssertEqual(store.ids(covering: LonLat(lon: lon, lat: lat)), [], "(\(lon), \(lat))")
        }
    }

    /// Points on diagonal edges, where the floating-point filter cannot decide, are decided by
    /// GEOS, and agree with the oracle.
    func testNearEdgePointsGoToGEOS() throws {
        var rng = TestRandom(mixing: 99)
        let triangle = [LonLat(lon: 0.1, lat: 0.3), LonLat(lon: 3.7, lat: 1.9), LonLat(lon: 1.3, lat: 4.1), LonLat(lon: 0.1, lat: 0.3)]
        let fence = Fence.polygon(id: "t", exterior: triangle)
        var store = FenceStore()
        try store.add(fence)
        let oracle = Oracle([fence])
        var points: [LonLat] = []
        for _ in 0..<500 {
            let t = rng.uniform(0, 1)
            points.append(LonLat(lon: 0.1 + t * 3.6, lat: 0.3 + t * 1.6))
        }
        let stats = store.probeStatistics(points)
        XCTAssertGreaterThan(stats.geosCallsPerPosition, 0.5, "points on a diagonal edge need GEOS")
        for p in points { XCTAssertEqual(store.ids(covering: p), oracle.ids(covering: p), "\(p)") }
    }

    /// Many overlapping fences, some in two far parts (two index boxes) and some cut at the
    /// antimeridian (found from both names of the line): each position's hits come ascending
    /// and once each, whatever order the index hands the candidates in, and are GEOS's.
    func testHitsComeAscendingAndOnce() throws {
        var rng = TestRandom(mixing: 4242)
        var fences: [Fence] = []
        func ring(_ pts: [(Double, Double)]) -> [LonLat] { pts.map { LonLat(lon: $0.0, lat: $0.1) } }
        for i in 0..<120 {
            let lat = rng.uniform(-5, 5)
            switch i % 4 {
            case 0:
                fences.append(.circle(id: "c\(i)", lon: rng.uniform(175, 185).remainder(dividingBy: 360), lat: lat, radius: rng.uniform(100_000, 900_000)))
            case 1:
                let west = rng.uniform(170, 178)
                let east = rng.uniform(-178, -170)
                let cut = [
                    Polygon(exterior: ring([(west, lat - 2), (180, lat - 2), (180, lat + 2), (west, lat + 2), (west, lat - 2)])),
                    Polygon(exterior: ring([(-180, lat - 2), (east, lat - 2), (east, lat + 2), (-180, lat + 2), (-180, lat - 2)])),
                ]
                fences.append(Fence(id: "a\(i)", shape: .polygons(cut)))
            case 2:
                // Two islands far apart: two boxes, both holding some of the points below.
                let a = Shapes.star(&rng, lon: rng.uniform(172, 176.5), lat: lat, radius: 3, vertices: 10)
                let b = Shapes.star(&rng, lon: rng.uniform(-176.5, -172), lat: lat, radius: 3, vertices: 14)
                fences.append(Fence(id: "i\(i)", shape: .polygons([Polygon(exterior: a), Polygon(exterior: b)])))
            default:
                // Up to a degree from the antimeridian, on either side, and not across it.
                let lon = rng.uniform(171, 179) + (rng.next() % 2 == 0 ? 0 : 10)
                let radius = rng.uniform(0.5, abs(180 - lon) - 0.01)
                fences.append(.polygon(id: "s\(i)", exterior: Shapes.star(&rng, lon: lon > 180 ? lon - 360 : lon, lat: lat, radius: radius, vertices: 16)))
            }
        }
        let (store, oracle) = loaded(fences)
        let points = antimeridianPoints(&rng, count: 300, halfWidth: 12, lat: 9, onLine: 60, lineLat: 9)
        var most = 0
        let batch = store.covering(points, threads: 2)
        for (k, p) in points.enumerated() {
            let handles = store.fences(covering: p)
            most = max(most, handles.count)
            XCTAssertTrue(zip(handles, handles.dropFirst()).allSatisfy { $0 < $1 }, "\(p): \(handles)")
            XCTAssertEqual(Array(batch[k]), handles, "\(p)")
            XCTAssertEqual(handles.map { store.id(of: $0) }.sorted(), oracle.ids(covering: p), "\(p)")
        }
        XCTAssertGreaterThan(most, 5)
    }

    /// Points with hundreds of candidates: the covering loop's candidate slab starts with room
    /// for 64 and must grow, on the first query and on the antimeridian's second one, without
    /// losing or repeating a fence.
    func testCrowdedPointsGrowTheCandidateSlab() throws {
        var rng = TestRandom(mixing: 77)
        var fences: [Fence] = []
        for i in 0..<160 {
            // Across the antimeridian: a box either side, both holding the points at +-180.
            let lon = rng.uniform(179.7, 180.3)
            fences.append(.circle(id: "c\(i)", lon: lon > 180 ? lon - 360 : lon, lat: rng.uniform(-0.1, 0.1), radius: rng.uniform(60_000, 90_000)))
        }
        for i in 0..<160 {
            let star = Shapes.star(&rng, lon: 20 + rng.uniform(-0.2, 0.2), lat: rng.uniform(-0.2, 0.2), radius: rng.uniform(1, 2), vertices: 16)
            fences.append(.polygon(id: "s\(i)", exterior: star))
        }
        let (store, oracle) = loaded(fences)
        var points = antimeridianPoints(&rng, count: 200, halfWidth: 0.4, lat: 0.5, onLine: 40, lineLat: 0.3)
        points += (0..<200).map { _ in LonLat(lon: rng.uniform(19, 21), lat: rng.uniform(-1, 1)) }
        var most = 0
        for threads in [1, 2] {
            let batch = store.covering(points, threads: threads)
            for (k, p) in points.enumerated() {
                let ids = batch[k].map { store.id(of: $0) }
                most = max(most, ids.count)
                XCTAssertTrue(zip(batch[k], batch[k].dropFirst()).allSatisfy { $0 < $1 }, "\(p): \(Array(batch[k]))")
                XCTAssertEqual(ids.sorted(), oracle.ids(covering: p), "\(p)")
            }
        }
        XCTAssertGreaterThan(most, 128)
    }

    /// A store holding all of `fences` (each must load) and the oracle over them.
    func loaded(_ fences: [Fence], file: StaticString = #filePath, line: UInt = #line) -> (FenceStore, Oracle) {
        var store = FenceStore()
        let results = store.add(fences, threads: 2)
        XCTAssertEqual(results.filter { $0.error != nil }.count, 0, "\(results.compactMap(\.error))", file: file, line: line)
        return (store, Oracle(fences))
    }

    /// `count` points up to `halfWidth` degrees either side of the antimeridian (named -180..180)
    /// and up to `lat` from the equator, then `onLine` points on it, named 180 or -180, up to
    /// `lineLat` from the equator.
    func antimeridianPoints(
        _ rng: inout TestRandom, count: Int, halfWidth: Double, lat: Double, onLine: Int, lineLat: Double
    ) -> [LonLat] {
        var points: [LonLat] = (0..<count).map { _ in
            let lon = rng.uniform(180 - halfWidth, 180 + halfWidth)
            return LonLat(lon: lon > 180 ? lon - 360 : lon, lat: rng.uniform(-lat, lat))
        }
        points += (0..<onLine).map { _ in LonLat(lon: rng.next() % 2 == 0 ? 180 : -180, lat: rng.uniform(-lineLat, lineLat)) }
        return points
    }

    func centroid(_ ring: [LonLat]) -> LonLat {
        let pts = ring.dropLast()
        return LonLat(lon: pts.map(\.lon).reduce(0, +) / Double(pts.count), lat: pts.map(\.lat).reduce(0, +) / Double(pts.count))
    }
}

/// Polygons large enough for an edge index agree with GEOS exactly, on vertices, edges, holes
/// and random points.
final class IndexedPolygonTests: XCTestCase {
    func testLargePolygonsMatchOracleOverSeeds() throws {
        for seed in UInt64(1)...20 {
            var rng = TestRandom(mixing: seed)
            var fences: [Fence] = []
            for i in 0..<12 {
                let lon = rng.uniform(0, 4)
                let lat = rng.uniform(0, 4)
                let exterior = Shapes.star(&rng, lon: lon, lat: lat, radius: 0.8, vertices: 70 + Int(rng.next() % 400))
                let hole = Shapes.star(&rng, lon: lon, lat: lat, radius: 0.3, vertices: 66 + Int(rng.next() % 100), inner: 0.9...1.0)
                fences.append(Fence(id: "big\(i)", shape: .polygons([Polygon(exterior: exterior, holes: i % 2 == 0 ? [hole] : [])])))
            }
            var store = FenceStore()
            XCTAssertTrue(store.add(fences).allSatisfy { $0.error == nil })
            XCTAssertTrue(store.allHandles().allSatisfy { store.slotHot[Int($0.rawValue)] & 3 == FlatGeometry.Kind.indexedPolygon.rawValue })
            let oracle = Oracle(fences)
            var points: [LonLat] = (0..<300).map { _ in LonLat(lon: rng.uniform(-1, 5), lat: rng.uniform(-1, 5)) }
            for f in fences {
                if case .polygons(let p) = f.shape { points += Shapes.boundaryPoints(p).shuffled(using: &rng).prefix(40) }
            }
            for p in points { XCTAssertEqual(store.ids(covering: p), oracle.ids(covering: p), "seed \(seed) \(p)") }
        }
    }

    /// Found by the `wkb` fuzz target: a polygon with coordinates near 1e-308 and the point
    /// (0, 0) just outside it. The orientation filter's product for the edge from
    /// (2.2e-308, 0) to (1.00000000003, 1.9e-306) underflowed to zero, so the point was taken as
    /// collinear with that edge and "on the boundary": every test that skips the index (the
    /// direct per-fence test, nearest-boundary's inside flag, a fence edit's re-check) called it
    /// covered while the index, whose box starts at 3.1e-322, did not. An underflowed product is
    /// now left to GEOS.
    func testUnderflowingOrientationIsLeftToGEOS() throws {
        XCTAssertEqual(Orientation.indexFilter(2.2250738585072014e-308, 0, 1.0000000000291038, 1.8690620411460492e-306, 0, 0), 2)
        // Exact zeros (a zero difference) and normal products are still decided.
        XCTAssertEqual(Orientation.indexFilter(0, 0, 1, 0, 0.5, 0), 0)
        XCTAssertEqual(Orientation.indexFilter(0, 0, 1, 0, 0.5, 1e-300), 1)
        let ring = [
            LonLat(lon: 2.2250738585072014e-308, lat: 0), LonLat(lon: 1.0000000000291038, lat: 1.8690620411460492e-306),
            LonLat(lon: 1.0000000005384209, lat: 3.03554e-319), LonLat(lon: 3.1e-322, lat: 1),
            LonLat(lon: 2.2250738585072014e-308, lat: 0),
        ]
        // Its own vertices and a point well inside are still covered, by every path.
        try assertOriginOutside(
            Fence(id: "tiny", shape: .polygons([Polygon(exterior: ring)])), covering: [ring[0], ring[3], LonLat(lon: 0.5, lat: 0.25)])
    }

    /// The fence loads; (0, 0) is outside it by the index, the direct test and the signed
    /// boundary distance; each of `inside` is covered by the index and the direct test.
    func assertOriginOutside(_ fence: Fence, covering inside: [LonLat], line: UInt = #line) throws {
        var store = FenceStore()
        XCTAssertNil(store.add([fence], threads: 1)[0].error, line: line)
        let handle = try XCTUnwrap(store.handle(id: fence.id), line: line)
        let origin = LonLat(lon: 0, lat: 0)
        XCTAssertEqual(store.ids(covering: origin), [], line: line)
        XCTAssertFalse(store.fence(handle, covers: origin), line: line)
        XCTAssertEqual(store.nearestBoundary(to: origin).distance.sign, .plus, line: line)  // negative inside
        for p in inside {
            XCTAssertEqual(store.ids(covering: p), [fence.id], "\(p)", line: line)
            XCTAssertTrue(store.fence(handle, covers: p), "\(p)", line: line)
        }
    }

    /// Found by the `wkb` fuzz target after the fix above: MakeValid's repair of a fuzzed
    /// MultiPolygon has a part whose box starts at x = 2.3e-318 and another part far away, so
    /// (0, 0) is inside the MultiPolygon's envelope but outside both parts' boxes. Our filter now
    /// leaves the point to GEOS, and GEOS's own filter underflows the same way and says
    /// "covered"; the index (per-part boxes) said not. A point outside every exterior ring's
    /// box is now outside without asking GEOS.
    func testPointOutsideEveryPartBoxIsOutsideWhateverGEOSSays() throws {
        let square = [
            LonLat(lon: -1, lat: -0.5), LonLat(lon: -0.5, lat: -0.5), LonLat(lon: -0.5, lat: -1), LonLat(lon: -1, lat: -1),
            LonLat(lon: -1, lat: -0.5),
        ]
        let shell = [
            LonLat(lon: 0.25, lat: 0.75), LonLat(lon: 0.25, lat: 0.7501545270708538), LonLat(lon: 1.0000000000000013, lat: 8.184537765754e-311),
            LonLat(lon: 2.266536e-318, lat: 0), LonLat(lon: 0.0002059512276981518, lat: 0.9997940487723018), LonLat(lon: 0.25, lat: 0.75),
        ]
        let hole = [LonLat(lon: 0.25, lat: 0.25), LonLat(lon: 0.75, lat: 0.25), LonLat(lon: 0.25, lat: 0.75), LonLat(lon: 0.25, lat: 0.25)]
        let fence = Fence(id: "repaired", shape: .polygons([Polygon(exterior: square), Polygon(exterior: shell, holes: [hole])]))
        try assertOriginOutside(fence, covering: [shell[3], square[0], LonLat(lon: 0.1, lat: 0.5)])
    }
}

/// The cell grid of large polygons (`FlatGeometry.insertCellGrid`): it decides most points
/// without counting, and where edges run along cell borders, points a few ulps either side
/// still agree with GEOS.
final class CellGridTests: XCTestCase {
    /// Where the grid sends a point: 0 exterior, 1 interior (pure cells), 2 and 3 mixed cells
    /// counted from an exterior or interior centre, 4 mixed cells counted by slab, 5 outside
    /// the box.
    func gridCode(_ store: FenceStore, _ handle: FenceHandle, _ p: LonLat) -> Int {
        store.geometry.withUnsafeBufferPointer { g in
            Int(RingLocator.gridCode(x: p.lon, y: p.lat, record: g.baseAddress! + store.geometryStart(Int(handle.rawValue))))
        }
    }

    func testGridDecidesMostPointsOfStarsAndAgreesWithOracle() throws {
        var codes = [0, 0, 0, 0, 0, 0]
        for seed in UInt64(1)...8 {
            var rng = TestRandom(mixing: 100 + seed)
            var fences: [Fence] = []
            for i in 0..<6 {
                let exterior = Shapes.star(&rng, lon: 2, lat: 2, radius: 1, vertices: 200 + Int(rng.next() % 800))
                let hole = Shapes.star(&rng, lon: 2, lat: 2, radius: 0.3, vertices: 80, inner: 0.9...1.0)
                fences.append(Fence(id: "s\(i)", shape: .polygons([Polygon(exterior: exterior, holes: i % 2 == 0 ? [hole] : [])])))
            }
            var store = FenceStore()
            XCTAssertTrue(store.add(fences).allSatisfy { $0.error == nil })
            let oracle = Oracle(fences)
            for _ in 0..<400 {
                let p = LonLat(lon: rng.uniform(0.5, 3.5), lat: rng.uniform(0.5, 3.5))
                for h in store.allHandles() { codes[gridCode(store, h, p)] += 1 }
                XCTAssertEqual(store.ids(covering: p), oracle.ids(covering: p), "seed \(seed) \(p)")
            }
        }
        let inBox = codes[0...4].reduce(0, +)
        // Both pure kinds occur, and together they decide a good share of the points in the box;
        // mixed cells almost all have a reference (centres of either kind).
        XCTAssertGreaterThan(codes[0], 0)
        XCTAssertGreaterThan(codes[1], 0)
        XCTAssertGreaterThan(codes[2], 0)
        XCTAssertGreaterThan(codes[3], 0)
        XCTAssertGreaterThan(Double(codes[0] + codes[1]) / Double(inBox), 0.3, "grid codes \(codes)")
        XCTAssertLessThan(Double(codes[4]) / Double(inBox), 0.02, "grid codes \(codes)")
    }

    /// A crenellated polygon whose vertical edges sit on (rounded) cell borders: points on,
    /// and 1, 2 and 4 ulps either side of, every edge and border agree with GEOS.
    func testEdgesOnCellBordersAgreeWithOracleToTheUlp() throws {
        // 2 + 2·teeth·2 positions; side = ceil(sqrt(n)) cells over [0, 64] x [0, 64].
        let teeth = 20
        let n = 4 * teeth + 3
        let side = FlatGeometry.gridSide(positions: n)
        let width = 64.0 / Double(side)
        var ring = [LonLat(lon: 0, lat: 0), LonLat(lon: 64, lat: 0)]
        // Teeth along the top, right to left, each wall on a cell border where one exists.
        var x = 64.0
        for t in 0..<(2 * teeth) {
            let next = 64 - Double(t + 1) * 64 / Double(2 * teeth)
            let high = t % 2 == 0 ? 64.0 : Double(side - 2) * width
            ring.append(LonLat(lon: x, lat: high))
            ring.append(LonLat(lon: next, lat: high))
            x = next
        }
        ring.append(LonLat(lon: 0, lat: 0))
        let fence = Fence(id: "crenel", shape: .polygons([Polygon(exterior: ring)]))
        var store = FenceStore()
        XCTAssertNil(store.add([fence]).first?.error)
        XCTAssertEqual(store.slotHot[0] & 3, FlatGeometry.Kind.indexedPolygon.rawValue)
        let oracle = Oracle([fence])
        var xs: [Double] = ring.map(\.lon) + (0...side).map { Double($0) * width }
        var ys: [Double] = ring.map(\.lat) + (0...side).map { Double($0) * width }
        for v in xs { for k in 1...4 where k != 3 { var a = v, b = v; for _ in 0..<k { a = a.nextUp; b = b.nextDown }; xs += [a, b] } }
        for v in ys { for k in 1...4 where k != 3 { var a = v, b = v; for _ in 0..<k { a = a.nextUp; b = b.nextDown }; ys += [a, b] } }
        var rng = TestRandom(mixing: 5)
        var checked = 0
        for px in Set(xs) where px >= -0.5 && px <= 64.5 {
            for _ in 0..<6 {
                let py = ys[Int(rng.next() % UInt64(ys.count))]
                let p = LonLat(lon: px, lat: max(-1, min(65, py)))
                XCTAssertEqual(store.ids(covering: p), oracle.ids(covering: p), "\(p)")
                checked += 1
            }
        }
        XCTAssertGreaterThan(checked, 500)
    }
}
