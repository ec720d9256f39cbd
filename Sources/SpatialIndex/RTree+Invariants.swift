extension RTree {
    /// Checks every structural invariant and traps with a description of the first violation.
    ///
    /// Checked: array sizes agree with the node count and fanout; the root has no parent; every
    /// reachable node is reached once, is not free, and is one level below its parent, so all
    /// leaves are at level 0 and equally deep; each node's parent and slot point back at the
    /// entry that holds it; each internal entry's box equals the exact union of its child's
    /// entries (covering and tight); every box is ordered; non-root nodes hold `minFill ...
    /// fanout` entries, an internal root at least 2, a leaf root 0 only when the tree is empty;
    /// the id map and the leaf entries agree both ways and `count` matches both; unreachable
    /// nodes are exactly the free list; `updatesSinceRebuild` is within the rebuild threshold.
    ///
    /// Compiled only with `FENCE_INTERNAL_CHECKS` (debug builds); in release builds it does
    /// nothing.
    ///
    /// - Complexity: O(n + ids) with checks on, O(1) without.
    public func checkInvariants() {
        #if FENCE_INTERNAL_CHECKS
            if let violation = firstInvariantViolation() {
                fatalError("RTree invariant violated: \(violation)")
            }
        #endif
    }

    #if FENCE_INTERNAL_CHECKS
        /// The first broken invariant, described, or `nil`; `checkInvariants()` traps on it.
        /// Separate so that tests can corrupt a tree and see the checker notice.
        func firstInvariantViolation() -> String? {
            struct Violation: Error { let message: String }
            func check(_ condition: Bool, _ message: @autoclosure () -> String) throws {
                if !condition { throw Violation(message: message()) }
            }
            do {
                let nodes = nodeCount.count
                try check(
                    fanout >= 4 && minFill >= 2 && 2 * minFill <= fanout + 1,
                    "fanout \(fanout), minFill \(minFill)")
                try check(
                    nodeLevel.count == nodes && nodeParent.count == nodes
                        && nodeSlot.count == nodes,
                    "node arrays have different lengths")
                for a in [entryMinX, entryMinY, entryMaxX, entryMaxY] {
                    try check(
                        a.count == nodes * fanout,
                        "entry array has \(a.count) slots for \(nodes) nodes"
                    )
                }
                try check(
                    entryChild.count == nodes * fanout, "entryChild has \(entryChild.count) slots")
                try check(narrow.count == 4 * nodes * fanout, "narrow has \(narrow.count) floats")
                try check(root >= 0 && root < nodes, "root \(root) out of 0..<\(nodes)")
                try check(nodeParent[root] == -1, "root \(root) has parent \(nodeParent[root])")
                try check(nodeLevel[root] >= 0, "root \(root) is marked free")

                var reached = [Bool](repeating: false, count: nodes)
                var stack = [root]
                var leafEntries = 0
                var sharedEntries = 0
                reached[root] = true
                while let node = stack.popLast() {
                    let used = Int(nodeCount[node])
                    let level = Int(nodeLevel[node])
                    try check(level >= 0, "reachable node \(node) is marked free")
                    try check(
                        used <= fanout, "node \(node) holds \(used) > fanout \(fanout) entries")
                    if node == root {
                        if level > 0 {
                            try check(used >= 2, "internal root \(node) has \(used) entries")
                        } else {
                            try check(
                                (used == 0) == (count == 0),
                                "root leaf holds \(used) entries, count is \(count)")
                        }
                    } else {
                        try check(
                            used >= minFill,
                            "node \(node) at level \(level) holds \(used) < minFill \(minFill)")
                    }
                    let base = node * fanout
                    for k in 0..<used {
                        let e = base + k
                        let b = entryBox(e)
                        try check(b.isOrdered, "entry \(k) of node \(node) has unordered box \(b)")
                        let child = Int(entryChild[e])
                        if level == 0 {
                            leafEntries += 1
                            try check(
                                child >= 0 && child < itemEntry.count,
                                "leaf \(node) holds id \(child) outside the id map")
                            try check(
                                Int(itemEntry[child]) == e || itemEntry[child] == Self.sharedMark,
                                "id \(child) is in slot \(e) but the map says \(itemEntry[child])")
                            if itemEntry[child] == Self.sharedMark { sharedEntries += 1 }
                        } else {
                            try check(
                                child >= 0 && child < nodes,
                                "node \(node) entry \(k) points at \(child)")
                            try check(!reached[child], "node \(child) is reached twice")
                            reached[child] = true
                            try check(
                                Int(nodeLevel[child]) == level - 1,
                                "node \(child) at level \(nodeLevel[child]) "
                                    + "under node \(node) at level \(level)"
                            )
                            try check(
                                Int(nodeParent[child]) == node && Int(nodeSlot[child]) == k,
                                "node \(child) says parent \(nodeParent[child]) "
                                    + "slot \(nodeSlot[child]); it is \(node) slot \(k)"
                            )
                            try check(nodeCount[child] > 0, "node \(child) is empty")
                            if nodeCount[child] > 0 {
                                let tight = nodeBox(child)
                                try check(
                                    b == tight,
                                    "entry for node \(child) is \(b); its entries span \(tight)")
                            }
                            stack.append(child)
                        }
                        let block = node * 4 * fanout + k
                        try check(
                            narrow[block] == Self.floatDown(b.minX) && narrow[block + fanout] == Self.floatDown(b.minY)
                                && narrow[block + 2 * fanout] == Self.floatUp(b.maxX)
                                && narrow[block + 3 * fanout] == Self.floatUp(b.maxY),
                            "entry \(k) of node \(node): Float32 box does not match \(b)")
                    }
                }
                try check(leafEntries == count, "\(leafEntries) leaf entries but count is \(count)")
                let mapped = itemEntry.lazy.filter { $0 >= 0 }.count
                try check(
                    mapped + sharedEntries == count,
                    "id map holds \(mapped) ids and \(sharedEntries) shared entries but count is \(count)")

                var free = [Bool](repeating: false, count: nodes)
                for f in freeNodes {
                    let n = Int(f)
                    try check(n >= 0 && n < nodes, "free node \(n) out of range")
                    try check(!free[n], "node \(n) is free twice")
                    try check(!reached[n], "free node \(n) is reachable")
                    try check(nodeLevel[n] == -1, "free node \(n) has level \(nodeLevel[n])")
                    free[n] = true
                }
                for n in 0..<nodes {
                    try check(reached[n] || free[n], "node \(n) is neither reachable nor free")
                }
                if let g = cellIndex { try check(g.firstViolation(of: self) == nil, g.firstViolation(of: self) ?? "") }
                try check(
                    updatesSinceRebuild <= rebuildThreshold,
                    "\(updatesSinceRebuild) updates since rebuild exceed the threshold "
                        + "\(rebuildThreshold)"
                )
            } catch let violation as Violation {
                return violation.message
            } catch {
                return "\(error)"
            }
            return nil
        }
    #endif
}
