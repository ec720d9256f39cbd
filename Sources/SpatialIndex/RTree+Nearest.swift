// Best-first search (Hjaltason and Samet 1999) over one flat binary heap holding both nodes and
// items, keyed by the caller's lower bound.

extension RTree {
    /// Visits items in increasing order of a caller-supplied lower bound on distance.
    ///
    /// Nodes and items share one min-heap keyed by `lowerBound` of their box. An item is visited
    /// when it reaches the top, with the bound of its own box; since a node's bound never
    /// exceeds those of the boxes inside it, every later item has a bound at least as large.
    /// On equal bounds items come before nodes, and lower ids before higher ones, so the order is
    /// deterministic. Typical use: `lowerBound` is a cheap under-estimate of the distance in
    /// metres from a position to a box; `visit` computes the exact distance to the fence, keeps
    /// the best, and returns `false` once `bound` exceeds it.
    ///
    /// - Parameters:
    ///   - lowerBound: A bound for a box. Must be monotone (`lowerBound(a) <= lowerBound(b)`
    ///     whenever `a` covers `b`) and never NaN; otherwise the order is not guaranteed.
    ///   - visit: Called with each item's id and bound; return `false` to stop.
    /// - Complexity: O((k + log n) * fanout * log(heap)) for k visited items over well-separated
    ///   boxes; allocates the heap. An empty tree calls neither closure.
    public func nearest(lowerBound: (Box) -> Double, visit: (Int32, Double) -> Bool) {
        nearest(lowerBound: lowerBound, open: { _, _ in true }, visit: visit)
    }

    /// `nearest(lowerBound:visit:)` that asks `open` before it opens a node: with the node's
    /// bound and a way to its box (built only if asked: a union of its entries), `open`
    /// returns `false` when no item inside can matter (a tighter, dearer bound than
    /// `lowerBound` is beyond what the caller has found), and the node's entries are skipped.
    /// The others come in the same order as without `open`.
    /// - Complexity: that of `nearest(lowerBound:visit:)`, plus one `open` per node reached.
    public func nearest(lowerBound: (Box) -> Double, open: (Double, () -> Box) -> Bool, visit: (Int32, Double) -> Bool) {
        guard count > 0 else { return }
        var heap = BoundHeap()
        heap.push(BoundHeap.Element(bound: lowerBound(nodeBox(root)), ref: Int32(root)))
        while let top = heap.popMin() {
            if top.ref < 0 {
                if !visit(~top.ref, top.bound) { return }
                continue
            }
            let node = Int(top.ref)
            if !open(top.bound, { nodeBox(node) }) { continue }
            let isLeaf = nodeLevel[node] == 0
            let start = node * fanout
            for e in start..<start + Int(nodeCount[node]) {
                let bound = lowerBound(entryBox(e))
                assert(!bound.isNaN, "RTree.nearest: lowerBound returned NaN for \(entryBox(e))")
                // Items are stored as ~id (negative), nodes as their index.
                heap.push(
                    BoundHeap.Element(bound: bound, ref: isLeaf ? ~entryChild[e] : entryChild[e]))
            }
        }
    }
}
