import XCTest

@testable import SpatialIndex
import SeededRandom

final class RebuildPolicyTests: XCTestCase {
    /// Fence-like data: 20,000 boxes of 0.05 .. 2 units in a 100 x 100 square.
    func fenceBox(_ rng: inout SplitMix64) -> Box {
        let x = rng.unit() * 100
        let y = rng.unit() * 100
        return Box(
            minX: x, minY: y, maxX: x + 0.05 + 1.95 * rng.unit() * rng.unit(),
            maxY: y + 0.05 + 1.95 * rng.unit() * rng.unit())
    }

    func meanNodesVisited(_ tree: RTree, _ points: [(Double, Double)]) -> Double {
        Double(points.reduce(0) { $0 + tree.nodesVisited(x: $1.0, y: $1.1) }) / Double(points.count)
    }

    /// 20 rounds of removing 10% of 20,000 items and inserting as many: results always equal a
    /// linear scan, and point queries never enter more than 2x the nodes of a fresh bulk load
    /// over the same items.
    func testQualityStaysBoundedUnderChurn() {
        let factor = 2.0
        // The run without the policy is measured for comparison, not asserted.
        for (seed, policy) in [(UInt64(11), true), (13, false)] {
            var rng = SplitMix64(seed: seed)
            var oracle = Oracle()
            let n = 20_000
            for id in 0..<Int32(n) { oracle.boxes[id] = fenceBox(&rng) }
            let (ids, boxes) = oracle.sorted
            var tree = RTree(ids: ids, boxes: boxes)
            if !policy { tree.minimumUpdatesBeforeRebuild = .max }
            let points = (0..<2000).map { _ in (rng.unit() * 100, rng.unit() * 100) }
            var ratios: [Double] = []
            var rebuilds = 0
            for round in 0..<20 {
                let before = tree.updatesSinceRebuild
                let victims = oracle.ids.shuffled(using: &rng).prefix(n / 10)
                for id in victims {
                    XCTAssertTrue(tree.remove(id: id))
                    oracle.boxes[id] = nil
                }
                for id in victims {
                    let b = fenceBox(&rng)
                    tree.insert(id: id, box: b)
                    oracle.boxes[id] = b
                }
                if tree.updatesSinceRebuild < before + 2 * victims.count { rebuilds += 1 }
                tree.checkInvariants()
                for (x, y) in points.prefix(150) {
                    XCTAssertEqual(
                        tree.sortedQuery(x: x, y: y), oracle.query(x: x, y: y), "round \(round)")
                }
                for _ in 0..<50 {
                    let w = fenceBox(&rng)
                    XCTAssertEqual(tree.sortedQuery(w), oracle.query(w), "round \(round)")
                }
                let (freshIDs, freshBoxes) = oracle.sorted
                let fresh = RTree(ids: freshIDs, boxes: freshBoxes)
                let ratio = meanNodesVisited(tree, points) / meanNodesVisited(fresh, points)
                ratios.append(ratio)
                if policy {
                    XCTAssertLessThanOrEqual(
                        ratio, factor,
                        "round \(round): tree enters \(ratio)x the nodes of a fresh packing")
                }
            }
            let summary = ratios.map { String(Int(($0 * 100).rounded())) }.joined(separator: " ")
            print(
                "RebuildPolicy seed \(seed) policy \(policy ? "on" : "off"): "
                    + "nodesVisited ratio to fresh bulk load per round (%): \(summary); "
                    + "max \(ratios.max()!); rounds with a rebuild \(rebuilds)"
            )
        }
    }

    /// Inserting in x order (a sweep, the classic worst case for dynamic R-trees) with and
    /// without the policy; with it the result stays within 2x of a fresh packing.
    func testSweepInsertionStaysBounded() {
        var rng = SplitMix64(seed: 31)
        let boxes = (0..<20_000).map { _ in fenceBox(&rng) }.sorted { $0.minX < $1.minX }
        let points = (0..<2000).map { _ in (rng.unit() * 100, rng.unit() * 100) }
        let fresh = RTree(ids: (0..<Int32(boxes.count)).map { $0 }, boxes: boxes)
        var results: [String] = []
        for policy in [true, false] {
            var tree = RTree()
            if !policy { tree.minimumUpdatesBeforeRebuild = .max }
            for (i, b) in boxes.enumerated() { tree.insert(id: Int32(i), box: b) }
            tree.checkInvariants()
            let ratio = meanNodesVisited(tree, points) / meanNodesVisited(fresh, points)
            results.append("policy \(policy ? "on" : "off"): \(ratio)")
            if policy { XCTAssertLessThanOrEqual(ratio, 2.0) }
        }
        print(
            "RebuildPolicy sweep insertion, nodesVisited ratio to fresh bulk load: "
                + results.joined(separator: ", ")
        )
    }

    /// The policy fires exactly when updates exceed max(minimum, count / 2), and resets the
    /// counter.
    func testRebuildFiresAtThreshold() {
        var rng = SplitMix64(seed: 21)
        let n = 5000
        let boxes = (0..<n).map { _ in fenceBox(&rng) }
        var tree = RTree(ids: (0..<Int32(n)).map { $0 }, boxes: boxes)
        XCTAssertEqual(tree.rebuildThreshold, 2500)
        var updates = 0
        var id: Int32 = 0
        while updates < 2500 {
            tree.remove(id: id)
            tree.insert(id: id, box: boxes[Int(id)])
            id += 1
            updates += 2
        }
        XCTAssertEqual(tree.updatesSinceRebuild, 2500)
        tree.remove(id: id)
        XCTAssertEqual(tree.updatesSinceRebuild, 0, "the 2501st update rebuilds")
        tree.checkInvariants()

        var small = RTree()
        for i in 0..<Int32(1024) { small.insert(id: i, box: fenceBox(&rng)) }
        XCTAssertEqual(small.updatesSinceRebuild, 1024, "small trees wait for the minimum")
        small.insert(id: 1024, box: fenceBox(&rng))
        XCTAssertEqual(small.updatesSinceRebuild, 0)
    }

    /// Growing from empty rebuilds at roughly doubling sizes: O(log n) rebuilds in all.
    func testGrowthRebuildsLogarithmically() {
        var rng = SplitMix64(seed: 22)
        var tree = RTree()
        var rebuilds = 0
        for id in 0..<Int32(40_000) {
            tree.insert(id: id, box: fenceBox(&rng))
            if tree.updatesSinceRebuild == 0 { rebuilds += 1 }
        }
        tree.checkInvariants()
        // 1025, then each time the count has about doubled: 2050, 4100, ..., 32800.
        XCTAssertEqual(rebuilds, 6)
    }
}
