import XCTest

@testable import SpatialIndex
import SeededRandom

/// The cell grid point candidate queries start from (`RTree+CellIndex.swift`): the same
/// candidates as the Float32 walk from the root, once each, over many shapes of data.
final class CellIndexTests: XCTestCase {
    /// Candidates with and without the grid, against the Float32 oracle, at the oracle's probe
    /// points (box corners and edge midpoints, integer grid points, random points).
    func assertCandidatesMatch(
        _ tree: RTree, _ oracle: Oracle, _ rng: inout SplitMix64, queries: Int = 400, _ context: String,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        var plain = tree
        plain.cellIndex = nil
        for (x, y) in probePoints(oracle, &rng, count: queries) {
            let want = oracle.candidates(x: x, y: y)
            let got = tree.sortedCandidates(x: x, y: y)
            guard got == want, plain.sortedCandidates(x: x, y: y) == want else {
                XCTFail("candidates at (\(x), \(y)): got \(got), want \(want) \(context)", file: file, line: line)
                return
            }
        }
    }

    func testBulkLoadedTreesMatchTheFloat32OracleOverSeeds() {
        for seed in UInt64(1)...30 {
            var rng = SplitMix64(seed: seed)
            var oracle = Oracle()
            let n = rng.int(1...3000)
            for id in 0..<Int32(n) {
                // Small boxes, points, and now and then a wide one; finite, so a grid is built.
                let x = rng.unit() * 100
                let y = rng.unit() * 100
                let w = rng.chance(0.05) ? rng.unit() * 60 : rng.unit() * 3
                let h = rng.chance(0.05) ? rng.unit() * 60 : rng.unit() * 3
                oracle.boxes[id] = rng.chance(0.1) ? Box(minX: x, minY: y, maxX: x, maxY: y) : Box(minX: x, minY: y, maxX: x + w, maxY: y + h)
            }
            let (ids, boxes) = oracle.sorted
            let tree = RTree(ids: ids, boxes: boxes, fanout: [4, 8, 16, 32][Int(seed % 4)])
            XCTAssertTrue(tree.hasCellIndex, "seed \(seed)")
            XCTAssertNil(tree.cellIndex?.firstViolation(of: tree), "seed \(seed)")
            assertCandidatesMatch(tree, oracle, &rng, "seed \(seed)")
        }
    }

    /// Where Float32 steps are wide against the cells (coordinates near 1e6, boxes on the
    /// Float32 lattice), a point a third of a step off a box rounds onto it: the cell is taken
    /// from the rounded point, as the walk's compares are, or such candidates go missing.
    func testPointsFindTheCellOfTheirFloat32Rounding() {
        var rng = SplitMix64(seed: 12)
        var oracle = Oracle()
        let step = 0.0625  // one Float32 step at 1e6
        for id in 0..<Int32(4000) {
            let x = 1e6 + Double(rng.int(0...199)) * step
            let y = 1e6 + Double(rng.int(0...199)) * step
            oracle.boxes[id] = Box(minX: x, minY: y, maxX: x, maxY: y)
        }
        let (ids, boxes) = oracle.sorted
        let tree = RTree(ids: ids, boxes: boxes, fanout: 8)
        XCTAssertTrue(tree.hasCellIndex)
        var found = 0
        for _ in 0..<600 {
            let b = boxes[rng.int(0...boxes.count - 1)]
            let x = b.minX + (rng.chance(0.5) ? 0.03 : -0.03)
            let y = b.minY + (rng.chance(0.5) ? 0.03 : -0.03)
            let want = oracle.candidates(x: x, y: y)
            found += want.count
            XCTAssertEqual(tree.sortedCandidates(x: x, y: y), want, "(\(x), \(y))")
        }
        XCTAssertGreaterThan(found, 600, "the points should round onto their boxes")
    }

    /// Every box over the same spot: cells would list hundreds of leaves, so they list
    /// ancestors instead, and results still come once each.
    func testCrowdedCellsListAncestorsAndRepeatNothing() {
        var rng = SplitMix64(seed: 9)
        var oracle = Oracle()
        for id in 0..<Int32(2000) {
            let x = 50 + rng.unit()
            let y = 50 + rng.unit()
            oracle.boxes[id] = Box(minX: x - 10, minY: y - 10, maxX: x + 10, maxY: y + 10)
        }
        // A sparse rim, so the grid has many cells and the crowd sits in a few of them.
        for id in 2000..<Int32(2400) {
            let a = Double(id) * 0.7
            oracle.boxes[id] = Box(minX: 50 + 45 * cos(a), minY: 50 + 45 * sin(a), maxX: 50.1 + 45 * cos(a), maxY: 50.1 + 45 * sin(a))
        }
        let (ids, boxes) = oracle.sorted
        let tree = RTree(ids: ids, boxes: boxes, fanout: 8)
        let grid = tree.cellIndex!
        XCTAssertNil(grid.firstViolation(of: tree))
        var widest = 0
        var ancestorsListed = 0
        for c in 0..<(grid.columns * grid.rows) {
            let listed = grid.nodes[Int(grid.offsets[c])..<Int(grid.offsets[c + 1])]
            widest = max(widest, listed.count)
            ancestorsListed += listed.filter { tree.nodeLevel[Int($0)] > 0 }.count
        }
        XCTAssertLessThanOrEqual(widest, RTreeCellIndex.maxNodesPerCell)
        XCTAssertGreaterThan(ancestorsListed, 0, "no crowded cell listed an ancestor")
        // Crowded cells climb only as far as they must: the distinct parents of the crowd's
        // leaves fit, so no cell falls back to the root.
        let rootCells = (0..<(grid.columns * grid.rows)).filter { c in
            grid.nodes[Int(grid.offsets[c])..<Int(grid.offsets[c + 1])].contains(Int32(tree.root))
        }
        XCTAssertEqual(rootCells.count, 0, "cells listing the root")
        assertCandidatesMatch(tree, oracle, &rng, queries: 600, "crowded")
        for _ in 0..<200 {
            let x = 40 + rng.unit() * 20
            let y = 40 + rng.unit() * 20
            XCTAssertEqual(tree.sortedCandidates(x: x, y: y), oracle.candidates(x: x, y: y), "(\(x), \(y))")
        }
    }

    /// Extents with no width or no height, a single box, and boxes sharing one point.
    func testDegenerateExtents() {
        var rng = SplitMix64(seed: 4)
        let shapes: [[Box]] = [
            (0..<300).map { i in Box(minX: 5, minY: Double(i), maxX: 5, maxY: Double(i) + 2) },  // one vertical line
            (0..<300).map { i in Box(minX: Double(i) / 3, minY: -1, maxX: Double(i) / 3 + 1, maxY: -1) },  // one horizontal line
            [Box(minX: 1, minY: 2, maxX: 3, maxY: 4)],
            (0..<100).map { _ in Box(minX: 7, minY: 7, maxX: 7, maxY: 7) },
        ]
        for (k, boxes) in shapes.enumerated() {
            var oracle = Oracle()
            for (i, b) in boxes.enumerated() { oracle.boxes[Int32(i)] = b }
            let (ids, sorted) = oracle.sorted
            let tree = RTree(ids: ids, boxes: sorted, fanout: 8)
            XCTAssertTrue(tree.hasCellIndex, "shape \(k)")
            XCTAssertNil(tree.cellIndex?.firstViolation(of: tree), "shape \(k)")
            assertCandidatesMatch(tree, oracle, &rng, "shape \(k)")
            for b in boxes.prefix(50) {
                XCTAssertEqual(tree.sortedCandidates(x: b.minX, y: b.maxY), oracle.candidates(x: b.minX, y: b.maxY), "shape \(k) \(b)")
            }
            XCTAssertEqual(tree.sortedCandidates(x: .nan, y: 1), [])
        }
    }

    /// Boxes whose Float32 bounds overflow leave the tree without a grid, and queries walk
    /// from the root.
    func testUnboundedExtentFallsBackToTheWalk() {
        var oracle = Oracle()
        for i in 0..<200 { oracle.boxes[Int32(i)] = Box(minX: Double(i), minY: 0, maxX: Double(i) + 1, maxY: 1) }
        oracle.boxes[200] = Box(minX: 0, minY: 0, maxX: 1e300, maxY: 1)
        let (ids, boxes) = oracle.sorted
        let tree = RTree(ids: ids, boxes: boxes, fanout: 8)
        XCTAssertFalse(tree.hasCellIndex)
        var rng = SplitMix64(seed: 2)
        assertCandidatesMatch(tree, oracle, &rng, "unbounded")
    }

    /// Inserts and removes drop the grid (they split and free the nodes it names);
    /// `buildCellIndex()` makes a new one that matches the changed tree.
    func testUpdatesDropTheGridAndRebuildingRestoresIt() {
        var rng = SplitMix64(seed: 21)
        var oracle = Oracle()
        for id in 0..<Int32(1500) {
            let x = rng.unit() * 100
            let y = rng.unit() * 100
            oracle.boxes[id] = Box(minX: x, minY: y, maxX: x + rng.unit() * 4, maxY: y + rng.unit() * 4)
        }
        let (ids, boxes) = oracle.sorted
        var tree = RTree(ids: ids, boxes: boxes, fanout: 8)
        tree.minimumUpdatesBeforeRebuild = .max
        XCTAssertTrue(tree.hasCellIndex)
        for round in 0..<6 {
            for _ in 0..<150 {
                if rng.chance(0.5), let id = oracle.ids.randomElement(using: &rng) {
                    XCTAssertTrue(tree.remove(id: id))
                    oracle.boxes[id] = nil
                } else {
                    let id = Int32(1500 + round * 1000 + rng.int(0...999))
                    guard oracle.boxes[id] == nil else { continue }
                    let x = rng.unit() * 120 - 10
                    let y = rng.unit() * 120 - 10
                    let b = Box(minX: x, minY: y, maxX: x + rng.unit() * 8, maxY: y + rng.unit() * 8)
                    tree.insert(id: id, box: b)
                    oracle.boxes[id] = b
                }
            }
            XCTAssertFalse(tree.hasCellIndex, "round \(round)")
            assertCandidatesMatch(tree, oracle, &rng, "round \(round), no grid")
            tree.buildCellIndex()
            XCTAssertTrue(tree.hasCellIndex, "round \(round)")
            XCTAssertNil(tree.cellIndex?.firstViolation(of: tree), "round \(round)")
            tree.checkInvariants()
            assertCandidatesMatch(tree, oracle, &rng, "round \(round), rebuilt grid")
        }
    }

    /// The grid's checker notices a cell that misses a leaf and a cell that lists a node and
    /// its ancestor.
    func testCheckerNoticesBrokenGrids() throws {
        var rng = SplitMix64(seed: 5)
        let boxes = (0..<800).map { _ -> Box in
            let x = rng.unit() * 100
            let y = rng.unit() * 100
            return Box(minX: x, minY: y, maxX: x + 2, maxY: y + 2)
        }
        var tree = RTree(ids: (0..<Int32(800)).map { $0 }, boxes: boxes, fanout: 8)
        let grid = try XCTUnwrap(tree.cellIndex)
        // Find a cell listing a leaf; drop that leaf from it.
        let c = try XCTUnwrap((0..<(grid.columns * grid.rows)).first { grid.offsets[$0 + 1] > grid.offsets[$0] })
        var nodes = grid.nodes
        nodes.remove(at: Int(grid.offsets[c]))
        var offsets = grid.offsets
        for k in (c + 1)..<offsets.count { offsets[k] -= 1 }
        tree.cellIndex = grid.replacing(offsets: offsets, nodes: nodes)
        XCTAssertTrue(tree.cellIndex!.firstViolation(of: tree)?.contains("does not reach") ?? false)
        // List the first leaf's parent beside it.
        let leaf = Int(grid.nodes[Int(grid.offsets[c])])
        nodes = grid.nodes
        nodes.insert(tree.nodeParent[leaf], at: Int(grid.offsets[c]))
        offsets = grid.offsets
        for k in (c + 1)..<offsets.count { offsets[k] += 1 }
        tree.cellIndex = grid.replacing(offsets: offsets, nodes: nodes)
        XCTAssertTrue(tree.cellIndex!.firstViolation(of: tree)?.contains("ancestor") ?? false)
    }

    /// Far fewer nodes per query than the walk from the root on a large uniform tree.
    func testGridEntersFewerNodesThanTheWalk() {
        var rng = SplitMix64(seed: 8)
        let n = 100_000
        let boxes = (0..<n).map { _ -> Box in
            let x = rng.unit() * 100
            let y = rng.unit() * 100
            return Box(minX: x, minY: y, maxX: x + 0.3, maxY: y + 0.3)
        }
        let tree = RTree(ids: (0..<Int32(n)).map { $0 }, boxes: boxes, fanout: 16)
        var plain = tree
        plain.cellIndex = nil
        var grid = 0
        var walk = 0
        tree.withPointQuerier { q in
            plain.withPointQuerier { p in
                for _ in 0..<2000 {
                    let x = rng.unit() * 100
                    let y = rng.unit() * 100
                    grid += q.nodesEntered(x: x, y: y)
                    walk += p.nodesEntered(x: x, y: y)
                }
            }
        }
        XCTAssertLessThan(Double(grid), 0.6 * Double(walk), "grid \(grid) nodes, walk \(walk)")
    }
}
