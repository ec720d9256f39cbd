// Point and box queries: the product's hot path (about 1e7 point queries a second).
//
// A node is tested in one branch-free pass that turns its entries into a 64-bit hit mask (LLVM
// vectorises the pass; a branchy `&&` test mispredicts on about every other entry and measured
// about 4x slower per node). The walk is depth-first. Each level keeps the hits it has not yet
// descended into in a temporary buffer of `height` words (at most a few hundred bytes, which the
// standard library places on the stack), so no entry is tested twice, nothing is allocated
// (checked with callgrind: no malloc, retain or release per query) and no closure is called per
// entry. Going up uses the node's parent index.
//
// The walk is written once, generic over what is tested (`EntryFilter`) and what is done with
// hits (`WalkSink`); both are specialised away in release builds, so nothing is dynamic.

/// Raw views of the arrays a read-only walk needs, valid inside `RTree.withStorage`.
struct RTreeStorageView {
    let minX: UnsafeBufferPointer<Double>
    let minY: UnsafeBufferPointer<Double>
    let maxX: UnsafeBufferPointer<Double>
    let maxY: UnsafeBufferPointer<Double>
    let child: UnsafeBufferPointer<Int32>
    let count: UnsafeBufferPointer<Int32>
    let level: UnsafeBufferPointer<Int32>
    let parent: UnsafeBufferPointer<Int32>
    /// `RTree.narrow`: Float32 boxes, node by node.
    let narrow: UnsafeBufferPointer<Float>
    let fanout: Int
}

/// Point queries against a pinned tree (see `RTree.withPointQuerier`).
public struct RTreePointQuerier {
    let storage: RTreeStorageView
    let root: Int
    let rootLevel: Int
    let fanout: Int
    /// The tree's cell grid, when it has one: candidate queries start from it.
    let cells: RTreeCellView?

    /// Appends the ids of all items whose box contains the point, edges included, exactly as
    /// `RTree.query(x:y:into:)` does.
    @inline(__always)
    public func query(x: Double, y: Double, into results: inout ContiguousArray<Int32>) {
        var sink = AppendSink()
        swap(&sink.results, &results)
        RTree.walk(storage, root: root, rootLevel: rootLevel, fanout: fanout, PointFilter(x: x, y: y), &sink)
        swap(&sink.results, &results)
    }

    /// Appends the ids of every item whose box contains the point, edges included, and
    /// possibly of items whose box misses it by less than one Float32 rounding step (about
    /// 6e-8 relative): the walk compares against the tree's Float32 copy of its boxes, rounded
    /// outward, eight entries per compare. For callers that test each candidate exactly
    /// anyway. A NaN coordinate matches nothing. Exactly the items whose Float32 box holds the
    /// point rounded to Float32, with or without the cell grid.
    /// - Complexity: with the tree's cell grid (`RTree+CellIndex.swift`), one cell read and the
    ///   nodes it lists (about 2.7 nodes a query in fence-bench); without, the walk of `query(x:y:into:)`
    ///   over half the bytes.
    @inline(__always)
    public func candidates(x: Double, y: Double, into results: inout ContiguousArray<Int32>) {
        var sink = AppendSink()
        swap(&sink.results, &results)
        search(x: x, y: y, &sink)
        swap(&sink.results, &results)
    }

    /// `candidates(x:y:into:)` into memory the caller owns: writes the first `capacity` ids at
    /// `buffer` and returns how many there are. When that is more than `capacity`, the caller
    /// makes room and asks again (the answer does not change). For loops of millions of
    /// queries: no array bookkeeping per query or per id.
    /// - Complexity: that of `candidates(x:y:into:)`.
    @inline(__always)
    public func candidates(x: Double, y: Double, into buffer: UnsafeMutablePointer<Int32>, capacity: Int) -> Int {
        var sink = PointerSink(base: buffer, capacity: capacity)
        search(x: x, y: y, &sink)
        return sink.count
    }
}

extension RTreePointQuerier {
    /// Index nodes a candidate query enters at this point (the cell grid's listed nodes and
    /// what is below them, or the walk from the root without a grid).
    public func nodesEntered(x: Double, y: Double) -> Int {
        var sink = CountSink()
        search(x: x, y: y, &sink)
        return sink.nodes
    }

    /// The candidate search: from the point's cell of the grid when the tree has one, from the
    /// root otherwise; both reach the same leaves (see `candidates(x:y:into:)`).
    @inline(__always)
    func search<Sink: WalkSink>(x: Double, y: Double, _ sink: inout Sink) {
        // Rounding to nearest is monotonic and the stored bounds are Float32 values rounded
        // outward, so a point inside an exact box is inside its Float32 box.
        let fx = Float(x)
        let fy = Float(y)
        let filter = NarrowPointFilter(x: fx, y: fy)
        guard let g = cells else {
            RTree.walk(storage, root: root, rootLevel: rootLevel, fanout: fanout, filter, &sink)
            return
        }
        // The cell of the Float32 point lists every leaf whose Float32 box can hold it, as
        // subtrees (a leaf's ancestors' boxes hold the leaf's, so the walk from the root
        // reaches the same leaves). Outside the grid, or at NaN, no box holds it.
        let px = Double(fx)
        let py = Double(fy)
        guard g.frame.contains(x: px, y: py) else { return }
        let c = g.frame.cell(x: px, y: py)
        let f = fanout
        for k in Int(g.offsets[c])..<Int(g.offsets[c &+ 1]) {
            let node = Int(g.nodes[k])
            let level = Int(storage.level[node])
            if level == 0 {
                let base = node &* f
                sink.enter()
                sink.leafHits(storage, base: base, hits: filter.mask(storage, from: base, to: base &+ Int(storage.count[node])))
            } else {
                RTree.walk(storage, root: node, rootLevel: level, fanout: f, filter, &sink)
            }
        }
    }
}

/// Which entries a walk follows.
protocol EntryFilter {
    /// Bit k set when entry `start + k` matches; `end - start <= 64`.
    func mask(_ s: RTreeStorageView, from start: Int, to end: Int) -> UInt64
}

/// What a walk does with what it finds.
protocol WalkSink {
    /// Called once per node entered, root included.
    mutating func enter()
    /// Called for each leaf with its matching entries (`hits` relative to `base`).
    mutating func leafHits(_ s: RTreeStorageView, base: Int, hits: UInt64)
}

/// Entries whose box contains a point, edges included.
struct PointFilter: EntryFilter {
    let x: Double
    let y: Double

    @inline(__always)
    func mask(_ s: RTreeStorageView, from start: Int, to end: Int) -> UInt64 {
        // Four entries at a time with SIMD compares. Each lane's all-ones or all-zeros result
        // is ANDed with its bit and ORed into an accumulator, so the only horizontal step is
        // one OR at the end: LLVM compiles this to compares, ANDs and ORs, where a per-chunk
        // bit gather (`wrappedSum`) cost about four times as many instructions (callgrind).
        // A node's slots are allocated in full, so reading up to the next multiple of four is
        // in bounds; lanes past `end` are masked off below.
        let count = end &- start
        let rounded = (count &+ 3) & ~3
        if count <= 64 && s.minX.count >= start &+ rounded {
            let px = SIMD4<Double>(repeating: x)
            let py = SIMD4<Double>(repeating: y)
            var acc = SIMD4<UInt64>(repeating: 0)
            var bits = SIMD4<UInt64>(1, 2, 4, 8)
            var at = start
            while at < end {
                let minX = UnsafeRawPointer(s.minX.baseAddress! + at).loadUnaligned(as: SIMD4<Double>.self)
                let maxX = UnsafeRawPointer(s.maxX.baseAddress! + at).loadUnaligned(as: SIMD4<Double>.self)
                let minY = UnsafeRawPointer(s.minY.baseAddress! + at).loadUnaligned(as: SIMD4<Double>.self)
                let maxY = UnsafeRawPointer(s.maxY.baseAddress! + at).loadUnaligned(as: SIMD4<Double>.self)
                let hit = (minX .<= px) .& (px .<= maxX) .& (minY .<= py) .& (py .<= maxY)
                acc |= unsafeBitCast(hit, to: SIMD4<UInt64>.self) & bits
                bits &<<= 4
                at &+= 4
            }
            let all = (acc[0] | acc[1]) | (acc[2] | acc[3])
            return count == 64 ? all : all & ((1 &<< UInt64(count)) &- 1)
        }
        var mask: UInt64 = 0
        var e = start
        while e < end {
            // `? 1 : 0` and `&` instead of `&&`: no branches.
            let inX = (s.minX[e] <= x ? 1 : 0) & (x <= s.maxX[e] ? 1 : 0) as UInt64
            let inY = (s.minY[e] <= y ? 1 : 0) & (y <= s.maxY[e] ? 1 : 0) as UInt64
            mask |= (inX & inY) &<< UInt64(e &- start)
            e &+= 1
        }
        return mask
    }
}

/// Entries whose Float32 box (`RTree.narrow`) contains a Float32 point, edges included.
struct NarrowPointFilter: EntryFilter {
    let x: Float
    let y: Float

    @inline(__always)
    func mask(_ s: RTreeStorageView, from start: Int, to end: Int) -> UInt64 {
        let f = s.fanout
        let count = end &- start
        // Node `start / f`'s block starts at `start * 4`; its four runs are `f` apart.
        let block = s.narrow.baseAddress! + start &* 4
        if f & 7 == 0 && f <= 32 {
            // Eight entries per compare; lane i of the c-th eight sets bit 8c + i. A run has
            // `f` slots, a multiple of eight, so every load stays inside the node's block;
            // lanes past `count` are masked off below.
            let px = SIMD8<Float>(repeating: x)
            let py = SIMD8<Float>(repeating: y)
            var acc = SIMD8<UInt32>(repeating: 0)
            var bits = SIMD8<UInt32>(1, 2, 4, 8, 16, 32, 64, 128)
            var at = 0
            while at < count {
                let minX = UnsafeRawPointer(block + at).loadUnaligned(as: SIMD8<Float>.self)
                let minY = UnsafeRawPointer(block + (f &+ at)).loadUnaligned(as: SIMD8<Float>.self)
                let maxX = UnsafeRawPointer(block + (2 &* f &+ at)).loadUnaligned(as: SIMD8<Float>.self)
                let maxY = UnsafeRawPointer(block + (3 &* f &+ at)).loadUnaligned(as: SIMD8<Float>.self)
                let hit = (minX .<= px) .& (px .<= maxX) .& (minY .<= py) .& (py .<= maxY)
                acc |= unsafeBitCast(hit, to: SIMD8<UInt32>.self) & bits
                bits &<<= 8
                at &+= 8
            }
            let four = acc.lowHalf | acc.highHalf
            let two = four.lowHalf | four.highHalf
            let all = UInt64(two[0] | two[1])
            return count >= 32 ? all : all & ((1 &<< UInt64(count)) &- 1)
        }
        var mask: UInt64 = 0
        var k = 0
        while k < count {
            let inX = (block[k] <= x ? 1 : 0) & (x <= block[2 &* f &+ k] ? 1 : 0) as UInt64
            let inY = (block[f &+ k] <= y ? 1 : 0) & (y <= block[3 &* f &+ k] ? 1 : 0) as UInt64
            mask |= (inX & inY) &<< UInt64(k)
            k &+= 1
        }
        return mask
    }
}

/// Entries whose box intersects a window, touching edges included.
struct BoxFilter: EntryFilter {
    let box: Box

    @inline(__always)
    func mask(_ s: RTreeStorageView, from start: Int, to end: Int) -> UInt64 {
        let x0 = box.minX
        let y0 = box.minY
        let x1 = box.maxX
        let y1 = box.maxY
        var mask: UInt64 = 0
        var e = start
        while e < end {
            let inX = (s.minX[e] <= x1 ? 1 : 0) & (x0 <= s.maxX[e] ? 1 : 0) as UInt64
            let inY = (s.minY[e] <= y1 ? 1 : 0) & (y0 <= s.maxY[e] ? 1 : 0) as UInt64
            mask |= (inX & inY) &<< UInt64(e &- start)
            e &+= 1
        }
        return mask
    }
}

/// Appends matching item ids to the caller's buffer, swapped in for the walk so it stays
/// uniquely referenced (no copy on append).
struct AppendSink: WalkSink {
    var results = ContiguousArray<Int32>()

    @inline(__always) mutating func enter() {}

    @inline(__always)
    mutating func leafHits(_ s: RTreeStorageView, base: Int, hits: UInt64) {
        var hits = hits
        while hits != 0 {
            results.append(s.child[base &+ hits.trailingZeroBitCount])
            hits &= hits &- 1
        }
    }
}

/// Writes matching item ids to caller-owned memory while there is room, and counts them all.
struct PointerSink: WalkSink {
    let base: UnsafeMutablePointer<Int32>
    let capacity: Int
    var count = 0

    @inline(__always) mutating func enter() {}

    @inline(__always)
    mutating func leafHits(_ s: RTreeStorageView, base b: Int, hits: UInt64) {
        var hits = hits
        while hits != 0 {
            if count < capacity { base[count] = s.child[b &+ hits.trailingZeroBitCount] }
            count &+= 1
            hits &= hits &- 1
        }
    }
}

/// Counts entered nodes.
struct CountSink: WalkSink {
    var nodes = 0

    @inline(__always) mutating func enter() { nodes &+= 1 }
    @inline(__always) mutating func leafHits(_ s: RTreeStorageView, base: Int, hits: UInt64) {}
}

extension RTree {
    /// Runs `body` with unchecked views of the storage arrays.
    @inline(__always)
    func withStorage<R>(_ body: (RTreeStorageView) throws -> R) rethrows -> R {
        try entryMinX.withUnsafeBufferPointer { minX in
            try entryMinY.withUnsafeBufferPointer { minY in
                try entryMaxX.withUnsafeBufferPointer { maxX in
                    try entryMaxY.withUnsafeBufferPointer { maxY in
                        try entryChild.withUnsafeBufferPointer { child in
                            try nodeCount.withUnsafeBufferPointer { count in
                                try nodeLevel.withUnsafeBufferPointer { level in
                                    try nodeParent.withUnsafeBufferPointer { parent in
                                        try narrow.withUnsafeBufferPointer { narrow in
                                            try body(
                                                RTreeStorageView(
                                                    minX: minX, minY: minY, maxX: maxX, maxY: maxY,
                                                    child: child, count: count, level: level,
                                                    parent: parent, narrow: narrow, fanout: fanout))
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Depth-first walk over every node whose entry matches `filter`, reporting to `sink`.
    @inline(__always)
    func walk<Filter: EntryFilter, Sink: WalkSink>(_ filter: Filter, _ sink: inout Sink) {
        let root = self.root
        let rootLevel = Int(nodeLevel[root])
        let f = fanout
        withStorage { s in Self.walk(s, root: root, rootLevel: rootLevel, fanout: f, filter, &sink) }
    }

    @inline(__always)
    static func walk<Filter: EntryFilter, Sink: WalkSink>(
        _ s: RTreeStorageView, root: Int, rootLevel: Int, fanout f: Int, _ filter: Filter, _ sink: inout Sink
    ) {
        // pending[level]: hits of the open node at that level not yet descended into.
        withUnsafeTemporaryAllocation(of: UInt64.self, capacity: rootLevel + 1) { pending in
            var node = root
            var level = rootLevel
            var base = node &* f
            var hits = filter.mask(s, from: base, to: base &+ Int(s.count[node]))
            sink.enter()
            while true {
                if level == 0 {
                    sink.leafHits(s, base: base, hits: hits)
                } else if hits != 0 {
                    let child = Int(s.child[base &+ hits.trailingZeroBitCount])
                    pending[level] = hits & (hits &- 1)
                    node = child
                    level &-= 1
                    base = node &* f
                    hits = filter.mask(s, from: base, to: base &+ Int(s.count[node]))
                    sink.enter()
                    continue
                }
                // Node finished: resume its parent with the hits still pending there.
                if level == rootLevel { return }
                node = Int(s.parent[node])
                level &+= 1
                base = node &* f
                hits = pending[level]
            }
        }
    }

    /// Runs `body` with a querier bound to this tree's storage, for many point queries in a
    /// row: the storage is pinned once instead of once per query.
    ///
    /// The querier is valid only inside `body`, and the tree must not change meanwhile.
    /// - Complexity: O(1) besides `body`.
    public func withPointQuerier<R>(_ body: (RTreePointQuerier) throws -> R) rethrows -> R {
        let root = self.root
        let rootLevel = Int(nodeLevel[root])
        let f = fanout
        return try withStorage { s in
            guard let g = cellIndex else {
                return try body(RTreePointQuerier(storage: s, root: root, rootLevel: rootLevel, fanout: f, cells: nil))
            }
            return try g.offsets.withUnsafeBufferPointer { offsets in
                try g.nodes.withUnsafeBufferPointer { nodes in
                    let view = RTreeCellView(frame: g.frame, offsets: offsets, nodes: nodes)
                    return try body(RTreePointQuerier(storage: s, root: root, rootLevel: rootLevel, fanout: f, cells: view))
                }
            }
        }
    }

    /// Appends the ids of all items whose box contains the point, edges and corners included.
    ///
    /// The buffer is not cleared: the caller clears it (`removeAll(keepingCapacity: true)`) and
    /// reuses it, so a query allocates nothing once the buffer has grown. Ids come in tree order,
    /// not sorted. A NaN coordinate matches nothing; an empty tree appends nothing.
    ///
    /// - Parameters:
    ///   - x: The point's x coordinate.
    ///   - y: The point's y coordinate.
    ///   - results: Buffer the matching ids are appended to.
    /// - Complexity: O(log n + k) nodes for well-separated boxes, where k is the number of
    ///   matches, each node one branch-free pass over `fanout` entries; O(n) when every box
    ///   contains the point.
    public func query(x: Double, y: Double, into results: inout ContiguousArray<Int32>) {
        var sink = AppendSink()
        swap(&sink.results, &results)
        walk(PointFilter(x: x, y: y), &sink)
        swap(&sink.results, &results)
    }

    /// Appends the ids of all items whose box intersects `box`; touching edges or corners count.
    ///
    /// Same buffer contract as `query(x:y:into:)`: appends, never clears, no allocation once the
    /// buffer has capacity.
    ///
    /// - Parameters:
    ///   - box: The query window. A point box finds the same items as the point query; an
    ///     inverted or NaN box finds nothing.
    ///   - results: Buffer the matching ids are appended to.
    /// - Complexity: O(log n + k) nodes for small windows over well-separated boxes, k matches.
    public func query(_ box: Box, into results: inout ContiguousArray<Int32>) {
        guard box.isOrdered else { return }
        var sink = AppendSink()
        swap(&sink.results, &results)
        walk(BoxFilter(box: box), &sink)
        swap(&sink.results, &results)
    }

    /// Number of nodes a point query enters, root included: a measure of tree quality.
    ///
    /// - Parameters:
    ///   - x: The point's x coordinate.
    ///   - y: The point's y coordinate.
    /// - Returns: At least 1 (the root is always read), at most the number of nodes.
    /// - Complexity: The same walk as `query(x:y:into:)`.
    public func nodesVisited(x: Double, y: Double) -> Int {
        var sink = CountSink()
        walk(PointFilter(x: x, y: y), &sink)
        return sink.nodes
    }
}
