@testable import FenceEngine
import SpatialIndex
import XCTest

/// Fences indexed under more than two boxes (long thin fences cut into pieces,
/// `FenceValidation.polygonBoxes`) through every path that stores, renumbers, re-indexes or
/// removes boxes: one-by-one adds, the parallel start-up load, a batch into a store that
/// holds fences (`reorderSpatially`), the one-by-one path's pending boxes (`rebuildIndex`),
/// replacement and removal. Containment is checked against the oracle (GEOS `covers` on
/// every fence, no index) and the index against the store's own account of its boxes.
final class PieceIndexStoreTests: XCTestCase {
    /// Corridors 0.3-4 degrees long and 20-2,000 m wide at any angle, stars and circles
    /// among them.
    static func fences(_ rng: inout TestRandom, count: Int, prefix: String) -> [Fence] {
        (0..<count).map { i in
            let lon = rng.uniform(-2, 2)
            let lat = rng.uniform(44, 48)
            switch rng.next() % 5 {
            case 0:
                return .circle(id: "\(prefix)\(i)", lon: lon, lat: lat, radius: rng.uniform(200, 20_000))
            case 1:
                let star = Shapes.star(&rng, lon: lon, lat: lat, radius: rng.uniform(0.01, 0.5), vertices: 16)
                return .polygon(id: "\(prefix)\(i)", exterior: star)
            default:
                let ring = Shapes.corridor(
                    lon: lon, lat: lat, length: rng.uniform(0.3, 4), width: rng.uniform(20, 2_000) / 111_000,
                    angle: rng.uniform(0, .pi))
                return .polygon(id: "\(prefix)\(i)", exterior: ring)
            }
        }
    }

    /// Random points over the area, and points on and just off every corridor's centre line
    /// and boundary (its vertices, its edges at random places).
    static func points(_ rng: inout TestRandom, _ fences: [Fence]) -> [LonLat] {
        var points = (0..<300).map { _ in LonLat(lon: rng.uniform(-4.5, 4.5), lat: rng.uniform(41.5, 50.5)) }
        for f in fences {
            guard case .polygons(let polygons) = f.shape else { continue }
            let ring = polygons[0].exterior
            for k in 0..<(ring.count - 1) {
                points.append(ring[k])
                for _ in 0..<3 {
                    let t = rng.uniform(0, 1)
                    points.append(LonLat(lon: ring[k].lon + t * (ring[k + 1].lon - ring[k].lon), lat: ring[k].lat + t * (ring[k + 1].lat - ring[k].lat)))
                }
            }
            // Along the middle, between the first and third corners.
            for _ in 0..<6 {
                let t = rng.uniform(0, 1)
                let u = rng.uniform(0.45, 0.55)
                let a = LonLat(lon: ring[0].lon + t * (ring[1].lon - ring[0].lon), lat: ring[0].lat + t * (ring[1].lat - ring[0].lat))
                let b = LonLat(lon: ring[3].lon + t * (ring[2].lon - ring[3].lon), lat: ring[3].lat + t * (ring[2].lat - ring[3].lat))
                points.append(LonLat(lon: a.lon + u * (b.lon - a.lon), lat: a.lat + u * (b.lat - a.lat)))
            }
        }
        return points
    }

    /// The store agrees with the oracle at every point, its index holds exactly the boxes it
    /// accounts for, and some fences are indexed under more than two boxes.
    func check(_ store: FenceStore, _ fences: [String: Fence], _ points: [LonLat], _ context: String) {
        store.tree.checkInvariants()
        let oracle = Oracle(fences.keys.sorted().map { fences[$0]! })
        for (i, p) in points.enumerated() {
            let got = store.ids(covering: p)
            let want = oracle.ids(covering: p)
            guard got == want else {
                XCTFail("\(context) point \(i) \(p): \(got), want \(want)")
                return
            }
        }
        var entries = 0
        var pieced = 0
        for handle in store.allHandles() {
            let s = handle.rawValue
            let count = Int(store.slotBoxCount[Int(s)])
            entries += count
            if count > 2 {
                pieced += 1
                XCTAssertEqual(store.sharedBoxes[s]?.count, count - 1, context)
                XCTAssertTrue(store.tree.isShared(id: FenceStore.item(slot: s, part: 1)), context)
            } else {
                XCTAssertNil(store.sharedBoxes[s], context)
            }
            var seen = 0
            XCTAssertEqual(store.forEachIndexBox(ofSlot: s) { _ in seen += 1; return true }, true, context)
            XCTAssertEqual(seen, count, context)
        }
        XCTAssertEqual(store.tree.count, entries, "\(context): index entries")
        XCTAssertEqual(store.sharedBoxes.count, pieced, "\(context): shared box lists")
        XCTAssertGreaterThan(pieced, 0, "\(context): no fence was cut into pieces")
    }

    func testPiecesThroughEveryStorePath() {
        for seed in UInt64(1)...10 {
            var rng = TestRandom(mixing: 900 + seed)
            let first = Self.fences(&rng, count: 90, prefix: "a")
            var model: [String: Fence] = Dictionary(uniqueKeysWithValues: first.map { ($0.id, $0) })
            var points = Self.points(&rng, first)

            // The parallel start-up load, and the one-by-one path with its pending boxes.
            var store = FenceStore()
            XCTAssertTrue(store.add(first, threads: 2).allSatisfy { $0.error == nil }, "seed \(seed)")
            check(store, model, points, "seed \(seed) start-up load")
            var oneByOne = FenceStore()
            XCTAssertTrue(oneByOne.add(first, repair: false, threads: 1, pristinePath: false).allSatisfy { $0.error == nil })
            check(oneByOne, model, points, "seed \(seed) pending boxes")

            // Edits one at a time: replace some fences by new shapes, remove some, add some.
            let more = Self.fences(&rng, count: 40, prefix: "b")
            for (k, f) in more.enumerated() {
                if k % 3 == 0 {
                    // Replaced under an existing id (a corridor or another shape).
                    let id = "a\(rng.next() % 90)"
                    let replacement = Fence(id: id, shape: f.shape)
                    XCTAssertNoThrow(try store.add(replacement))
                    model[id] = replacement
                } else {
                    XCTAssertNoThrow(try store.add(f))
                    model[f.id] = f
                }
                if k % 4 == 1, let id = model.keys.sorted().randomElement(using: &rng) {
                    XCTAssertNotNil(store.remove(id: id))
                    model[id] = nil
                }
            }
            points += Self.points(&rng, more)
            check(store, model, points, "seed \(seed) edits")
            // Packed anew from the index as it stands (`add` packs only pending boxes).
            var repacked = store
            repacked.rebuildIndex()
            check(repacked, model, points, "seed \(seed) repacked")

            // A batch larger than half the store: renumbered in spatial order, packed anew.
            let batch = Self.fences(&rng, count: 150, prefix: "c")
            XCTAssertTrue(store.add(batch, threads: 2).allSatisfy { $0.error == nil })
            for f in batch { model[f.id] = f }
            points += Self.points(&rng, batch).prefix(400)
            check(store, model, points, "seed \(seed) reordered")

            // Everything removed: nothing left in the index.
            for id in model.keys.sorted() { XCTAssertNotNil(store.remove(id: id)) }
            XCTAssertEqual(store.tree.count, 0, "seed \(seed)")
            XCTAssertTrue(store.sharedBoxes.isEmpty, "seed \(seed)")
            store.tree.checkInvariants()
        }
    }

    /// The store's size rules count fences, not index entries: a batch over half as many
    /// fences as stored is packed anew, and the cell grid comes back after a quarter as many
    /// positions as fences, however many boxes the fences have. A pieced fence takes its
    /// place in the spatial order from all its boxes, not from its first (one end).
    func testSizeRulesCountFences() {
        var rng = TestRandom(mixing: 77)
        let corridors = (0..<200).map { i in
            Fence.polygon(
                id: "r\(i)",
                exterior: Shapes.corridor(lon: rng.uniform(-2, 2), lat: rng.uniform(44, 48), length: 3, width: 0.0005, angle: .pi / 4))
        }
        var store = FenceStore()
        store.add(corridors, threads: 2)
        XCTAssertGreaterThan(store.tree.count, 20 * store.count, "corridors are pieced")
        XCTAssertNotNil(store.remove(id: "r0"))
        XCTAssertFalse(store.indexHasCellGrid, "an edit drops the grid")
        store.prepareIndex(forQueries: 60)
        XCTAssertTrue(store.indexHasCellGrid, "60 positions >= 199 fences / 4")

        let batch = (0..<120).map { Fence.circle(id: "c\($0)", lon: rng.uniform(-2, 2), lat: rng.uniform(44, 48), radius: 500) }
        store.add(batch, threads: 2)
        XCTAssertEqual(store.tree.updatesSinceRebuild, 0, "120 fences > 199 / 2: packed anew, not inserted")

        let boxes = [Box(minX: 0, minY: 0, maxX: 1, maxY: 1), Box(minX: 1, minY: 1, maxX: 2, maxY: 2), Box(minX: 2, minY: 2, maxX: 3, maxY: 3)]
        XCTAssertEqual(FenceStore.orderBox(boxes), Box(minX: 0, minY: 0, maxX: 3, maxY: 3))
        XCTAssertEqual(FenceStore.orderBox(Array(boxes.prefix(2))), boxes[0], "two boxes: the first, as before pieces")
    }
}
