// Dynamic insertion: Guttman's choose-subtree by least enlargement, R*-style node split
// (see RTree+Split.swift). Also used by `remove` to reinsert the entries of dissolved nodes.

extension RTree {
    /// Adds an item.
    ///
    /// Descends by least area enlargement (ties: smaller area, then first slot), adds the entry
    /// to a leaf and splits full nodes on the way back up with the R* split, growing a new root
    /// when the old one splits. May trigger an automatic `rebuild()` (see the rebuild policy).
    ///
    /// - Parameters:
    ///   - id: A non-negative id not in the tree; ids freed by `remove` may be reused.
    ///   - box: The item's box, `minX <= maxX` and `minY <= maxY`. Points, zero-width boxes,
    ///     infinite boxes and boxes equal to other items' are fine.
    /// - Precondition: `id >= 0`, `!contains(id: id)`, `box` ordered (no NaN).
    /// - Complexity: O(fanout * log n) amortised, rebuilds included.
    public mutating func insert(id: Int32, box: Box) {
        let i = mapSlot(id: id, box: box, "RTree.insert")
        precondition(itemEntry[i] == -1, "RTree.insert: id \(id) is already present")
        cellIndex = nil
        insertEntry(box: box, child: id, level: 0)
        count += 1
        noteUpdate()
    }

    /// Adds one box of a shared id: an id with any number of entries (a fence indexed under
    /// several pieces). None of its entries is mapped, so `box(of:)` gives nil for it and
    /// `remove(id:)` ignores it; `removeShared(id:boxes:)` takes its entries out by their boxes.
    /// A query reports the id once for each of its entries whose box it meets.
    ///
    /// - Precondition: `id >= 0`, the id absent or already shared, `box` ordered (no NaN).
    /// - Complexity: that of `insert`.
    public mutating func insertShared(id: Int32, box: Box) {
        let i = mapSlot(id: id, box: box, "RTree.insertShared")
        precondition(itemEntry[i] == -1 || itemEntry[i] == Self.sharedMark, "RTree.insertShared: id \(id) is present, not shared")
        itemEntry[i] = Self.sharedMark
        cellIndex = nil
        insertEntry(box: box, child: id, level: 0)
        count += 1
        noteUpdate()
    }

    /// Checks an id and box about to be inserted and grows the id map to hold the id; returns
    /// the id's index in the map.
    private mutating func mapSlot(id: Int32, box: Box, _ caller: StaticString) -> Int {
        precondition(id >= 0, "\(caller): id \(id) is negative")
        precondition(box.isOrdered, "\(caller): box \(box) for id \(id) is inverted or has NaN")
        let i = Int(id)
        if i >= itemEntry.count {
            itemEntry.append(contentsOf: repeatElement(-1, count: i + 1 - itemEntry.count))
        }
        return i
    }

    /// Puts an entry (an item at level 0, a subtree root one level lower otherwise) into a node
    /// at `level`, splitting as needed. The root must be at `level` or above.
    mutating func insertEntry(box: Box, child: Int32, level: Int) {
        var node = root
        // Ancestors are widened on the way down; after a split below them their box is still
        // the exact union, because the two halves together cover what the node plus the new
        // entry covered.
        while Int(nodeLevel[node]) > level {
            let e = chooseSubtree(node, for: box)
            setEntryBox(e, entryBox(e).union(box))
            node = Int(entryChild[e])
        }

        var newBox = box
        var newChild = child
        while true {
            let used = Int(nodeCount[node])
            let nodeLevel = Int(self.nodeLevel[node])
            if used < fanout {
                setEntry(
                    node * fanout + used, box: newBox, child: newChild, inNodeAtLevel: nodeLevel)
                nodeCount[node] = Int32(used + 1)
                return
            }
            let (sibling, siblingBox, keptBox) = split(node, adding: newBox, child: newChild)
            if node == root {
                let newRoot = allocateNode(level: nodeLevel + 1)
                let base = newRoot * fanout
                setEntry(base, box: keptBox, child: Int32(node), inNodeAtLevel: nodeLevel + 1)
                setEntry(
                    base + 1, box: siblingBox, child: Int32(sibling), inNodeAtLevel: nodeLevel + 1)
                nodeCount[newRoot] = 2
                root = newRoot
                return
            }
            let parent = Int(nodeParent[node])
            setEntryBox(parent * fanout + Int(nodeSlot[node]), keptBox)
            node = parent
            newBox = siblingBox
            newChild = Int32(sibling)
        }
    }

    /// The entry of `node` whose box grows least to take `box`.
    ///
    /// Ties go to the smaller box, then to the lower slot. Enlargements of infinite boxes are NaN
    /// and never win a comparison; that only affects quality, never correctness.
    func chooseSubtree(_ node: Int, for box: Box) -> Int {
        let start = node * fanout
        let end = start + Int(nodeCount[node])
        var best = start
        var bestGrowth = Double.infinity
        var bestArea = Double.infinity
        for e in start..<end {
            let b = entryBox(e)
            let area = b.area
            let growth = b.union(box).area - area
            if growth < bestGrowth || (growth == bestGrowth && area < bestArea) {
                best = e
                bestGrowth = growth
                bestArea = area
            }
        }
        return best
    }
}
