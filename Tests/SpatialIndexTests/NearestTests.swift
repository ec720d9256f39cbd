import SeededRandom
import SpatialIndex
import XCTest

/// Euclidean distance from a point to a box: 0 inside, monotone under containment.
func distance(_ x: Double, _ y: Double, _ b: Box) -> Double {
    let dx = max(b.minX - x, 0, x - b.maxX)
    let dy = max(b.minY - y, 0, y - b.maxY)
    return (dx * dx + dy * dy).squareRoot()
}

final class NearestTests: XCTestCase {
    struct Visit: Equatable, Comparable {
        var bound: Double
        var id: Int32
        static func < (a: Visit, b: Visit) -> Bool { (a.bound, a.id) < (b.bound, b.id) }
    }

    /// Full traversal visits every item once, in non-decreasing bound, with the right bounds.
    func testOrderMatchesSortedBruteForce() {
        for seed in 0..<24 {
            var rng = SplitMix64(seed: 4000 + UInt64(seed))
            var oracle = Oracle()
            var previous: [Box] = []
            let n = [0, 1, 2, 17, 300, 1500][seed % 6]
            for id in 0..<Int32(n) {
                let b = randomBox(&rng, previous: previous)
                previous.append(b)
                oracle.boxes[id] = b
            }
            let (ids, boxes) = oracle.sorted
            var tree = RTree(ids: ids, boxes: boxes, fanout: seed % 2 == 0 ? 16 : 4)
            // Half the seeds also churn the tree so the search runs over dynamic nodes.
            if seed % 4 >= 2 {
                for id in 0..<Int32(n / 3) {
                    tree.remove(id: id)
                    let b = randomBox(&rng)
                    tree.insert(id: id, box: b)
                    oracle.boxes[id] = b
                }
            }
            tree.checkInvariants()
            for _ in 0..<10 {
                let x = rng.unit() * 120 - 10
                let y = rng.unit() * 120 - 10
                var got: [Visit] = []
                tree.nearest(
                    lowerBound: { distance(x, y, $0) },
                    visit: { id, bound in
                        got.append(Visit(bound: bound, id: id))
                        return true
                    })
                let want = oracle.boxes.map { Visit(bound: distance(x, y, $0.value), id: $0.key) }
                    .sorted()
                XCTAssertEqual(
                    got.map(\.bound), got.map(\.bound).sorted(),
                    "seed \(seed): bounds must not decrease")
                XCTAssertEqual(got.sorted(), want, "seed \(seed) at (\(x), \(y))")
            }
        }
    }

    /// Stopping after k visits yields exactly the k smallest bounds.
    func testEarlyStopGivesKNearest() {
        for seed in 0..<20 {
            var rng = SplitMix64(seed: 5000 + UInt64(seed))
            var oracle = Oracle()
            for id in 0..<Int32(800) { oracle.boxes[id] = randomBox(&rng) }
            let (ids, boxes) = oracle.sorted
            let tree = RTree(ids: ids, boxes: boxes)
            let k = 1 + rng.int(0...20)
            let x = rng.unit() * 100
            let y = rng.unit() * 100
            var got: [Double] = []
            var calls = 0
            tree.nearest(
                lowerBound: { distance(x, y, $0) },
                visit: { _, bound in
                    got.append(bound)
                    calls += 1
                    return calls < k
                })
            XCTAssertEqual(calls, k, "visit is not called after it returns false")
            let want = oracle.boxes.values.map { distance(x, y, $0) }.sorted().prefix(k)
            XCTAssertEqual(got, Array(want), "seed \(seed)")
        }
    }

    func testEmptyTreeVisitsNothing() {
        RTree().nearest(
            lowerBound: { _ in
                XCTFail("no bound on an empty tree")
                return 0
            },
            visit: { _, _ in
                XCTFail("no visit on an empty tree")
                return true
            })
    }

    /// Equal bounds: items before nodes, lower ids first within what is known.
    func testTiesAreDeterministic() {
        let boxes = (0..<100).map { _ in Box(minX: 0, minY: 0, maxX: 1, maxY: 1) }
        let tree = RTree(ids: (0..<Int32(100)).map { $0 }, boxes: boxes)
        var first: [Int32] = []
        var second: [Int32] = []
        tree.nearest(
            lowerBound: { _ in 0 },
            visit: { id, _ in
                first.append(id)
                return true
            })
        tree.nearest(
            lowerBound: { _ in 0 },
            visit: { id, _ in
                second.append(id)
                return true
            })
        XCTAssertEqual(first, second)
        XCTAssertEqual(first.sorted(), (0..<Int32(100)).map { $0 })
    }
}
