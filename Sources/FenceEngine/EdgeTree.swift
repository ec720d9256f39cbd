import SpatialIndex

/// Boxes over a large polygon's edges, in ring order, for distance queries: `nearest` and
/// hysteresis margins measure a position against a fence's boundary, which is otherwise a scan
/// of every edge (1.2 ms a position against Natural Earth's countries densified to 1 km).
///
/// Appended to an indexed polygon record (`FlatGeometry.Kind.indexedPolygon`), after its edge
/// index (`FlatGeometry.appendEdgeIndex`), which ends where its header and slab offsets say:
/// `[levels, seams, count₀, ..., count₍levels-1₎]`, then each level's boxes from the leaves up
/// as Float32 `minX, minY, maxX, maxY`, rounded outwards, then the first positions of the
/// `seams` edges that lie on the antimeridian (`AntimeridianSeam`) as Int32, padded to whole
/// doubles. Leaf `j` holds
/// the edges that start at positions `16j ..< 16j + 16` (a ring's last position starts none),
/// and its box every position from `16j` through `16j + 16`, so both ends of each of its
/// edges; node `j` of a level above holds nodes `16j ..< 16j + 16` of the level below. The top
/// level has at most 16 nodes. Which parts of an edge on the antimeridian are boundary depends
/// on every other edge there, so a query that meets one reads them all from the list.
///
/// A box over a run of consecutive edges is tight for real outlines (a run is a stretch of
/// coast or border) and useless for a zig-zag, which is still exact, only not faster.
/// - Memory: 16 bytes a leaf (16 positions, 256 bytes of coordinates) and about 1/15 of that
///   above: about 7% over the coordinates.
enum EdgeTree {
    /// Positions (edge starts) per leaf, and children per node above.
    static let fanout = 16

    /// Appends the tree to an indexed polygon record that ends with its edge index.
    /// - Complexity: O(n) for n positions.
    static func append(to record: inout [Double]) {
        let k = Int(record[0])
        let rings = FlatGeometry.ringRanges(of: record)
        let n = rings.last?.upperBound ?? 0
        let c = 1 + k
        var counts = [max(1, (n - 1 + fanout - 1) / fanout)]
        while counts.last! > fanout { counts.append((counts.last! + fanout - 1) / fanout) }
        var boxes: [Float] = []
        boxes.reserveCapacity(4 * (counts.reduce(0, +)))
        var seams: [Int32] = []
        record.withUnsafeBufferPointer { r in
            let coords = r.baseAddress! + c
            for ring in rings {
                for i in ring.lowerBound..<(ring.upperBound - 1) where AntimeridianSeam.isOnLine(coords[2 * i], coords[2 * i + 2]) {
                    seams.append(Int32(i))
                }
            }
            for j in 0..<counts[0] {
                var box = (minX: Double.infinity, minY: Double.infinity, maxX: -Double.infinity, maxY: -Double.infinity)
                for i in (fanout * j)...min(fanout * j + fanout, n - 1) {
                    box.minX = min(box.minX, coords[2 * i])
                    box.maxX = max(box.maxX, coords[2 * i])
                    box.minY = min(box.minY, coords[2 * i + 1])
                    box.maxY = max(box.maxY, coords[2 * i + 1])
                }
                boxes.append(contentsOf: [down(box.minX), down(box.minY), up(box.maxX), up(box.maxY)])
            }
        }
        var below = 0
        for level in 1..<counts.count {
            for j in 0..<counts[level] {
                var box: (Float, Float, Float, Float) = (.infinity, .infinity, -.infinity, -.infinity)
                for child in (fanout * j)..<min(fanout * j + fanout, counts[level - 1]) {
                    let b = 4 * (below + child)
                    box = (min(box.0, boxes[b]), min(box.1, boxes[b + 1]), max(box.2, boxes[b + 2]), max(box.3, boxes[b + 3]))
                }
                boxes.append(contentsOf: [box.0, box.1, box.2, box.3])
            }
            below += counts[level - 1]
        }
        record.append(Double(counts.count))
        record.append(Double(seams.count))
        for count in counts { record.append(Double(count)) }
        var bytes: [UInt8] = []
        boxes.withUnsafeBytes { bytes.append(contentsOf: $0) }
        seams.withUnsafeBytes { bytes.append(contentsOf: $0) }
        while bytes.count % 8 != 0 { bytes.append(0) }
        bytes.withUnsafeBytes { raw in
            for d in 0..<(raw.count / 8) { record.append(raw.load(fromByteOffset: 8 * d, as: Double.self)) }
        }
    }

    /// The largest Float at or below `x`, and the smallest at or above.
    private static func down(_ x: Double) -> Float {
        let f = Float(x)
        return Double(f) > x ? f.nextDown : f
    }
    private static func up(_ x: Double) -> Float {
        let f = Float(x)
        return Double(f) < x ? f.nextUp : f
    }

    /// Where the tree of an indexed record starts: after its edge index, whose length its
    /// header (`[slabs, minY, scale]`) and last offset give.
    @inline(__always)
    static func start(of record: UnsafePointer<Double>) -> UnsafePointer<Double> {
        let index = RingLocator.edgeIndex(of: record)
        let slabs = Int(index[0])
        let ints = UnsafeRawPointer(index + 3).assumingMemoryBound(to: Int32.self)
        return index + 3 + (slabs + 1 + Int(ints[slabs]) + 1) / 2
    }

    /// A read view of one record's tree.
    struct View {
        let header: UnsafePointer<Double>
        let levels: Int
        /// Float32 boxes, all levels, leaves first, then the Int32 list of edges on the
        /// antimeridian: read as raw bytes (the memory stays bound to Double, as the edge
        /// index's Int32s are).
        let boxes: UnsafeRawPointer
        /// How many edges lie on the antimeridian.
        let seamCount: Int
        private let seamList: UnsafeRawPointer

        init(record: UnsafePointer<Double>) {
            header = EdgeTree.start(of: record)
            levels = Int(header[0])
            boxes = UnsafeRawPointer(header + 2 + levels)
            var nodes = 0
            for l in 0..<levels { nodes += Int(header[2 + l]) }
            seamCount = Int(header[1])
            seamList = boxes + 16 * nodes
        }

        /// The first positions of the edges on the antimeridian.
        var seams: [Int] { (0..<seamCount).map { Int(seamList.load(fromByteOffset: 4 * $0, as: Int32.self)) } }

        func count(level: Int) -> Int { Int(header[2 + level]) }

        /// Nodes are numbered over all levels, leaves first: the first node of `level`.
        func first(level: Int) -> Int {
            var n = 0
            for l in 0..<level { n += count(level: l) }
            return n
        }

        /// The box of node `node` (numbered over all levels).
        @inline(__always)
        func box(_ node: Int) -> Box {
            let b = 16 * node
            @inline(__always) func at(_ k: Int) -> Double { Double(boxes.load(fromByteOffset: b + 4 * k, as: Float.self)) }
            return Box(minX: at(0), minY: at(1), maxX: at(2), maxY: at(3))
        }

        /// Calls `body` with each node of the top level.
        func forEachTop(_ body: (Int) -> Void) {
            let top = levels - 1
            let base = first(level: top)
            for j in 0..<count(level: top) { body(base + j) }
        }

        /// The level of `node` and its index within that level.
        @inline(__always)
        func locate(_ node: Int) -> (level: Int, index: Int) {
            var j = node
            for l in 0..<levels {
                let n = count(level: l)
                if j < n { return (l, j) }
                j -= n
            }
            preconditionFailure("node \(node) is not in the tree")
        }

        /// The children of an inner node (numbered over all levels), or for a leaf nil.
        @inline(__always)
        func children(of node: Int) -> Range<Int>? {
            let (level, j) = locate(node)
            guard level > 0 else { return nil }
            let base = first(level: level - 1)
            return (base + EdgeTree.fanout * j)..<(base + min(EdgeTree.fanout * j + EdgeTree.fanout, count(level: level - 1)))
        }
    }

    /// Where a record's rings end, for `forEachEdge(leaf:)`: read in place from the record's
    /// header of running ends (`FlatGeometry`), nothing copied. Built per query (hysteresis
    /// asks for a distance per fix and nearby fence), so O(1): it was an array of every
    /// ring's end, which made each distance to a polygon of 50,000 holes O(rings) (an audit).
    struct RingEnds {
        /// The polygon record.
        let record: UnsafePointer<Double>
        /// Rings.
        let count: Int
        /// Positions in all rings.
        let total: Int

        /// - Complexity: O(1).
        init(_ record: UnsafePointer<Double>) {
            self.record = record
            count = FlatGeometry.ringCount(of: record)
            total = FlatGeometry.positionCount(of: record)
        }

        /// One past the last position of ring `r`.
        @inline(__always)
        func end(_ r: Int) -> Int { FlatGeometry.ringEnd(r, of: record) }
    }

    /// Calls `body` with the first position of each edge of leaf `leaf`: positions
    /// `16·leaf ..< 16·leaf + 16` that are not the last of their ring.
    /// - Complexity: O(log k) for k rings (a binary search over the ring ends), plus the
    ///   leaf's edges and the rings that end among them.
    @inline(__always)
    static func forEachEdge(leaf: Int, rings: RingEnds, _ body: (Int) -> Void) {
        let lo = fanout * leaf
        guard rings.count > 1 else {
            // One ring: every position but its last starts an edge.
            for i in lo..<max(lo, min(lo + fanout, rings.total - 1)) { body(i) }
            return
        }
        let hi = min(lo + fanout, rings.total)
        guard lo < hi else { return }
        // The first ring that ends after `lo`.
        var a = 0
        var b = rings.count
        while a < b {
            let m = (a + b) / 2
            if rings.end(m) <= lo { a = m + 1 } else { b = m }
        }
        var ring = a
        var end = rings.end(ring)
        for i in lo..<hi {
            // i < total, so a ring that ends after it exists.
            while end <= i {
                ring += 1
                end = rings.end(ring)
            }
            if i == end - 1 { continue }
            body(i)
        }
    }
}
