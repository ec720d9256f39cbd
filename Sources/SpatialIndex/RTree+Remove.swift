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
