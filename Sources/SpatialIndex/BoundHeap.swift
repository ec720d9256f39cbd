// The priority queue of `RTree.nearest` (and of `PolygonDistance`'s edge search): one flat
// array, no per-element objects, in the manner of swift-collections' `Heap`.

/// A binary min-heap in one flat array, ordered by bound; on equal bounds items come before
/// nodes and lower ids before higher ones.
package struct BoundHeap {
    package struct Element {
        package var bound: Double
        /// `~id` for an item, the node index for a node.
        package var ref: Int32

        package init(bound: Double, ref: Int32) {
            self.bound = bound
            self.ref = ref
        }

        /// Tie order: items by id, then nodes by index.
        var rank: Int64 { ref < 0 ? Int64(~ref) : Int64(ref) + (1 << 32) }

        @inline(__always)
        func precedes(_ other: Element) -> Bool {
            bound < other.bound || (bound == other.bound && rank < other.rank)
        }
    }

    private var storage = ContiguousArray<Element>()

    package init() {}

    /// - Complexity: O(log n).
    package mutating func push(_ element: Element) {
        storage.append(element)
        storage.withUnsafeMutableBufferPointer { h in
            var i = h.count - 1
            while i > 0 {
                let parent = (i - 1) / 2
                guard element.precedes(h[parent]) else { break }
                h[i] = h[parent]
                i = parent
            }
            h[i] = element
        }
    }

    /// - Complexity: O(log n).
    package mutating func popMin() -> Element? {
        guard let last = storage.popLast() else { return nil }
        guard !storage.isEmpty else { return last }
        return storage.withUnsafeMutableBufferPointer { h in
            let top = h[0]
            let n = h.count
            var i = 0
            while true {
                var child = 2 * i + 1
                if child >= n { break }
                if child + 1 < n && h[child + 1].precedes(h[child]) { child += 1 }
                guard h[child].precedes(last) else { break }
                h[i] = h[child]
                i = child
            }
            h[i] = last
            return top
        }
    }
}
