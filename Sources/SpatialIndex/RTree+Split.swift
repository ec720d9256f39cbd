// The R* node split (Beckmann, Kriegel, Schneider, Seeger 1990), without forced reinsertion:
// the rebuild policy, not reinsertion, bounds long-run degradation.
//
// For each axis the fanout + 1 entries are sorted by lower edge and by upper edge; every cut that
// leaves at least minFill entries on both sides is a candidate. The axis with the smallest sum of
// candidate margins (half-perimeters) wins, favouring square nodes; on it the cut with the least
// overlap between the halves, then the least total area, is taken.

extension RTree {
    /// Splits the full `node` plus one new entry between `node` and a new sibling at its level.
    ///
    /// Back pointers (item map or children's parent and slot) are updated; the caller writes the
    /// returned boxes into the parent.
    ///
    /// - Returns: The sibling's index and the exact boxes of the sibling and of `node` afterwards.
    /// - Complexity: O(fanout log fanout).
    mutating func split(_ node: Int, adding box: Box, child: Int32) -> (
        sibling: Int, siblingBox: Box, keptBox: Box
    ) {
        let level = Int(nodeLevel[node])
        let base = node * fanout
        var boxes = ContiguousArray<Box>()
        var children = ContiguousArray<Int32>()
        boxes.reserveCapacity(fanout + 1)
        children.reserveCapacity(fanout + 1)
        for e in base..<base + fanout {
            boxes.append(entryBox(e))
            children.append(entryChild[e])
        }
        boxes.append(box)
        children.append(child)

        let (order, cut) = Self.rStarDistribution(boxes, minFill: minFill)
        let sibling = allocateNode(level: level)
        let siblingBase = sibling * fanout
        var kept = boxes[order[0]]
        var moved = boxes[order[cut]]
        for (k, i) in order.enumerated() {
            if k < cut {
                setEntry(base + k, box: boxes[i], child: children[i], inNodeAtLevel: level)
                kept = kept.union(boxes[i])
            } else {
                setEntry(
                    siblingBase + k - cut, box: boxes[i], child: children[i], inNodeAtLevel: level)
                moved = moved.union(boxes[i])
            }
        }
        nodeCount[node] = Int32(cut)
        nodeCount[sibling] = Int32(boxes.count - cut)
        return (sibling, moved, kept)
    }

    /// Chooses the R* distribution of `boxes`: the entries `order[..<cut]` stay, the rest move.
    ///
    /// - Complexity: O(k log k) for k boxes.
    static func rStarDistribution(_ boxes: ContiguousArray<Box>, minFill m: Int) -> (
        order: [Int], cut: Int
    ) {
        let total = boxes.count
        precondition(total >= 2 * m, "R* split needs at least 2 * minFill entries")
        var prefix = ContiguousArray(repeating: boxes[0], count: total)
        var suffix = ContiguousArray(repeating: boxes[0], count: total)

        var chosenOrder: [Int] = []
        var chosenCut = m
        var chosenMargin = Double.infinity
        for axis in 0..<2 {
            var marginSum = 0.0
            var axisOrder: [Int] = []
            var axisCut = m
            var bestOverlap = Double.infinity
            var bestArea = Double.infinity
            for byUpperEdge in [false, true] {
                let order = (0..<total).sorted { i, j in
                    let a = boxes[i]
                    let b = boxes[j]
                    let (a0, a1, b0, b1) =
                        axis == 0
                        ? (a.minX, a.maxX, b.minX, b.maxX) : (a.minY, a.maxY, b.minY, b.maxY)
                    return byUpperEdge ? (a1, a0, i) < (b1, b0, j) : (a0, a1, i) < (b0, b1, j)
                }
                prefix[0] = boxes[order[0]]
                for k in 1..<total { prefix[k] = prefix[k - 1].union(boxes[order[k]]) }
                suffix[total - 1] = boxes[order[total - 1]]
                for k in stride(from: total - 2, through: 0, by: -1) {
                    suffix[k] = suffix[k + 1].union(boxes[order[k]])
                }
                for cut in m...total - m {
                    let first = prefix[cut - 1]
                    let second = suffix[cut]
                    marginSum += first.margin + second.margin
                    let overlap = first.overlapArea(second)
                    let area = first.area + second.area
                    if axisOrder.isEmpty || overlap < bestOverlap
                        || (overlap == bestOverlap && area < bestArea)
                    {
                        axisOrder = order
                        axisCut = cut
                        bestOverlap = overlap
                        bestArea = area
                    }
                }
            }
            if chosenOrder.isEmpty || marginSum < chosenMargin {
                chosenOrder = axisOrder
                chosenCut = axisCut
                chosenMargin = marginSum
            }
        }
        return (chosenOrder, chosenCut)
    }
}
