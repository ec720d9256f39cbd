import SeededRandom
import SpatialIndex
import XCTest

final class BulkLoadTests: XCTestCase {
    /// Bulk loads of many sizes and shapes answer like a linear scan.
    func testQueriesMatchOracleAfterBulkLoad() {
        let sizes = [0, 1, 2, 3, 15, 16, 17, 33, 100, 257, 700, 2000]
        for seed in 0..<24 {
            var rng = SplitMix64(seed: UInt64(seed))
            let n = sizes[seed % sizes.count] + rng.int(0...3)
            let fanout = [4, 5, 8, 16, 16, 64][seed % 6]
            var oracle = Oracle()
            var previous: [Box] = []
            // Ids are dense but shuffled and with holes, as a caller reusing freed ids has them.
            var ids = (0..<Int32(n + n / 4)).shuffled(using: &rng)
            ids.removeLast(n / 4)
            for id in ids {
                let b = randomBox(&rng, previous: previous)
                previous.append(b)
                oracle.boxes[id] = b
            }
            let tree = RTree(ids: ids, boxes: ids.map { oracle.boxes[$0]! }, fanout: fanout)
            XCTAssertEqual(tree.updatesSinceRebuild, 0)
            assertMatches(tree, oracle, &rng, queries: 200, "seed \(seed) n \(n) fanout \(fanout)")
        }
    }

    /// STR packs: the tree has the minimum number of leaves and is as shallow as possible.
    func testPackedShape() {
        for (n, fanout) in [
            (1, 16), (16, 16), (17, 16), (256, 16), (257, 16), (10_000, 16), (1000, 4),
        ] {
            var rng = SplitMix64(seed: UInt64(n))
            let boxes = (0..<n).map { _ in randomBox(&rng) }
            let tree = RTree(ids: (0..<Int32(n)).map { $0 }, boxes: boxes, fanout: fanout)
            tree.checkInvariants()
            var height = 1
            var capacity = fanout
            while capacity < n {
                capacity *= fanout
                height += 1
            }
            XCTAssertEqual(tree.height, height, "n \(n) fanout \(fanout)")
        }
    }

    /// Same input, same tree: packing is deterministic.
    func testDeterministic() {
        var rng = SplitMix64(seed: 99)
        let boxes = (0..<3000).map { _ in randomBox(&rng) }
        let ids = (0..<Int32(3000)).map { $0 }
        let a = RTree(ids: ids, boxes: boxes)
        let b = RTree(ids: ids, boxes: boxes)
        var ra = ContiguousArray<Int32>()
        var rb = ContiguousArray<Int32>()
        for i in 0..<200 {
            a.query(x: Double(i % 100), y: Double(i / 2), into: &ra)
            b.query(x: Double(i % 100), y: Double(i / 2), into: &rb)
        }
        XCTAssertEqual(ra, rb, "same order, not only the same set")
    }

    /// Lazy and non-array collections are accepted.
    func testAcceptsAnyCollections() {
        let tree = RTree(
            ids: (0..<Int32(50)).lazy.map { 49 - $0 },
            boxes: (0..<50).lazy.map {
                Box(minX: Double($0), minY: 0, maxX: Double($0) + 1, maxY: 1)
            })
        tree.checkInvariants()
        XCTAssertEqual(tree.sortedQuery(x: 10, y: 0.5), [39, 40], "boxes 9 and 10 touch x = 10")
        XCTAssertEqual(tree.box(of: 0), Box(minX: 49, minY: 0, maxX: 50, maxY: 1))
    }
}
