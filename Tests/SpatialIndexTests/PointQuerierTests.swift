import SeededRandom
import SpatialIndex
import XCTest

/// `RTreePointQuerier.query(x:y:into:)`, public and used by no caller in the package (the
/// coverage audit found it never run), against the oracle's full scan over seeds; and a tree
/// bulk-loaded with shared ids but no boxes (also never run).
final class PointQuerierTests: XCTestCase {
    func testQuerierQueryMatchesTheOracle() {
        for seed in 1...30 as ClosedRange<UInt64> {
            var rng = SplitMix64(seed: seed &* 0x9E37_79B9_7F4A_7C15)
            var oracle = Oracle()
            let n = Int(rng.next() % 600)
            for id in 0..<Int32(n) {
                let x = rng.uniform(-180, 180)
                let y = rng.uniform(-90, 90)
                oracle.boxes[id] = Box(minX: x, minY: y, maxX: x + rng.uniform(0, 20), maxY: y + rng.uniform(0, 10))
            }
            let ids = oracle.boxes.keys.sorted()
            // Bulk-loaded (with its cell grid) and built by inserts (without one).
            var inserted = RTree(fanout: 4 + Int(seed % 8))
            for id in ids { inserted.insert(id: id, box: oracle.boxes[id]!) }
            for tree in [RTree(ids: ids, boxes: ids.map { oracle.boxes[$0]! }), inserted] {
                var points: [(Double, Double)] = (0..<200).map { _ in (rng.uniform(-185, 185), rng.uniform(-95, 95)) }
                // Corners and edges of boxes count.
                for id in ids.prefix(40) { let b = oracle.boxes[id]!; points += [(b.minX, b.minY), (b.maxX, b.maxY), (b.minX, (b.minY + b.maxY) / 2)] }
                points.append((.nan, 0))
                tree.withPointQuerier { q in
                    var got = ContiguousArray<Int32>()
                    for (x, y) in points {
                        got.removeAll(keepingCapacity: true)
                        q.query(x: x, y: y, into: &got)
                        XCTAssertEqual(got.sorted(), oracle.query(x: x, y: y), "seed \(seed) at (\(x), \(y))")
                    }
                }
            }
        }
    }

    /// No boxes yet, some ids shared: each is shared before it has an entry, takes entries by
    /// `insertShared`, and a removal from the empty tree finds nothing.
    func testSharedIdsWithoutBoxesAreMarkedShared() {
        var tree = RTree(ids: [Int32](), boxes: [Box](), shared: [Int32(2), 7])
        XCTAssertEqual(tree.count, 0)
        XCTAssertTrue(tree.isShared(id: 2))
        XCTAssertTrue(tree.isShared(id: 7))
        XCTAssertFalse(tree.isShared(id: 3))
        let b = Box(minX: 0, minY: 0, maxX: 1, maxY: 1)
        XCTAssertEqual(tree.removeShared(id: 7, boxes: [b]), 0)
        tree.insertShared(id: 7, box: b)
        tree.insertShared(id: 7, box: Box(minX: 0.5, minY: 0.5, maxX: 2, maxY: 2))
        tree.insert(id: 3, box: b)
        var got = ContiguousArray<Int32>()
        tree.query(x: 0.75, y: 0.75, into: &got)
        XCTAssertEqual(got.sorted(), [3, 7, 7])
        XCTAssertEqual(tree.removeShared(id: 7, boxes: [b]), 1)
        got.removeAll()
        tree.query(x: 0.75, y: 0.75, into: &got)
        XCTAssertEqual(got.sorted(), [3, 7])
    }
}
