import Foundation
import SpatialIndex
import XCTest

@testable import FenceEngine

/// The boxes over a large polygon's edges (`EdgeTree`) that distance queries search instead of
/// scanning every edge: the layout holds every edge once under boxes that hold it, and the
/// search answers exactly as the scan does.
final class EdgeTreeTests: XCTestCase {
    /// Every `steps`-th point along each edge added: a ring of many short edges, as real
    /// outlines are.
    static func densified(_ ring: [LonLat], steps: Int) -> [LonLat] {
        var out: [LonLat] = []
        for i in 0..<(ring.count - 1) {
            let (a, b) = (ring[i], ring[i + 1])
            for k in 0..<steps {
                let t = Double(k) / Double(steps)
                out.append(LonLat(lon: a.lon + t * (b.lon - a.lon), lat: a.lat + t * (b.lat - a.lat)))
            }
        }
        out.append(ring[ring.count - 1])
        return out
    }

    /// Polygons of every kind the tree meets: stars of 65 to 3,000 positions with and without
    /// holes, a MultiPolygon of islands, an antimeridian cut (edges on the line, some
    /// covered by the other side and some not), a polar cap written with its run along the
    /// pole, a wedge from the pole.
    static func fences(_ rng: inout TestRandom, seed: Int) -> [(name: String, polygons: [Polygon])] {
        let lon = rng.uniform(-150, 150)
        let lat = rng.uniform(-70, 70)
        let n = [65, 100, 257, 1000, 3000][seed % 5]
        let radius = rng.uniform(0.01, 3)
        var out: [(String, [Polygon])] = []
        let star = Shapes.star(&rng, lon: lon, lat: lat, radius: radius, vertices: n, inner: 0.6...1.0)
        out.append(("star", [Polygon(exterior: star)]))
        let hole = Shapes.star(&rng, lon: lon, lat: lat, radius: radius * 0.4, vertices: 3 + n / 4, inner: 0.9...1.0)
        out.append(("holed", [Polygon(exterior: star, holes: [hole])]))
        var islands: [Polygon] = []
        for k in 0..<4 {
            let ring = Shapes.star(&rng, lon: lon + 3 * Double(k) * radius, lat: lat, radius: radius, vertices: 8 + k * 10, inner: 0.7...1.0)
            islands.append(Polygon(exterior: densified(ring, steps: 2 + k)))
        }
        out.append(("islands", islands))
        func ring(_ points: [(Double, Double)], steps: Int) -> [LonLat] {
            densified(points.map { LonLat(lon: $0.0, lat: $0.1) }, steps: steps)
        }
        let s = 4 + seed % 7
        // 170E..190E x 10S..10N with a notch, cut at 180; the west part covers only part of
        // the east part's edges on the line.
        out.append((
            "cut",
            [
                Polygon(exterior: ring([(170, -10), (180, -10), (180, -2), (178, -2), (178, 2), (180, 2), (180, 10), (170, 10), (170, -10)], steps: s)),
                Polygon(exterior: ring([(-180, -6), (-170, -6), (-170, 10), (-180, 10), (-180, 2), (-179, 2), (-179, -2), (-180, -2), (-180, -6)], steps: s)),
            ]
        ))
        // A cap south of 70S, cut at 180, with its run along the pole.
        out.append(("cap", [Polygon(exterior: ring([(-180, -90), (180, -90), (180, -70), (90, -72), (0, -70), (-90, -74), (-180, -70), (-180, -90)], steps: 3 * s))]))
        // A wedge between two meridians from the south pole: its meridians are boundary
        // right to the pole, its run along the pole is not.
        let w = Double(seed % 9) * 40 - 180
        out.append(("wedge", [Polygon(exterior: ring([(w, -90), (w + 30, -90), (w + 30, -60), (w, -60), (w, -90)], steps: 5 * s))]))
        return out
    }

    func testEveryEdgeIsInOneLeafUnderBoxesThatHoldIt() throws {
        for seed in 0..<30 {
            var rng = TestRandom(mixing: UInt64(7100 + seed))
            for (name, polygons) in Self.fences(&rng, seed: seed) {
                var store = FenceStore()
                try store.add(Fence(id: name, shape: .polygons(polygons)))
                store.geometry.withUnsafeBufferPointer { g in
                    let record = g.baseAddress! + store.geometryStart(0)
                    let (rings, start) = FlatGeometry.rings(of: record)
                    let n = rings.reduce(0) { $0 + $1.count }
                    guard n > FlatGeometry.indexThreshold else { return }
                    let tree = EdgeTree.View(record: record)
                    let ends = EdgeTree.RingEnds(record)
                    XCTAssertEqual(ends.total, n)
                    var seen = [Int](repeating: 0, count: n)
                    // From the top down: each node once, each box within its parent's.
                    var stack: [(node: Int, parent: Box?)] = []
                    tree.forEachTop { stack.append(($0, nil)) }
                    XCTAssertLessThanOrEqual(stack.count, EdgeTree.fanout)
                    var leaves = 0
                    while let (node, parent) = stack.popLast() {
                        let box = tree.box(node)
                        if let parent {
                            XCTAssert(parent.minX <= box.minX && parent.minY <= box.minY && box.maxX <= parent.maxX && box.maxY <= parent.maxY)
                        }
                        if let children = tree.children(of: node) {
                            for child in children { stack.append((child, box)) }
                            continue
                        }
                        leaves += 1
                        EdgeTree.forEachEdge(leaf: tree.locate(node).index, rings: ends) { i in
                            seen[i] += 1
                            for v in [i, i + 1] {
                                let (x, y) = (record[start + 2 * v], record[start + 2 * v + 1])
                                XCTAssert(box.minX <= x && x <= box.maxX && box.minY <= y && y <= box.maxY, "\(name) seed \(seed) edge \(i)")
                            }
                        }
                    }
                    XCTAssertEqual(leaves, tree.count(level: 0))
                    // Each edge once; a ring's last position starts none.
                    var seams: [Int32] = []
                    var at = 0
                    for ring in rings {
                        for i in at..<(at + ring.count) {
                            XCTAssertEqual(seen[i], i == at + ring.count - 1 ? 0 : 1, "\(name) seed \(seed) position \(i)")
                            if i < at + ring.count - 1, AntimeridianSeam.isOnLine(record[start + 2 * i], record[start + 2 * i + 2]) {
                                seams.append(Int32(i))
                            }
                        }
                        at += ring.count
                    }
                    XCTAssertEqual(tree.seams, seams.map(Int.init), "\(name) seed \(seed)")
                }
            }
        }
    }

    /// The search through the tree gives what the scan of every edge gives, for the nearest
    /// (exact) and for hysteresis margins (screened), with and without a cutoff: positions
    /// near edges, inside holes, far away, near the poles and beside the antimeridian cut.
    func testTheTreeSearchAnswersAsTheScan() throws {
        var checked = 0
        var opened = 0
        for seed in 0..<15 {
            var rng = TestRandom(mixing: UInt64(7200 + seed))
            for (name, polygons) in Self.fences(&rng, seed: seed) {
                var store = FenceStore()
                try store.add(Fence(id: name, shape: .polygons(polygons)))
                let points = Shapes.boundaryPoints(polygons)
                store.geometry.withUnsafeBufferPointer { g in
                    let record = g.baseAddress! + store.geometryStart(0)
                    guard FlatGeometry.rings(of: record).rings.reduce(0, { $0 + $1.count }) > FlatGeometry.indexThreshold else { return }
                    let tree = EdgeTree.View(record: record)
                    // Far from a star of thousands of edges every edge within the
                    // ellipsoid's band is measured, both ways (slow in a debug build): far
                    // positions for a third of the stars.
                    let far = name == "star" || name == "holed" ? seed % 3 == 0 : true
                    for k in 0..<30 where far || k % 5 == 1 || k % 5 == 2 {
                        var p: LonLat
                        switch k % 5 {
                        case 0: p = LonLat(lon: rng.uniform(-180, 180), lat: rng.uniform(-90, 90))
                        case 1, 2:
                            // Beside the boundary, metres to kilometres off.
                            let b = points[Int(rng.next() % UInt64(points.count))]
                            let off = [1e-5, 1e-3, 0.05][k % 3]
                            p = LonLat(lon: b.lon + rng.uniform(-off, off), lat: b.lat + rng.uniform(-off, off))
                        case 3: p = LonLat(lon: rng.uniform(0, 1) < 0.5 ? rng.uniform(179, 180) : rng.uniform(-180, -179), lat: rng.uniform(-12, 12))
                        default: p = LonLat(lon: rng.uniform(-180, 180), lat: rng.uniform(-90, -68))
                        }
                        p = LonLat(lon: min(180, max(-180, p.lon)), lat: min(90, max(-90, p.lat)))
                        for exact in [true, false] {
                            let want = PolygonDistance.boundary(record, p, exact: exact)
                            let got = PolygonDistance.boundary(record, p, exact: exact, tree: tree)
                            XCTAssertEqual(got, want, "\(name) seed \(seed) \(p) exact \(exact)")
                            checked += 1
                            guard exact else { continue }
                            // Another fence already this near: the same answer when this one
                            // is nearer, else any value not nearer (the caller takes only a
                            // nearer one).
                            let cutoff = want * [0.5, 0.999, 1.001, 2][k % 4]
                            let cut = PolygonDistance.boundary(record, p, exact: true, cutoff: cutoff, tree: tree)
                            if want < cutoff {
                                XCTAssertEqual(cut, want, "\(name) seed \(seed) \(p) cutoff \(cutoff)")
                            } else {
                                XCTAssertGreaterThanOrEqual(cut, cutoff, "\(name) seed \(seed) \(p) cutoff \(cutoff)")
                                opened += 1
                            }
                        }
                    }
                }
            }
        }
        XCTAssertGreaterThan(checked, 2_500)
        XCTAssertGreaterThan(opened, 300)
    }

    /// A real edge on the antimeridian (nothing across covers it) 99.7 km off and a hole
    /// 99.3 km off to the north-east at latitude 74, where the projection overstates that way
    /// by about 1%: the walk's far stop (beyond 100 km) judged before the edge on the line
    /// counted, shut the hole's box, and the answer was the line's 99,675 m (a review; the
    /// scan, with no far stop, was right). The geodesic to the hole is 99,278.105 m
    /// (geographiclib).
    func testAnEdgeOnTheAntimeridianCountsBeforeTheFarStop() throws {
        var shell = [LonLat(lon: 170, lat: 73)]
        for k in 0...44 { shell.append(LonLat(lon: 180, lat: 73 + 2.5 * Double(k) / 44)) }
        shell += [LonLat(lon: 170, lat: 75.5), LonLat(lon: 170, lat: 73)]
        let hole = (0...64).map { k -> LonLat in
            let a = Double(k % 64) / 64 * 2 * .pi + .pi / 4
            return LonLat(lon: 179.47 + 0.0002 * cos(a), lat: 74.5 + 0.0002 * sin(a))
        }
        var store = FenceStore()
        try store.add(.polygon(id: "seamfar", exterior: shell, holes: [hole]))
        let p = LonLat(lon: 176.76, lat: 74.0)
        let found = store.nearestBoundary(to: p)
        XCTAssertEqual(found.distance, -99_278.105, accuracy: 0.01)
        store.geometry.withUnsafeBufferPointer { g in
            let record = g.baseAddress! + store.geometryStart(0)
            let scan = PolygonDistance.boundary(record, p, exact: true)
            XCTAssertEqual(PolygonDistance.boundary(record, p, exact: true, tree: EdgeTree.View(record: record)), scan)
        }
    }

    /// What the tree is for: a position beside a long outline opens a few boxes, not every
    /// edge. Counted, not timed: the screened search reads far fewer edges than the ring has.
    func testASearchBesideALongOutlineReadsFewEdges() throws {
        var rng = TestRandom(mixing: 7300)
        let ring = Self.densified(Shapes.star(&rng, lon: 10, lat: 45, radius: 2, vertices: 200, inner: 0.8...1.0), steps: 100)
        var store = FenceStore()
        try store.add(.polygon(id: "long", exterior: ring))
        store.geometry.withUnsafeBufferPointer { g in
            let record = g.baseAddress! + store.geometryStart(0)
            let tree = EdgeTree.View(record: record)
            let ends = EdgeTree.RingEnds(record)
            // Leaves whose box is within 2 km of a position 1 km off the outline.
            let p = LonLat(lon: ring[5_000].lon + 0.01, lat: ring[5_000].lat)
            let (kx, ky) = PolygonDistance.scales(lat: p.lat)
            var near = 0
            for leaf in 0..<tree.count(level: 0) where PolygonDistance.boxBound(tree.box(leaf), p, kx: kx, ky: ky) < 2_000 {
                EdgeTree.forEachEdge(leaf: leaf, rings: ends) { _ in near += 1 }
            }
            XCTAssertGreaterThan(near, 0)
            XCTAssertLessThan(near, ring.count / 100)
        }
    }
}
