/// A proof that a ring is simple, or that it meets itself, in O(n log n) whatever its shape:
/// the Shamos-Hoey sweep.
///
/// `RingSimplicity`'s grid tests only the edges that share a cell, which is about O(n) for a
/// ring whose edges are spread out but O(n²) when many long edges cross the same cells (a
/// "hedgehog" of spikes meeting near one point), and GEOS `isValid` is quasi-quadratic there
/// too (its monotone chains' boxes all overlap: 200,000 positions took 28 s). The sweep is
/// not: a vertical line moves left to right over the edges, keeping the edges it crosses in
/// their order from bottom to top, and tests only edges that become neighbours in that
/// order. If two edges meet, the pair meeting leftmost are neighbours just before their
/// meeting point, or become neighbours when the second of them starts there, so one of those
/// tests finds it.
///
/// Everything is exact or conservative: an order is decided by `Orientation.indexFilter`
/// (an exact zero only breaks the tie of two edges starting at one vertex; any other zero, a
/// vertex on another edge's line, and any undecided answer end the proof unless a neighbour
/// test has found a contact), and pairs are tested by `RingSimplicity.pairMayMeet`. So
/// `.simple` and `.meets` are certain, and `.notProven` sends the ring to GEOS, which decides
/// and explains. Not every valid ring is proven: `pairMayMeet` also gives up on a vertex on
/// another edge's line just past its end, with the boxes touching.
///
/// Degenerate cases: events are ordered by x, then y (so a vertical edge starts at its lower
/// end), with an edge's end before another's start at the same point. A point where more than
/// one vertex of the ring lies (the ring touching itself at a vertex) ends the proof before any
/// order is needed. Two edges starting at one vertex (necessarily the ring's two edges there)
/// are ordered by their other ends.
enum RingSweep {
    /// Edges per block of the sweep's order (`Order`): inserting or removing costs O(block)
    /// moves plus O(log n) orientation tests.
    static let blockSize = 256

    /// What the sweep found.
    enum Verdict: Equatable {
        /// Certainly simple.
        case simple
        /// Two non-neighbouring edges certainly meet at (about) this point: crossing each
        /// other (`proper`), or one's vertex on the other, or two vertices at one point.
        case meets(x: Double, y: Double, proper: Bool)
        /// Neither proven: an undecided orientation, collinear edges, a zero-length edge, or a
        /// vertex on another edge's line (on it or just past its end).
        case notProven
    }

    /// `verdict(_:count:) == .simple`.
    static func isCertainlySimple(_ coords: UnsafePointer<Double>, count n: Int) -> Bool {
        verdict(coords, count: n) == .simple
    }

    /// `.simple` only when it is certain that no two non-neighbouring edges of the closed ring
    /// (`n` positions at `coords`, x and y interleaved, last = first) meet. With the caller's
    /// check that every vertex turns (`RingSimplicity.turnsEverywhere`: no two neighbouring
    /// edges overlapping), that means GEOS `isValid` holds for a Polygon with this exterior
    /// and no holes. `.meets` names a contact whose own orientations are all certain (the
    /// first the sweep met, not necessarily the leftmost), so the ring is certainly not simple:
    /// the caller can refuse it without asking GEOS, whose search for a reason is as slow as
    /// its validity check there.
    /// - Complexity: O(n log n) time (the sort, and O(log n) orientation tests and O(block)
    ///   moves per edge), O(n) memory; no GEOS call.
    static func verdict(_ coords: UnsafePointer<Double>, count n: Int) -> Verdict {
        let edges = n - 1
        guard edges >= 3 else { return .notProven }
        // A zero-length edge (a repeated position, which GEOS drops) is left to GEOS.
        for e in 0..<edges where coords[2 * e] == coords[2 * e + 2] && coords[2 * e + 1] == coords[2 * e + 3] {
            return .notProven
        }
        // Each edge's left and right end (by x, then y), as vertex numbers.
        var left = [Int32](repeating: 0, count: edges)
        var right = [Int32](repeating: 0, count: edges)
        for e in 0..<edges {
            let a = e
            let b = e + 1 == edges ? 0 : e + 1
            if precedes(coords, a, b) {
                left[e] = Int32(a)
                right[e] = Int32(b)
            } else {
                left[e] = Int32(b)
                right[e] = Int32(a)
            }
        }
        // Events: edge number times 2, plus 1 for a start (0 for an end), sorted by the point,
        // then ends before starts. Vertex n - 1 repeats vertex 0, so edge ends use 0 ..< edges.
        var events = [Int32](unsafeUninitializedCapacity: 2 * edges) { buffer, count in
            for e in 0..<edges {
                buffer[2 * e] = Int32(2 * e)
                buffer[2 * e + 1] = Int32(2 * e + 1)
            }
            count = 2 * edges
        }
        @inline(__always) func point(_ event: Int32) -> Int {
            let e = Int(event >> 1)
            return Int(event & 1 == 1 ? left[e] : right[e])
        }
        events.sort { a, b in
            let p = point(a)
            let q = point(b)
            let px = coords[2 * p]
            let qx = coords[2 * q]
            if px != qx { return px < qx }
            let py = coords[2 * p + 1]
            let qy = coords[2 * q + 1]
            if py != qy { return py < qy }
            return (a & 1) < (b & 1)
        }
        // A point holding more than one vertex: every vertex brings two events (the ends of
        // its two edges), so more than two events at one point is the ring touching itself.
        var run = 1
        for k in 1..<events.count {
            let p = point(events[k - 1])
            let q = point(events[k])
            if coords[2 * p] == coords[2 * q] && coords[2 * p + 1] == coords[2 * q + 1] {
                run += 1
                // Two vertices here, which are not neighbours (no edge has length zero): the
                // ring touches itself.
                if run > 2 { return .meets(x: coords[2 * q], y: coords[2 * q + 1], proper: false) }
            } else {
                run = 1
            }
        }
        var order = Order(edges: edges)
        for event in events {
            let e = Int(event >> 1)
            if event & 1 == 1 {
                // Where the edge goes: the first edge above its left end, found by the
                // orientation of that end against each edge's line. An end on a line (which
                // the neighbour test below would also catch) or an undecided orientation (the
                // order is then unknown) ends the proof.
                var touches = false
                let (below, over) = order.insert(e) { t in
                    switch relation(coords, edge: e, to: t, left: left, right: right) {
                    case 1: return false
                    case -1: return true
                    default:
                        touches = true
                        return true
                    }
                }
                for t in [below, over] {
                    if let t, RingSimplicity.pairMayMeet(coords, min(e, t), max(e, t), edges: edges) {
                        return contact(coords, e, t)
                    }
                }
                if touches { return .notProven }
            } else {
                let (below, over) = order.remove(e)
                if let below, let over, RingSimplicity.pairMayMeet(coords, min(below, over), max(below, over), edges: edges) {
                    return contact(coords, below, over)
                }
            }
        }
        return .simple
    }

    /// Where non-neighbouring edges `i` and `j`, which may meet, certainly do: `.meets` when
    /// they cross (all four orientations certain and opposed: the point computed in doubles)
    /// or an end of one lies on the other (its orientation zero, inside the other's box);
    /// `.notProven` for anything else (collinear edges, an undecided orientation).
    static func contact(_ coords: UnsafePointer<Double>, _ i: Int, _ j: Int) -> Verdict {
        let (ax, ay, bx, by) = (coords[2 * i], coords[2 * i + 1], coords[2 * i + 2], coords[2 * i + 3])
        let (cx, cy, dx, dy) = (coords[2 * j], coords[2 * j + 1], coords[2 * j + 2], coords[2 * j + 3])
        let (o1, o2, o3, o4) = RingSimplicity.orientations(coords, i, j)
        if o1 == 2 || o2 == 2 || o3 == 2 || o4 == 2 { return .notProven }
        if o1 != 0 && o2 != 0 && o3 != 0 && o4 != 0 {
            guard o1 != o2 && o3 != o4 else { return .notProven }
            let t = ((cx - ax) * (dy - cy) - (cy - ay) * (dx - cx)) / ((bx - ax) * (dy - cy) - (by - ay) * (dx - cx))
            return .meets(x: ax + t * (bx - ax), y: ay + t * (by - ay), proper: true)
        }
        if (o1 == 0 && o2 == 0) || (o3 == 0 && o4 == 0) { return .notProven }  // collinear
        @inline(__always) func within(_ x: Double, _ y: Double, _ px: Double, _ py: Double, _ qx: Double, _ qy: Double) -> Bool {
            x >= min(px, qx) && x <= max(px, qx) && y >= min(py, qy) && y <= max(py, qy)
        }
        if o1 == 0 && within(cx, cy, ax, ay, bx, by) { return .meets(x: cx, y: cy, proper: false) }
        if o2 == 0 && within(dx, dy, ax, ay, bx, by) { return .meets(x: dx, y: dy, proper: false) }
        if o3 == 0 && within(ax, ay, cx, cy, dx, dy) { return .meets(x: ax, y: ay, proper: false) }
        if o4 == 0 && within(bx, by, cx, cy, dx, dy) { return .meets(x: bx, y: by, proper: false) }
        return .notProven
    }

    /// Whether vertex `a` comes before vertex `b` in the sweep: by x, then y.
    @inline(__always)
    static func precedes(_ coords: UnsafePointer<Double>, _ a: Int, _ b: Int) -> Bool {
        let ax = coords[2 * a]
        let bx = coords[2 * b]
        return ax < bx || (ax == bx && coords[2 * a + 1] < coords[2 * b + 1])
    }

    /// Where edge `e`, starting now, lies against edge `t` in the sweep: 1 above, -1 below, 0
    /// when it cannot be told or they touch (`e`'s left end on `t`'s line). Edges that start
    /// at one vertex are ordered by their right ends.
    @inline(__always)
    static func relation(
        _ coords: UnsafePointer<Double>, edge e: Int, to t: Int, left: [Int32], right: [Int32]
    ) -> Int {
        let tl = Int(left[t])
        let tr = Int(right[t])
        let el = Int(left[e])
        var o = Orientation.indexFilter(
            coords[2 * tl], coords[2 * tl + 1], coords[2 * tr], coords[2 * tr + 1], coords[2 * el], coords[2 * el + 1])
        if o == 0 && tl == el {
            let er = Int(right[e])
            o = Orientation.indexFilter(
                coords[2 * tl], coords[2 * tl + 1], coords[2 * tr], coords[2 * tr + 1], coords[2 * er], coords[2 * er + 1])
        }
        return o == 2 ? 0 : o
    }

    /// The edges the sweep line crosses, bottom to top, in blocks of at most 2 x `blockSize`:
    /// `blocks[order[k]]` is the k-th block. Each edge knows its block (`blockOf`), and each
    /// block its place in `order` (`place`), so an edge is removed without searching by
    /// geometry.
    struct Order {
        var blocks: [[Int32]] = []
        var order: [Int32] = []
        var place: [Int32] = []
        var blockOf: [Int32]

        init(edges: Int) { blockOf = [Int32](repeating: -1, count: edges) }

        /// Inserts `e` below the first edge `t` for which `isBelow(t)` holds (the predicate
        /// false for a prefix of the order, true after it), and returns its new neighbours.
        /// - Complexity: O(log n) calls of `isBelow`, plus O(blockSize) moves (O(n / blockSize)
        ///   when a block splits).
        mutating func insert(_ e: Int, isBelow: (Int) -> Bool) -> (below: Int?, above: Int?) {
            if order.isEmpty {
                let id = Int32(blocks.count)
                blocks.append([Int32(e)])
                order.append(id)
                place.append(0)
                blockOf[e] = id
                return (nil, nil)
            }
            // The last block whose first edge lies below e (or the first block).
            var lo = 0
            var hi = order.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if isBelow(Int(blocks[Int(order[mid])][0])) { hi = mid } else { lo = mid + 1 }
            }
            let k = max(0, lo - 1)
            let b = Int(order[k])
            var at = 0
            var end = blocks[b].count
            while at < end {
                let mid = (at + end) / 2
                if isBelow(Int(blocks[b][mid])) { end = mid } else { at = mid + 1 }
            }
            blocks[b].insert(Int32(e), at: at)
            blockOf[e] = Int32(b)
            let neighbours = (below: neighbour(block: k, index: at - 1), above: neighbour(block: k, index: at + 1))
            if blocks[b].count > 2 * RingSweep.blockSize { split(k) }
            return neighbours
        }

        /// Removes `e` and returns the neighbours it had, now next to each other.
        /// - Complexity: O(blockSize), plus O(n / blockSize) when its block empties.
        mutating func remove(_ e: Int) -> (below: Int?, above: Int?) {
            let b = Int(blockOf[e])
            let k = Int(place[b])
            guard let at = blocks[b].firstIndex(of: Int32(e)) else { return (nil, nil) }
            let neighbours = (below: neighbour(block: k, index: at - 1), above: neighbour(block: k, index: at + 1))
            blocks[b].remove(at: at)
            blockOf[e] = -1
            if blocks[b].isEmpty {
                order.remove(at: k)
                for j in k..<order.count { place[Int(order[j])] = Int32(j) }
            }
            return neighbours
        }

        /// The edge at `index` of the k-th block, reaching into the blocks beside it when
        /// `index` is -1 or one past the end.
        func neighbour(block k: Int, index: Int) -> Int? {
            let items = blocks[Int(order[k])]
            if index >= 0 && index < items.count { return Int(items[index]) }
            if index < 0 { return k > 0 ? blocks[Int(order[k - 1])].last.map(Int.init) : nil }
            return k + 1 < order.count ? blocks[Int(order[k + 1])].first.map(Int.init) : nil
        }

        /// Splits the k-th block in two halves.
        mutating func split(_ k: Int) {
            let b = Int(order[k])
            let half = blocks[b].count / 2
            let moved = Array(blocks[b][half...])
            blocks[b].removeSubrange(half...)
            let id = blocks.count
            blocks.append(moved)
            place.append(0)
            for e in moved { blockOf[Int(e)] = Int32(id) }
            order.insert(Int32(id), at: k + 1)
            for j in (k + 1)..<order.count { place[Int(order[j])] = Int32(j) }
        }
    }
}
