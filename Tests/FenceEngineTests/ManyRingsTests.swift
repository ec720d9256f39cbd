@testable import FenceEngine
import XCTest

/// Polygons of many holes and MultiPolygons of many parts (a park with its ponds, a city's
/// parking lots as one fence): containment against a brute-force ray cast over every ring,
/// distances through the edge tree against the scan of every edge, and, in debug builds, how
/// much of the ring header one test reads, which must not grow with the rings (an audit found
/// every test summing the ring lengths: 55 µs a position at 50,000 rings).
final class ManyRingsTests: XCTestCase {
    /// A square ring, closed, counter-clockwise.
    static func square(_ x0: Double, _ y0: Double, _ x1: Double, _ y1: Double) -> [LonLat] {
        [(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0)].map { LonLat(lon: $0.0, lat: $0.1) }
    }

    /// A ring inside the cell of side `cell` at (x, y), well inside it: a square, a diamond or a
    /// star of 4 to 12 points, of random size.
    static func smallRing(_ rng: inout TestRandom, x: Double, y: Double, cell: Double) -> [LonLat] {
        let cx = x + cell / 2
        let cy = y + cell / 2
        let h = cell * rng.uniform(0.1, 0.4)
        switch rng.next() % 3 {
        case 0: return square(cx - h, cy - h, cx + h, cy + h)
        case 1: return [(cx, cy - h), (cx + h, cy), (cx, cy + h), (cx - h, cy), (cx, cy - h)].map { LonLat(lon: $0.0, lat: $0.1) }
        default: return Shapes.star(&rng, lon: cx, lat: cy, radius: h, vertices: 4 + 2 * Int(rng.next() % 5))
        }
    }

    /// A square of `g` x `g` cells of side `cell` from (x, y), with a hole in each cell
    /// (`holes`), or a MultiPolygon of one small ring per cell, some of them with a hole.
    static func manyRings(_ rng: inout TestRandom, g: Int, cell: Double, x: Double, y: Double, holes: Bool) -> [Polygon] {
        var small: [[LonLat]] = []
        for i in 0..<g {
            for j in 0..<g { small.append(smallRing(&rng, x: x + Double(i) * cell, y: y + Double(j) * cell, cell: cell)) }
        }
        if holes {
            return [Polygon(exterior: square(x, y, x + Double(g) * cell, y + Double(g) * cell), holes: small)]
        }
        return small.enumerated().map { k, ring in
            // Every seventh square part gets a pond: a hole a third its size.
            guard k % 7 == 0, ring.count == 5, ring[0].lat == ring[1].lat else { return Polygon(exterior: ring) }
            let (x0, y0, x1, y1) = (ring[0].lon, ring[0].lat, ring[2].lon, ring[2].lat)
            let (dx, dy) = ((x1 - x0) / 3, (y1 - y0) / 3)
            return Polygon(exterior: ring, holes: [square(x0 + dx, y0 + dy, x1 - dx, y1 - dy)])
        }
    }

    /// The oracle: even-odd ray cast over every edge of every ring, with the boundary (a
    /// vertex, or a point exactly on an edge) covered. Straight from the fence's rings: no
    /// record, no grid, no index.
    static func covers(_ polygons: [Polygon], _ p: LonLat) -> Bool {
        var inside = false
        for polygon in polygons {
            for ring in polygon.rings {
                for i in 0..<(ring.count - 1) {
                    let (a, b) = (ring[i], ring[i + 1])
                    let cross = (b.lon - a.lon) * (p.lat - a.lat) - (b.lat - a.lat) * (p.lon - a.lon)
                    if cross == 0 && min(a.lon, b.lon) <= p.lon && p.lon <= max(a.lon, b.lon) && min(a.lat, b.lat) <= p.lat
                        && p.lat <= max(a.lat, b.lat)
                    {
                        return true
                    }
                    if (a.lat > p.lat) != (b.lat > p.lat) {
                        let x = a.lon + (p.lat - a.lat) * (b.lon - a.lon) / (b.lat - a.lat)
                        if p.lon < x { inside.toggle() }
                    }
                }
            }
        }
        return inside
    }

    /// Points over and around the fence's box, and vertices of random edges, with the edge's
    /// middle when it runs along a meridian or a parallel (exactly on it).
    static func probes(_ rng: inout TestRandom, _ polygons: [Polygon], count: Int) -> [LonLat] {
        let all = polygons.flatMap { $0.rings.flatMap { $0 } }
        let (x0, x1) = (all.map(\.lon).min()!, all.map(\.lon).max()!)
        let (y0, y1) = (all.map(\.lat).min()!, all.map(\.lat).max()!)
        let (mx, my) = (0.05 * (x1 - x0), 0.05 * (y1 - y0))
        var points = (0..<count).map { _ in LonLat(lon: rng.uniform(x0 - mx, x1 + mx), lat: rng.uniform(y0 - my, y1 + my)) }
        let rings = polygons.flatMap(\.rings)
        for _ in 0..<(count / 2) {
            let ring = rings[Int(rng.next() % UInt64(rings.count))]
            let i = Int(rng.next() % UInt64(ring.count - 1))
            points.append(ring[i])
            if ring[i].lon == ring[i + 1].lon || ring[i].lat == ring[i + 1].lat {
                points.append(LonLat(lon: (ring[i].lon + ring[i + 1].lon) / 2, lat: (ring[i].lat + ring[i + 1].lat) / 2))
            }
        }
        return points
    }

    /// Over many seeds: 9 to 1,600 holes or parts (some parts holed), large (indexed, with
    /// cell grid and edge tree) and small records alike. Containment one by one and in a
    /// batch on two threads against the ray cast; the screened distance through the edge tree
    /// (hysteresis) against the scan of every edge, and the exact one (nearest) for a few.
    func testManyHolesAndPartsMatchTheRayCastOverSeeds() throws {
        var tested = 0
        var inside = 0
        var distances = 0
        for seed in 0..<40 {
            var rng = TestRandom(mixing: UInt64(9100 + seed))
            let g = [3, 5, 12, 25, 40][seed % 5]
            let holes = seed % 2 == 0
            let cell = rng.uniform(0.0005, 0.05)
            let polygons = Self.manyRings(&rng, g: g, cell: cell, x: rng.uniform(-170, 150), y: rng.uniform(-70, 60), holes: holes)
            var store = FenceStore()
            try store.add(Fence(id: "f", shape: .polygons(polygons)))
            let handle = try XCTUnwrap(store.handle(id: "f"))
            let label = "seed \(seed), \(g * g) \(holes ? "holes" : "parts")"
            let points = Self.probes(&rng, polygons, count: 400)
            let batch = store.covering(points, threads: 2)
            for (i, p) in points.enumerated() {
                let want = Self.covers(polygons, p)
                XCTAssertEqual(store.fence(handle, covers: p), want, "\(label) \(p)")
                XCTAssertEqual(batch[i].contains(handle), want, "\(label) \(p) (batch)")
                tested += 1
                if want { inside += 1 }
            }
            let slot = Int(handle.rawValue)
            let indexed = store.kind(slot) == .indexedPolygon
            store.geometry.withUnsafeBufferPointer { g in
                let record = g.baseAddress! + store.geometryStart(slot)
                for (k, p) in points.enumerated() where k % 8 == 0 {
                    XCTAssertEqual(store.boundaryDistance(slot: slot, p), PolygonDistance.boundary(record, p, exact: false), "\(label) \(p)")
                    if k % 64 == 0 {
                        XCTAssertEqual(
                            store.boundaryDistance(slot: slot, p, exact: true), PolygonDistance.boundary(record, p, exact: true),
                            "\(label) \(p) exact")
                    }
                    distances += 1
                }
                guard indexed else { return }
                // Every edge in exactly one leaf; a ring's last position starts none.
                let tree = EdgeTree.View(record: record)
                let ends = EdgeTree.RingEnds(record)
                var seen = [Int](repeating: 0, count: ends.total)
                for leaf in 0..<tree.count(level: 0) { EdgeTree.forEachEdge(leaf: leaf, rings: ends) { seen[$0] += 1 } }
                var at = 0
                for ring in polygons.flatMap(\.rings) {
                    for i in at..<(at + ring.count) { XCTAssertEqual(seen[i], i == at + ring.count - 1 ? 0 : 1, "\(label) position \(i)") }
                    at += ring.count
                }
                XCTAssertEqual(at, ends.total, label)
            }
            XCTAssertEqual(indexed, polygons.flatMap(\.rings).reduce(0) { $0 + $1.count } > FlatGeometry.indexThreshold, label)
        }
        XCTAssertGreaterThan(tested, 40 * 400)
        XCTAssertGreaterThan(inside, tested / 5)
        XCTAssertLessThan(inside, tested * 4 / 5)
        XCTAssertGreaterThan(distances, 2_000)
    }

    /// The stored record keeps the rings as given: the fence read back has the same rings, and
    /// the shape digest (which checkpoints keep) is still FNV-1a over the kind, the ring count,
    /// the rings' signed lengths and the coordinates, as when records held lengths.
    func testRingsReadBackAndTheShapeDigestIsUnchanged() throws {
        var rng = TestRandom(mixing: 9200)
        let parts = Self.manyRings(&rng, g: 12, cell: 0.01, x: 5, y: 45, holes: false)
        let polygons = parts + Self.manyRings(&rng, g: 4, cell: 0.01, x: 7, y: 45, holes: true)
        for (id, shape) in [("many", polygons), ("one", [polygons[1]]), ("holed", [polygons[polygons.count - 1]])] {
            var store = FenceStore()
            try store.add(Fence(id: id, shape: .polygons(shape)))
            let slot = try XCTUnwrap(store.handle(id: id)).rawValue
            guard case .polygons(let back) = store.fence(id: id)!.shape else { return XCTFail(id) }
            XCTAssertEqual(back.map(\.rings), shape.map(\.rings), id)
            let rings = shape.flatMap { p in p.rings.enumerated().map { (ring: $0.element, exterior: $0.offset == 0) } }
            var words: [Double] = [Double(rings.count)]
            words += rings.map { Double($0.exterior ? $0.ring.count : -$0.ring.count) }
            words += rings.flatMap { Shapes.flat($0.ring) }
            var digest = FNV1a.hash(CollectionOfOne(UInt8(store.kind(Int(slot)).rawValue)))
            for w in words { withUnsafeBytes(of: w.bitPattern.littleEndian) { digest = FNV1a.hash($0, seed: digest) } }
            XCTAssertEqual(store.shapeDigest(slot: slot), digest, id)
        }
    }

    #if FENCE_INTERNAL_CHECKS
        /// Reads of the ring header (`FlatGeometry.headerReads`) by `body`.
        func headerReads(_ body: () -> Void) -> Int {
            let before = FlatGeometry.headerReads.load(ordering: .relaxed)
            body()
            return FlatGeometry.headerReads.load(ordering: .relaxed) - before
        }

        /// A containment test reads a fixed few ring ends whatever the rings; a distance reads
        /// a few per leaf of the edge tree it opens (a binary search for the leaf's first
        /// ring), so with the same holes around the positions, 100 or 6,400 holes read about
        /// alike. Counted, not timed: the same count on every run. (Summing the lengths made
        /// it O(rings): 6,400 reads a test here.)
        func testATestReadsAFewRingEndsWhateverTheRings() throws {
            var reads: [Int: (covers: Int, distance: Int, tests: Int)] = [:]
            for g in [10, 80] {
                for holes in [true, false] {
                    // The same cells and holes near the positions (the first 10 x 10 cells) at
                    // both sizes.
                    var rng = TestRandom(mixing: 9300)
                    let polygons = Self.manyRings(&rng, g: g, cell: 0.01, x: 10, y: 50, holes: holes)
                    var store = FenceStore()
                    try store.add(Fence(id: "f", shape: .polygons(polygons)))
                    let handle = try XCTUnwrap(store.handle(id: "f"))
                    XCTAssertEqual(store.kind(Int(handle.rawValue)), .indexedPolygon)
                    var points = TestRandom(mixing: 9301)
                    var covers = 0
                    var distance = 0
                    var most = 0
                    for _ in 0..<200 {
                        let p = LonLat(lon: points.uniform(10, 10.1), lat: points.uniform(50, 50.1))
                        let n = headerReads { _ = store.fence(handle, covers: p) }
                        most = max(most, n)
                        covers += n
                        distance += headerReads { _ = store.boundaryDistance(slot: Int(handle.rawValue), p) }
                    }
                    // The cell grid's place, and the edge index's when the slab must count.
                    XCTAssertLessThanOrEqual(most, 2, "\(g * g) \(holes ? "holes" : "parts"): ring ends read by one containment test")
                    reads[g * g * (holes ? 1 : -1)] = (covers, distance, 200)
                }
            }
            for sign in [1, -1] {
                let small = reads[100 * sign]!
                let large = reads[6_400 * sign]!
                XCTAssertGreaterThan(large.distance, 0)
                // log2 of the rings (a leaf's binary search) grows 1.9 times from 100 to 6,400.
                XCTAssertLessThanOrEqual(
                    large.distance, 3 * small.distance, "ring ends read by 200 distances: \(small.distance) at 100 rings, \(large.distance) at 6,400")
                XCTAssertLessThanOrEqual(large.covers, small.covers + 200)
            }
        }
    #endif
}
