import XCTest

@testable import SpatialIndex
import SeededRandom

/// The checker itself: each kind of corruption is noticed and named.
final class InvariantCheckerTests: XCTestCase {
    #if FENCE_INTERNAL_CHECKS
        func makeTree() -> RTree {
            var rng = SplitMix64(seed: 77)
            // Finite, non-empty boxes: a unit added to 1e300 would change nothing.
            let boxes = (0..<500).map { _ in
                let x = rng.unit() * 100
                let y = rng.unit() * 100
                return Box(minX: x, minY: y, maxX: x + 1 + rng.unit(), maxY: y + 1 + rng.unit())
            }
            let tree = RTree(ids: (0..<Int32(500)).map { $0 }, boxes: boxes, fanout: 8)
            XCTAssertNil(tree.firstInvariantViolation())
            XCTAssertGreaterThanOrEqual(tree.height, 3)
            return tree
        }

        func assertViolation(
            _ corrupt: (inout RTree) -> Void, mentions words: String,
            file: StaticString = #filePath, line: UInt = #line
        ) {
            var tree = makeTree()
            corrupt(&tree)
            let message = tree.firstInvariantViolation()
            XCTAssertNotNil(message, "corruption not noticed", file: file, line: line)
            XCTAssertTrue(
                message?.contains(words) ?? false, "\(String(describing: message))", file: file,
                line: line)
        }

        /// Makes the ancestors' boxes exact again after a leaf was edited, so that the checker
        /// reaches the leaf itself.
        func retighten(_ tree: inout RTree, from leaf: Int) {
            var node = leaf
            while node != tree.root {
                let parent = Int(tree.nodeParent[node])
                tree.setEntryBox(
                    parent * tree.fanout + Int(tree.nodeSlot[node]), tree.nodeBox(node))
                node = parent
            }
        }

        func testLooseParentBoxIsNoticed() {
            assertViolation(
                { tree in
                    let e = tree.root * tree.fanout
                    tree.entryMaxX[e] += 1
                }, mentions: "its entries span")
        }

        func testStaleFloat32BoxIsNoticed() {
            assertViolation(
                { tree in
                    let leaf = Int(tree.itemEntry[7]) / tree.fanout
                    tree.narrow[leaf * 4 * tree.fanout + 2 * tree.fanout] += 1
                }, mentions: "Float32 box does not match")
        }

        func testBoxNotCoveringChildIsNoticed() {
            assertViolation(
                { tree in
                    let e = tree.root * tree.fanout
                    tree.entryMaxX[e] = tree.entryMinX[e]
                }, mentions: "its entries span")
        }

        func testStaleItemMapIsNoticed() {
            assertViolation({ $0.itemEntry.swapAt(3, 4) }, mentions: "the map says")
        }

        func testUnderfullNodeIsNoticed() {
            assertViolation(
                { tree in
                    let leaf = Int(tree.itemEntry[0]) / tree.fanout
                    tree.nodeCount[leaf] = 1
                    retighten(&tree, from: leaf)
                }, mentions: "minFill")
        }

        func testWrongCountIsNoticed() {
            assertViolation({ $0.count += 1 }, mentions: "count is")
        }

        func testWrongParentPointerIsNoticed() {
            assertViolation(
                { tree in
                    let child = Int(tree.entryChild[tree.root * tree.fanout])
                    tree.nodeSlot[child] += 1
                }, mentions: "says parent")
        }

        func testWrongLevelIsNoticed() {
            assertViolation(
                { tree in
                    let child = Int(tree.entryChild[tree.root * tree.fanout])
                    tree.nodeLevel[child] += 1
                }, mentions: "at level")
        }

        func testUnorderedBoxIsNoticed() {
            assertViolation(
                { tree in
                    let e = Int(tree.itemEntry[7])
                    tree.entryMinY[e] = tree.entryMaxY[e] + 1
                    retighten(&tree, from: e / tree.fanout)
                }, mentions: "unordered box")
        }

        func testLeakedNodeIsNoticed() {
            assertViolation(
                { _ = $0.allocateNode(level: 0) }, mentions: "neither reachable nor free")
        }

        func testMissedRebuildIsNoticed() {
            assertViolation({ $0.updatesSinceRebuild = 5000 }, mentions: "threshold")
        }
    #endif
}
