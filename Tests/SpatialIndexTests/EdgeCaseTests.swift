import XCTest

@testable import SpatialIndex
import SeededRandom

final class EdgeCaseTests: XCTestCase {
    func testEmptyTree() {
        var tree = RTree()
        tree.checkInvariants()
        XCTAssertEqual(tree.count, 0)
        XCTAssertTrue(tree.isEmpty)
        XCTAssertNil(tree.bounds)
        XCTAssertEqual(tree.sortedQuery(x: 0, y: 0), [])
        XCTAssertEqual(
            tree.sortedQuery(Box(minX: -1e308, minY: -1e308, maxX: 1e308, maxY: 1e308)), [])
        XCTAssertEqual(tree.nodesVisited(x: 0, y: 0), 1)
        XCTAssertFalse(tree.remove(id: 0))
        XCTAssertFalse(tree.remove(id: -1))
        XCTAssertFalse(tree.contains(id: 0))
        XCTAssertNil(tree.box(of: 0))
        tree.rebuild()
        tree.checkInvariants()
        let bulk = RTree(ids: [Int32](), boxes: [Box]())
        bulk.checkInvariants()
        XCTAssertEqual(bulk.count, 0)
        XCTAssertEqual(bulk.height, 1)
    }

    func testSingleItemBoundaries() {
        let b = Box(minX: 2, minY: 3, maxX: 5, maxY: 7)
        for var tree in [
            RTree(ids: [Int32(9)], boxes: [b]),
            {
                var t = RTree()
                t.insert(id: 9, box: b)
                return t
            }(),
        ] {
            tree.checkInvariants()
            XCTAssertEqual(tree.bounds, b)
            for (x, y) in [(2.0, 3.0), (5, 7), (2, 7), (5, 3), (3.5, 3), (2, 5), (5, 5), (3.5, 7)] {
                XCTAssertEqual(tree.sortedQuery(x: x, y: y), [9], "(\(x), \(y)) is on the boundary")
            }
            for (x, y) in [
                (2.0.nextDown, 3.0), (5.0.nextUp, 7), (3, 7.0.nextUp), (3, 3.0.nextDown),
            ] {
                XCTAssertEqual(tree.sortedQuery(x: x, y: y), [], "(\(x), \(y)) is just outside")
            }
            XCTAssertEqual(
                tree.sortedQuery(Box(minX: 5, minY: 7, maxX: 6, maxY: 8)), [9], "corner touch")
            XCTAssertEqual(
                tree.sortedQuery(Box(minX: 0, minY: 4, maxX: 2, maxY: 4)), [9], "edge touch")
            XCTAssertEqual(tree.sortedQuery(Box(minX: 5.0.nextUp, minY: 0, maxX: 6, maxY: 9)), [])
            XCTAssertTrue(tree.remove(id: 9))
            XCTAssertFalse(tree.remove(id: 9))
            tree.checkInvariants()
            XCTAssertNil(tree.bounds)
            tree.insert(id: 9, box: b)
            tree.checkInvariants()
            XCTAssertEqual(tree.sortedQuery(x: 5, y: 7), [9])
        }
    }

    func testNaNAndInvertedQueriesFindNothing() {
        let tree = RTree(
            ids: [0, 1],
            boxes: [
                Box(minX: 0, minY: 0, maxX: 1, maxY: 1),
                Box(minX: -1e300, minY: -1e300, maxX: 1e300, maxY: 1e300),
            ])
        XCTAssertEqual(tree.sortedQuery(x: .nan, y: 0), [])
        XCTAssertEqual(tree.sortedQuery(x: 0, y: .nan), [])
        XCTAssertEqual(tree.sortedQuery(Box(minX: 1, minY: 0, maxX: 0, maxY: 1)), [])
        XCTAssertEqual(tree.sortedQuery(Box(minX: .nan, minY: 0, maxX: 1, maxY: 1)), [])
    }

    func testResultsAreAppendedNotCleared() {
        let tree = RTree(ids: [4], boxes: [Box(minX: 0, minY: 0, maxX: 1, maxY: 1)])
        var results: ContiguousArray<Int32> = [77]
        tree.query(x: 0.5, y: 0.5, into: &results)
        tree.query(Box(minX: 1, minY: 1, maxX: 2, maxY: 2), into: &results)
        XCTAssertEqual(results, [77, 4, 4])
    }

    /// Points, zero-width segments, duplicates and huge or infinite boxes, in bulk and dynamic
    /// trees, against the oracle; then everything removed and inserted again.
    func testDegenerateHugeAndDuplicateBoxes() {
        for seed in 0..<20 {
            var rng = SplitMix64(seed: 6000 + UInt64(seed))
            var oracle = Oracle()
            let n = 400
            for id in 0..<Int32(n) {
                let b: Box
                switch id % 8 {
                case 0: b = Box(minX: 10, minY: 10, maxX: 10, maxY: 10)  // one point, many times
                case 1: b = Box(minX: 20, minY: 20, maxX: 30, maxY: 30)  // one box, many times
                case 2:
                    let x = Double(rng.int(0...100))
                    b = Box(minX: x, minY: 0, maxX: x, maxY: 100)  // zero-width
                case 3:
                    b =
                        [
                            Box(minX: -1e308, minY: -1e308, maxX: 1e308, maxY: 1e308),
                            Box(
                                minX: -.infinity, minY: -.infinity, maxX: .infinity, maxY: .infinity
                            ),
                            Box(minX: -.infinity, minY: 40, maxX: .infinity, maxY: 40),
                            Box(minX: 0, minY: 0, maxX: .infinity, maxY: 1),
                        ][rng.int(0...3)]
                default: b = randomBox(&rng)
                }
                oracle.boxes[id] = b
            }
            let (ids, boxes) = oracle.sorted
            var tree =
                seed % 2 == 0
                ? RTree(ids: ids, boxes: boxes, fanout: 4 + seed % 5) : RTree(fanout: 4 + seed % 5)
            if seed % 2 == 1 {
                for id in ids.shuffled(using: &rng) { tree.insert(id: id, box: oracle.boxes[id]!) }
            }
            assertMatches(tree, oracle, &rng, queries: 100, "seed \(seed) loaded")
            XCTAssertEqual(tree.sortedQuery(x: 10, y: 10), oracle.query(x: 10, y: 10))
            XCTAssertEqual(tree.sortedQuery(x: 25, y: 30), oracle.query(x: 25, y: 30))

            // Remove everything, then fill again.
            for id in ids.shuffled(using: &rng) { XCTAssertTrue(tree.remove(id: id)) }
            oracle.boxes = [:]
            assertMatches(tree, oracle, &rng, queries: 20, "seed \(seed) emptied")
            XCTAssertEqual(tree.height, 1)
            for id in ids.shuffled(using: &rng) {
                let b = randomBox(&rng)
                tree.insert(id: id, box: b)
                oracle.boxes[id] = b
            }
            assertMatches(tree, oracle, &rng, queries: 100, "seed \(seed) refilled")
        }
    }

    /// Many identical points force splits where every candidate cut is equally good.
    func testAllItemsIdentical() {
        var tree = RTree(fanout: 4)
        tree.minimumUpdatesBeforeRebuild = .max
        let p = Box(minX: 1, minY: 1, maxX: 1, maxY: 1)
        for id in 0..<Int32(500) { tree.insert(id: id, box: p) }
        tree.checkInvariants()
        XCTAssertEqual(tree.sortedQuery(x: 1, y: 1).count, 500)
        XCTAssertEqual(tree.sortedQuery(x: 1, y: 1.0.nextUp), [])
        for id in stride(from: Int32(0), to: 500, by: 2) { tree.remove(id: id) }
        tree.checkInvariants()
        XCTAssertEqual(
            tree.sortedQuery(x: 1, y: 1), stride(from: Int32(1), to: 500, by: 2).map { $0 })
    }

    func testEveryFanoutWorks() {
        for fanout in [4, 5, 7, 16, 33, 64] {
            var rng = SplitMix64(seed: UInt64(fanout))
            var oracle = Oracle()
            var tree = RTree(fanout: fanout)
            for id in 0..<Int32(1500) {
                let b = randomBox(&rng)
                tree.insert(id: id, box: b)
                oracle.boxes[id] = b
            }
            for id in stride(from: Int32(0), to: 1500, by: 3) {
                tree.remove(id: id)
                oracle.boxes[id] = nil
            }
            assertMatches(tree, oracle, &rng, "fanout \(fanout)")
        }
    }

    /// A copy is independent: mutating one never changes the other (copy-on-write).
    func testValueSemantics() {
        var rng = SplitMix64(seed: 7)
        var oracle = Oracle()
        for id in 0..<Int32(300) { oracle.boxes[id] = randomBox(&rng) }
        let (ids, boxes) = oracle.sorted
        let original = RTree(ids: ids, boxes: boxes)
        var copy = original
        for id in 0..<Int32(150) { copy.remove(id: id) }
        copy.insert(id: 1000, box: Box(minX: 0, minY: 0, maxX: 200, maxY: 200))
        assertMatches(original, oracle, &rng, "original after the copy changed")
        XCTAssertEqual(copy.count, 151)
        copy.checkInvariants()
    }

    func testMemoryFootprintTracksStorage() {
        let empty = RTree().memoryFootprint
        var rng = SplitMix64(seed: 8)
        let boxes = (0..<10_000).map { _ in randomBox(&rng) }
        let tree = RTree(ids: (0..<Int32(10_000)).map { $0 }, boxes: boxes)
        // At least 36 bytes of entry per item (four Doubles and an id) plus the id map.
        XCTAssertGreaterThan(tree.memoryFootprint, empty + 10_000 * 40)
        XCTAssertLessThan(tree.memoryFootprint, 10_000 * 80)
    }
}
