import SeededRandom
import SpatialIndex
import XCTest

/// The slow obvious model of an R-tree: a dictionary scanned in full for every question.
struct Oracle {
    var boxes: [Int32: Box] = [:]

    var count: Int { boxes.count }

    func query(x: Double, y: Double) -> [Int32] {
        boxes.filter { $0.value.contains(x: x, y: y) }.map(\.key).sorted()
    }

    func query(_ window: Box) -> [Int32] {
        boxes.filter { $0.value.intersects(window) }.map(\.key).sorted()
    }

    /// What a candidate query must find: the items whose box, widened to the Float32 values
    /// at or beyond its edges, holds the point rounded to the nearest Float32.
    func candidates(x: Double, y: Double) -> [Int32] {
        func down(_ v: Double) -> Float {
            var f = Float(v)
            while Double(f) > v { f = f.nextDown }
            return f
        }
        func up(_ v: Double) -> Float {
            var f = Float(v)
            while Double(f) < v { f = f.nextUp }
            return f
        }
        let px = Float(x)
        let py = Float(y)
        return boxes.filter { _, b in
            down(b.minX) <= px && px <= up(b.maxX) && down(b.minY) <= py && py <= up(b.maxY)
        }.map(\.key).sorted()
    }

    var bounds: Box? {
        boxes.values.reduce(nil as Box?) { acc, b in acc?.union(b) ?? b }
    }

    /// Present ids in increasing order. Use this, never the dictionary's own order, before
    /// drawing from `SplitMix64`: dictionary order changes from run to run.
    var ids: [Int32] { boxes.keys.sorted() }

    /// Boxes in id order.
    var boxesInIDOrder: [Box] { ids.map { boxes[$0]! } }

    /// Ids and boxes in id order, for bulk loading.
    var sorted: (ids: [Int32], boxes: [Box]) {
        let ids = boxes.keys.sorted()
        return (ids, ids.map { boxes[$0]! })
    }
}

extension RTree {
    /// Point query results, sorted, from a fresh buffer.
    func sortedQuery(x: Double, y: Double) -> [Int32] {
        var out = ContiguousArray<Int32>()
        query(x: x, y: y, into: &out)
        return out.sorted()
    }

    /// Candidate query results (the Float32 walk), sorted, from a fresh buffer.
    func sortedCandidates(x: Double, y: Double) -> [Int32] {
        var out = ContiguousArray<Int32>()
        withPointQuerier { $0.candidates(x: x, y: y, into: &out) }
        return out.sorted()
    }

    /// Box query results, sorted, from a fresh buffer.
    func sortedQuery(_ window: Box) -> [Int32] {
        var out = ContiguousArray<Int32>()
        query(window, into: &out)
        return out.sorted()
    }
}

/// Query points that probe the interesting places: random points around the data, and the
/// corners, edge midpoints and centres of stored boxes (exactly on the boundary).
func probePoints(_ oracle: Oracle, _ rng: inout SplitMix64, count: Int) -> [(Double, Double)] {
    var points: [(Double, Double)] = []
    let stored = oracle.boxesInIDOrder
    for _ in 0..<count {
        if stored.isEmpty || rng.chance(0.4) {
            // Integer grid points hit the many grid-aligned edges of `randomBox` exactly.
            if rng.chance(0.5) {
                points.append((Double(rng.int(-5...105)), Double(rng.int(-5...105))))
            } else {
                points.append((rng.unit() * 120 - 10, rng.unit() * 120 - 10))
            }
            continue
        }
        let b = stored[rng.int(0...stored.count - 1)]
        switch rng.int(0...4) {
        case 0: points.append((b.minX, b.minY))
        case 1: points.append((b.maxX, b.maxY))
        case 2: points.append((b.minX, b.maxY))
        case 3: points.append(((b.minX + b.maxX) / 2, b.minY))
        default: points.append((b.maxX, (b.minY + b.maxY) / 2))
        }
    }
    return points.filter { $0.0.isFinite && $0.1.isFinite }
}

/// Query windows: random windows, point windows, and windows that only touch a stored box.
func probeWindows(_ oracle: Oracle, _ rng: inout SplitMix64, count: Int) -> [Box] {
    var windows: [Box] = []
    let stored = oracle.boxesInIDOrder.filter { $0.minX.isFinite && $0.maxX.isFinite }
    for _ in 0..<count {
        if stored.isEmpty || rng.chance(0.5) {
            let x = Double(rng.int(-10...105))
            let y = Double(rng.int(-10...105))
            let w = rng.chance(0.2) ? 0 : Double(rng.int(0...30))
            windows.append(Box(minX: x, minY: y, maxX: x + w, maxY: y + Double(rng.int(0...30))))
            continue
        }
        let b = stored[rng.int(0...stored.count - 1)]
        switch rng.int(0...2) {
        case 0:  // touches the right edge from outside
            windows.append(Box(minX: b.maxX, minY: b.minY - 1, maxX: b.maxX + 3, maxY: b.minY))
        case 1:  // the box itself
            windows.append(b)
        default:  // a point window on a corner
            windows.append(Box(minX: b.minX, minY: b.maxY, maxX: b.minX, maxY: b.maxY))
        }
    }
    return windows
}

/// A random box of a mix of shapes: grid-aligned (shared edges and corners), arbitrary, points,
/// zero-width and zero-height segments, huge, and copies of earlier boxes.
func randomBox(_ rng: inout SplitMix64, previous: [Box] = []) -> Box {
    let kind = rng.int(0...99)
    switch kind {
    case 0..<35:
        let x = Double(rng.int(0...100))
        let y = Double(rng.int(0...100))
        return Box(
            minX: x, minY: y, maxX: x + Double(rng.int(1...8)), maxY: y + Double(rng.int(1...8)))
    case 35..<60:
        let x = rng.unit() * 100
        let y = rng.unit() * 100
        return Box(minX: x, minY: y, maxX: x + rng.unit() * 6, maxY: y + rng.unit() * 6)
    case 60..<72:
        let x = Double(rng.int(0...100))
        let y = rng.chance(0.5) ? Double(rng.int(0...100)) : rng.unit() * 100
        return Box(minX: x, minY: y, maxX: x, maxY: y)
    case 72..<78:
        let x = Double(rng.int(0...100))
        let y = Double(rng.int(0...100))
        return Box(minX: x, minY: y, maxX: x, maxY: y + Double(rng.int(1...10)))
    case 78..<84:
        let x = Double(rng.int(0...100))
        let y = Double(rng.int(0...100))
        return Box(minX: x, minY: y, maxX: x + Double(rng.int(1...10)), maxY: y)
    case 84..<86:
        return rng.chance(0.5)
            ? Box(minX: -1e300, minY: -1e300, maxX: 1e300, maxY: 1e300)
            : Box(minX: -20, minY: -20, maxX: 120, maxY: 60)
    default:
        if let copy = previous.randomElement(using: &rng) { return copy }
        return Box(minX: 50, minY: 50, maxX: 51, maxY: 51)
    }
}

/// Asserts the tree answers like the oracle: count, bounds, every stored box, absent ids,
/// point queries and window queries (as sorted sets). Also runs `checkInvariants()`.
func assertMatches(
    _ tree: RTree, _ oracle: Oracle, _ rng: inout SplitMix64, queries: Int = 150,
    _ context: @autoclosure () -> String = "", file: StaticString = #filePath, line: UInt = #line
) {
    tree.checkInvariants()
    XCTAssertEqual(tree.count, oracle.count, "count \(context())", file: file, line: line)
    XCTAssertEqual(tree.bounds, oracle.bounds, "bounds \(context())", file: file, line: line)
    for (id, box) in oracle.boxes {
        guard tree.box(of: id) == box else {
            XCTFail(
                "box(of: \(id)) is \(String(describing: tree.box(of: id))), want \(box) "
                    + context(),
                file: file, line: line)
            return
        }
    }
    for id: Int32 in [-1, -7, Int32.max, 1_000_000] where oracle.boxes[id] == nil {
        XCTAssertFalse(tree.contains(id: id), "contains \(id) \(context())", file: file, line: line)
        XCTAssertNil(tree.box(of: id), "box(of: \(id)) \(context())", file: file, line: line)
    }
    for (x, y) in probePoints(oracle, &rng, count: queries) {
        let got = tree.sortedQuery(x: x, y: y)
        let want = oracle.query(x: x, y: y)
        guard got == want else {
            XCTFail(
                "point (\(x), \(y)): got \(got), want \(want) \(context())", file: file, line: line)
            return
        }
        let candidates = tree.sortedCandidates(x: x, y: y)
        let wantCandidates = oracle.candidates(x: x, y: y)
        guard candidates == wantCandidates, Set(want).isSubset(of: candidates) else {
            XCTFail(
                "candidates at (\(x), \(y)): got \(candidates), want \(wantCandidates) "
                    + "(exact \(want)) \(context())", file: file, line: line)
            return
        }
    }
    for w in probeWindows(oracle, &rng, count: queries / 2) {
        let got = tree.sortedQuery(w)
        let want = oracle.query(w)
        guard got == want else {
            XCTFail("window \(w): got \(got), want \(want) \(context())", file: file, line: line)
            return
        }
    }
}
