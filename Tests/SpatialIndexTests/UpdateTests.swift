import XCTest

@testable import SpatialIndex
import SeededRandom

final class UpdateTests: XCTestCase {
    /// Trees grown by inserts alone (from empty, with and without the rebuild policy).
    func testInsertsOnlyMatchOracle() {
        for seed in 0..<24 {
            var rng = SplitMix64(seed: 1000 + UInt64(seed))
            let fanout = [4, 5, 6, 16, 16, 32][seed % 6]
            var tree = RTree(fanout: fanout)
            // Even seeds: never rebuild, so the dynamic shape itself is tested at full size.
            if seed % 2 == 0 { tree.minimumUpdatesBeforeRebuild = .max }
            var oracle = Oracle()
            var previous: [Box] = []
            let n = 300 + rng.int(0...1500)
            var ids = (0..<Int32(n)).shuffled(using: &rng)
            var batch = 0
            while !ids.isEmpty {
                for _ in 0..<min(ids.count, 1 + rng.int(0...400)) {
                    let id = ids.removeLast()
                    let b = randomBox(&rng, previous: previous)
                    previous.append(b)
                    tree.insert(id: id, box: b)
                    oracle.boxes[id] = b
                }
                batch += 1
                assertMatches(
                    tree, oracle, &rng, queries: 60, "seed \(seed) batch \(batch) fanout \(fanout)")
            }
        }
    }

    /// Random inserts, removes (present and absent ids) and id reuse, on bulk-loaded and empty
    /// starting trees, checked after every batch.
    func testMixedInsertsAndRemovesMatchOracle() {
        for seed in 0..<24 {
            var rng = SplitMix64(seed: 2000 + UInt64(seed))
            let fanout = [4, 16, 5, 16, 8, 64][seed % 6]
            var oracle = Oracle()
            var previous: [Box] = []
            let start = seed % 3 == 0 ? 0 : rng.int(0...1500)
            for id in 0..<Int32(start) {
                let b = randomBox(&rng, previous: previous)
                previous.append(b)
                oracle.boxes[id] = b
            }
            let (ids, boxes) = oracle.sorted
            var tree = RTree(ids: ids, boxes: boxes, fanout: fanout)
            if seed % 4 == 1 { tree.minimumUpdatesBeforeRebuild = .max }
            var present = ids  // kept in step with the oracle: cheap deterministic draws
            var free: [Int32] = []
            var nextID = Int32(start)
            for batch in 0..<10 {
                let removeBias = [0.3, 0.5, 0.7, 0.95][batch % 4]
                for _ in 0..<1 + rng.int(0...300) {
                    if !present.isEmpty && rng.chance(removeBias) {
                        let i = rng.int(0...present.count - 1)
                        let id = present[i]
                        present.swapAt(i, present.count - 1)
                        present.removeLast()
                        XCTAssertTrue(tree.remove(id: id), "seed \(seed): remove present \(id)")
                        oracle.boxes[id] = nil
                        free.append(id)
                    } else if rng.chance(0.1) {
                        let absent = free.randomElement(using: &rng) ?? nextID
                        XCTAssertFalse(
                            tree.remove(id: absent), "seed \(seed): remove absent \(absent)")
                    } else {
                        // Reuse a freed id half of the time, as the fence store does.
                        let id: Int32
                        if !free.isEmpty && rng.chance(0.5) {
                            id = free.remove(at: rng.int(0...free.count - 1))
                        } else {
                            id = nextID
                            nextID += 1
                        }
                        let b = randomBox(&rng, previous: previous)
                        previous.append(b)
                        tree.insert(id: id, box: b)
                        oracle.boxes[id] = b
                        present.append(id)
                    }
                }
                assertMatches(
                    tree, oracle, &rng, queries: 60, "seed \(seed) batch \(batch) fanout \(fanout)")
            }
        }
    }

    /// Deep trees (fanout 4, no rebuild) under removal exercise multi-level condensing; the
    /// invariants are checked after every single removal.
    func testRemovalCondensesDeepTrees() {
        for seed in 0..<12 {
            var rng = SplitMix64(seed: 3000 + UInt64(seed))
            var tree = RTree(fanout: 4)
            tree.minimumUpdatesBeforeRebuild = .max
            var oracle = Oracle()
            for id in 0..<Int32(600) {
                let b = randomBox(&rng)
                tree.insert(id: id, box: b)
                oracle.boxes[id] = b
            }
            XCTAssertGreaterThanOrEqual(tree.height, 5)
            var order = oracle.ids.shuffled(using: &rng)
            while !order.isEmpty {
                for _ in 0..<min(order.count, 50) {
                    let id = order.removeLast()
                    XCTAssertTrue(tree.remove(id: id))
                    oracle.boxes[id] = nil
                    tree.checkInvariants()
                }
                assertMatches(tree, oracle, &rng, queries: 40, "seed \(seed) left \(order.count)")
            }
            XCTAssertEqual(tree.height, 1)
            XCTAssertNil(tree.bounds)
        }
    }
}
