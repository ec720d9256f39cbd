import XCTest

@testable import SpatialIndex
import SeededRandom

/// Shared ids (`insertShared`, `removeShared`, `init(ids:boxes:shared:)`): an id with several
/// entries, as a fence indexed under several pieces. The oracle is a plain list of
/// (id, box) entries scanned in full; queries must report each shared id once per entry whose
/// box they meet.
final class SharedIDTests: XCTestCase {
    struct Entries {
        var unique: [Int32: Box] = [:]
        var shared: [Int32: [Box]] = [:]

        var count: Int { unique.count + shared.values.reduce(0) { $0 + $1.count } }

        func query(x: Double, y: Double) -> [Int32] {
            var out = unique.filter { $0.value.contains(x: x, y: y) }.map(\.key)
            for (id, boxes) in shared { out += boxes.filter { $0.contains(x: x, y: y) }.map { _ in id } }
            return out.sorted()
        }

        func query(_ window: Box) -> [Int32] {
            var out = unique.filter { $0.value.intersects(window) }.map(\.key)
            for (id, boxes) in shared { out += boxes.filter { $0.intersects(window) }.map { _ in id } }
            return out.sorted()
        }

        var allBoxes: [Box] {
            unique.keys.sorted().map { unique[$0]! } + shared.keys.sorted().flatMap { shared[$0]! }
        }
    }

    /// Ids handed out densely, freed ones reused half of the time (as the fence store does).
    struct IDs {
        var nextID: Int32 = 0
        var free: [Int32] = []
        mutating func next(_ rng: inout SplitMix64) -> Int32 {
            if !free.isEmpty && rng.chance(0.5) { return free.remove(at: rng.int(0...free.count - 1)) }
            nextID += 1
            return nextID - 1
        }
    }

    func check(_ tree: RTree, _ oracle: Entries, _ rng: inout SplitMix64, _ context: String) {
        tree.checkInvariants()
        XCTAssertEqual(tree.count, oracle.count, "count \(context)")
        for (id, box) in oracle.unique {
            XCTAssertEqual(tree.box(of: id), box, "box(of: \(id)) \(context)")
            XCTAssertFalse(tree.isShared(id: id), context)
        }
        for id in oracle.shared.keys {
            XCTAssertTrue(tree.contains(id: id), "contains shared \(id) \(context)")
            XCTAssertTrue(tree.isShared(id: id), "isShared \(id) \(context)")
            XCTAssertNil(tree.box(of: id), "box(of: shared \(id)) \(context)")
        }
        let boxes = oracle.allBoxes.filter { $0.minX.isFinite && $0.maxX.isFinite && $0.minY.isFinite && $0.maxY.isFinite }
        for q in 0..<80 {
            let (x, y): (Double, Double)
            if boxes.isEmpty || q % 3 == 0 {
                (x, y) = (Double(rng.int(-5...105)), Double(rng.int(-5...105)))
            } else {
                let b = boxes[rng.int(0...boxes.count - 1)]
                (x, y) = [(b.minX, b.minY), (b.maxX, b.maxY), ((b.minX + b.maxX) / 2, b.minY)][q % 3]
            }
            let want = oracle.query(x: x, y: y)
            XCTAssertEqual(tree.sortedQuery(x: x, y: y), want, "point (\(x), \(y)) \(context)")
            var candidates = tree.sortedCandidates(x: x, y: y)
            // Candidates are a superset (Float32 boxes); every wanted entry is among them, as
            // many times as it is wanted.
            for id in want {
                guard let i = candidates.firstIndex(of: id) else {
                    XCTFail("candidate \(id) missing at (\(x), \(y)) \(context)")
                    break
                }
                candidates.remove(at: i)
            }
            let window = Box(minX: x - 3, minY: y - 2, maxX: x + 1, maxY: y + 4)
            XCTAssertEqual(tree.sortedQuery(window), oracle.query(window), "window \(window) \(context)")
        }
    }

    /// Unique and shared ids inserted, removed and reused at random, with and without the
    /// rebuild policy (which must keep every shared entry), on bulk-loaded and empty trees.
    func testSharedIDsMatchTheEntryList() {
        for seed in 0..<24 {
            var rng = SplitMix64(seed: 7100 + UInt64(seed))
            let fanout = [4, 16, 5, 8][seed % 4]
            var oracle = Entries()
            var ids = IDs()
            // A start: bulk-loaded (unique and shared) or empty.
            if seed % 3 != 0 {
                for _ in 0..<rng.int(0...400) {
                    let id = ids.next(&rng)
                    if rng.chance(0.3) {
                        oracle.shared[id] = (0..<rng.int(1...9)).map { _ in randomBox(&rng) }
                    } else {
                        oracle.unique[id] = randomBox(&rng)
                    }
                }
                // An entry list in random order: the load must not depend on it being grouped.
                var list = oracle.unique.map { ($0.key, $0.value) } + oracle.shared.flatMap { id, boxes in boxes.map { (id, $0) } }
                list.sort { ($0.0, $0.1.minX, $0.1.minY) < ($1.0, $1.1.minX, $1.1.minY) }
                list.shuffle(using: &rng)
                // A shared id listed without entries is marked all the same.
                let emptyShared = ids.next(&rng)
                oracle.shared[emptyShared] = []
                var tree = RTree(
                    ids: list.map(\.0), boxes: list.map(\.1), shared: oracle.shared.keys.sorted(), fanout: fanout)
                check(tree, oracle, &rng, "seed \(seed) bulk")
                tree.insertShared(id: emptyShared, box: Box(minX: 1, minY: 1, maxX: 2, maxY: 2))
                oracle.shared[emptyShared] = [Box(minX: 1, minY: 1, maxX: 2, maxY: 2)]
                check(tree, oracle, &rng, "seed \(seed) bulk + 1")
                runOps(&tree, &oracle, &rng, seed: seed, ids: &ids)
            } else {
                var tree = RTree(fanout: fanout)
                runOps(&tree, &oracle, &rng, seed: seed, ids: &ids)
            }
        }
    }

    func runOps(
        _ tree: inout RTree, _ oracle: inout Entries, _ rng: inout SplitMix64, seed: Int,
        ids: inout IDs
    ) {
        if seed % 2 == 0 { tree.minimumUpdatesBeforeRebuild = 8 }  // rebuilds often, mid removeShared too
        for round in 0..<8 {
            for _ in 0..<rng.int(1...120) {
                switch rng.int(0...9) {
                case 0...2:
                    let id = ids.next(&rng)
                    let b = randomBox(&rng)
                    tree.insert(id: id, box: b)
                    oracle.unique[id] = b
                case 3...5:
                    let id = ids.next(&rng)
                    var boxes = (0..<rng.int(1...12)).map { _ in randomBox(&rng) }
                    if rng.chance(0.2), let first = boxes.first { boxes.append(first) }  // the same box twice
                    for b in boxes { tree.insertShared(id: id, box: b) }
                    oracle.shared[id] = boxes
                case 6, 7:
                    guard let id = oracle.unique.keys.sorted().randomElement(using: &rng) else { continue }
                    XCTAssertTrue(tree.remove(id: id))
                    oracle.unique[id] = nil
                    ids.free.append(id)
                default:
                    guard let id = oracle.shared.keys.sorted().randomElement(using: &rng) else { continue }
                    // remove(id:) leaves a shared id alone.
                    XCTAssertFalse(tree.remove(id: id), "seed \(seed): remove(id:) of shared \(id)")
                    let boxes = oracle.shared[id]!
                    XCTAssertEqual(tree.removeShared(id: id, boxes: boxes.shuffled(using: &rng)), boxes.count)
                    XCTAssertFalse(tree.contains(id: id))
                    oracle.shared[id] = nil
                    ids.free.append(id)
                }
            }
            check(tree, oracle, &rng, "seed \(seed) round \(round)")
        }
        // Everything out: an empty tree, every id free.
        for id in oracle.unique.keys.sorted() { XCTAssertTrue(tree.remove(id: id)) }
        for (id, boxes) in oracle.shared { tree.removeShared(id: id, boxes: boxes) }
        XCTAssertEqual(tree.count, 0, "seed \(seed)")
        XCTAssertNil(tree.bounds, "seed \(seed)")
        tree.checkInvariants()
    }

    /// A shared id can be reused as a unique one after `removeShared`, and a unique id is not
    /// taken by `removeShared`.
    func testSharedIDLifecycle() {
        var tree = RTree(fanout: 4)
        let a = Box(minX: 0, minY: 0, maxX: 1, maxY: 1)
        let b = Box(minX: 5, minY: 5, maxX: 6, maxY: 6)
        tree.insertShared(id: 3, box: a)
        tree.insertShared(id: 3, box: b)
        tree.insert(id: 4, box: a)
        XCTAssertEqual(tree.sortedQuery(x: 0.5, y: 0.5), [3, 4])
        XCTAssertEqual(tree.sortedQuery(Box(minX: 0, minY: 0, maxX: 6, maxY: 6)), [3, 3, 4])
        XCTAssertEqual(tree.removeShared(id: 4, boxes: [a]), 0, "a unique id is not shared")
        XCTAssertEqual(tree.box(of: 4), a)
        XCTAssertEqual(tree.removeShared(id: 3, boxes: [b, Box(minX: 9, minY: 9, maxX: 9, maxY: 9), a]), 2)
        XCTAssertFalse(tree.contains(id: 3))
        tree.insert(id: 3, box: b)
        XCTAssertEqual(tree.box(of: 3), b)
        tree.checkInvariants()
    }
}
