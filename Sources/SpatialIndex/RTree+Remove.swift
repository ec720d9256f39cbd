// Deletion with Guttman's CondenseTree: underflowing nodes are dissolved and their entries
// reinserted at their own level, so every non-root node keeps at least minFill entries and the
// height stays logarithmic however many items are removed.

extension RTree {
    /// Removes an item by id.
    ///
    /// Finds the leaf entry through the id map, fills its slot with the leaf's last entry, then
    /// walks up: a node left with fewer than `minFill` entries is unlinked and its entries are
    /// reinserted at their level (Guttman's CondenseTree); otherwise its box in the parent is
    /// shrunk to the exact union, stopping early once a box is unchanged. A root left with a
    /// single child is replaced by that child. Removing the last item leaves an empty root leaf,
    /// ready for inserts. May trigger an automatic `rebuild()` (see the rebuild policy).
    ///
    /// - Parameter id: The item to remove; negative and absent ids are ignored.
    /// - Returns: `true` if the item was present.
    /// - Complexity: O(fanout * log n) amortised: O(1) to find the leaf, O(height) ancestors,
    ///   and at most `minFill - 1` reinsertions per dissolved node.
    @discardableResult
    public mutating func remove(id: Int32) -> Bool {
        guard id >= 0, Int(id) < itemEntry.count else { return false }
        let e = Int(itemEntry[Int(id)])
        guard e >= 0 else { return false }
        let leaf = e / fanout
        cellIndex = nil
        removeEntry(at: e, of: leaf)
        itemEntry[Int(id)] = -1
        count -= 1
        condense(from: leaf)
        noteUpdate()
        return true
    }

    /// Removes every entry of a shared id (`insertShared`), given the boxes it was inserted
    /// with, and makes the id absent (free for `insert` or `insertShared` again).
    ///
    /// Each entry is found by descending only into nodes whose box contains its box (exact:
    /// an internal box is the union of its entries). A box given that has no entry left is
    /// skipped; an entry whose box is not given stays in the tree, unmapped: pass them all.
    /// - Returns: the number of entries removed.
    /// - Complexity: O(b * (nodes whose box contains the box) + fanout * log n) for b boxes:
    ///   about O(b log n) for boxes that overlap few others.
    @discardableResult
    public mutating func removeShared(id: Int32, boxes: some Sequence<Box>) -> Int {
        guard isShared(id: id) else { return 0 }
        var removed = 0
        for box in boxes {
            guard let e = sharedEntry(id: id, box: box) else { continue }
            let leaf = e / fanout
            cellIndex = nil
            removeEntry(at: e, of: leaf)
            count -= 1
            condense(from: leaf)
            removed += 1
            // After the last removal: the rebuild policy may repack, which needs the mark.
            noteUpdate()
        }
        itemEntry[Int(id)] = -1
        return removed
    }

    /// The slot of a leaf entry holding `id` with exactly `box`, or nil.
    func sharedEntry(id: Int32, box: Box) -> Int? {
        guard count > 0 else { return nil }
        var stack = [root]
        while let node = stack.popLast() {
            let base = node * fanout
            let leaf = nodeLevel[node] == 0
            for e in base..<base + Int(nodeCount[node]) {
                if leaf {
                    if entryChild[e] == id && entryMinX[e] == box.minX && entryMinY[e] == box.minY
                        && entryMaxX[e] == box.maxX && entryMaxY[e] == box.maxY
                    {
                        return e
                    }
                } else if entryMinX[e] <= box.minX && entryMinY[e] <= box.minY && entryMaxX[e] >= box.maxX
                    && entryMaxY[e] >= box.maxY
                {
                    stack.append(Int(entryChild[e]))
                }
            }
        }
        return nil
    }

    /// Deletes slot `e` of `node` by moving the node's last entry into it.
    mutating func removeEntry(at e: Int, of node: Int) {
        let last = node * fanout + Int(nodeCount[node]) - 1
        if e != last {
            setEntry(
                e, box: entryBox(last), child: entryChild[last], inNodeAtLevel: Int(nodeLevel[node])
            )
        }
        nodeCount[node] -= 1
    }

    /// Restores fill and tight boxes on the path from `start` (which just lost an entry) to the
    /// root.
    mutating func condense(from start: Int) {
        var orphanBoxes = ContiguousArray<Box>()
        var orphanChildren = ContiguousArray<Int32>()
        var orphanLevels = ContiguousArray<Int32>()

        var node = start
        while node != root {
            let parent = Int(nodeParent[node])
            let parentEntry = parent * fanout + Int(nodeSlot[node])
            let used = Int(nodeCount[node])
            if used < minFill {
                let base = node * fanout
                for e in base..<base + used {
                    orphanBoxes.append(entryBox(e))
                    orphanChildren.append(entryChild[e])
                    orphanLevels.append(nodeLevel[node])
                }
                removeEntry(at: parentEntry, of: parent)
                freeNode(node)
            } else {
                let tight = nodeBox(node)
                // Nothing above changed count, and this box is as before: ancestors are exact.
                if tight == entryBox(parentEntry) { break }
                setEntryBox(parentEntry, tight)
            }
            node = parent
        }

        // Only non-root nodes were dissolved, so the root is above every orphan's level.
        for i in orphanBoxes.indices {
            insertEntry(box: orphanBoxes[i], child: orphanChildren[i], level: Int(orphanLevels[i]))
        }

        while nodeLevel[root] > 0 && nodeCount[root] == 1 {
            let onlyChild = Int(entryChild[root * fanout])
            freeNode(root)
            root = onlyChild
            nodeParent[root] = -1
            nodeSlot[root] = -1
        }
    }
}
