import SpatialIndex

extension FenceValidation {
    /// Most index boxes one polygon fence gets (the store takes up to 255). 32 pieces bring a
    /// 3-degree diagonal corridor's boxes to about 1/30 of its one box's area.
    package static let maxIndexBoxes = 32

    /// A cut is kept when its halves' boxes cover at most this share of the piece's box. A thin
    /// diagonal halves it at every cut; a round or star-shaped polygon's halves keep 0.9 of it or
    /// more (each half still spans the shape's height), so ordinary fences stay one box.
    static let pieceSplitRatio = 0.7

    /// A piece whose box's longer side is shorter than this, in degrees (about 1 km), is not
    /// cut: the rule above is scale-free, and would cut a 100 m x 10 m diagonal driveway
    /// into four, at about 90 bytes a box, where the one box hands few positions to the fence.
    static let minimumCutSide = 0.01

    /// Most cuts tried on one polygon, kept or refused: bounds the work whatever the shape, and
    /// the rounding a piece's box must absorb (see `pieceMargin`).
    static let maxCutAttempts = 4 * maxIndexBoxes

    /// How far a cut piece's box is widened on every side, in degrees (0.1 mm), before a final
    /// step to the next representable value. A cut point's rounded coordinate is within a few
    /// units in the last place of 360 of the exact one (about 3e-13 degrees); a piece is at most
    /// `maxCutAttempts` cuts deep, 4e-11 degrees at worst.
    static let pieceMargin = 1e-9

    /// Index boxes for a polygon fence: one box around its shells, or up to `maxIndexBoxes` where
    /// smaller boxes leave out much empty space (two islands far apart, a MultiPolygon cut at the
    /// antimeridian, a long thin diagonal corridor), so the index does not hand every query in
    /// that space to this fence.
    ///
    /// First the shells fall into two groups when that halves the area (`shellGroups`). Then,
    /// greedily, the piece with the largest box is cut at the midpoint of its longer side and its
    /// rings clipped to each half (`clip`); the cut is kept when the halves' boxes cover at most
    /// `pieceSplitRatio` of the piece's, and a piece whose cut was refused is not tried again,
    /// nor one under `minimumCutSide` across. Holes are ignored: they only remove area.
    ///
    /// Every point of the closed polygon lies in some returned closed box, boundary included: a
    /// cut point is off by rounding only, and a cut piece's box is widened by `pieceMargin`, then
    /// clamped to its group's vertex box (which covers the group exactly). A polygon that is never
    /// cut gets its vertex box, or two group boxes, exactly as they are.
    /// - Parameters:
    ///   - coords: x, y of all rings back to back (closed rings repeat their first position;
    ///     an open ring is taken as closed).
    ///   - rings: each ring's positions and whether it is a shell; there is at least one shell.
    /// - Complexity: O(p log p) for p shells, plus O(v) for each cut tried on a piece of v
    ///   positions: about O(v log k) for k pieces, as each half carries only its clipped rings.
    static func polygonBoxes(_ coords: [Double], _ rings: [(count: Int, isExterior: Bool)]) -> [Box] {
        var shells: [(start: Int, end: Int, box: Box)] = []
        var offset = 0
        for ring in rings {
            if ring.isExterior {
                var box = Box.empty
                for i in offset..<(offset + ring.count) { box.extend(coords[2 * i], coords[2 * i + 1]) }
                shells.append((offset, offset + ring.count, box))
            }
            offset += ring.count
        }
        if shells.count == 1 {
            // One shell, first in the record (holes follow it): nothing to group, and clipping
            // reads the shell alone. Most fences; nothing is copied.
            let shell = RingParts(coords: coords, ends: [shells[0].end], box: shells[0].box)
            guard longerSide(shell.box) >= minimumCutSide else { return [shell.box] }
            let (alongX, cut) = cutLine(shell.box)
            guard cutPays(shell, alongX: alongX, at: cut, group: shell.box, area: shell.box.area) else { return [shell.box] }
            var pieces = [Piece(parts: shell, box: shell.box, group: shell.box)]
            subdivide(&pieces)
            return pieces.map(\.box)
        }
        var pieces = shellGroups(shells.map(\.box)).map { members -> Piece in
            var part = RingParts()
            if members.count == rings.count {
                // Shells only, one group: the caller's array, not a copy.
                part.coords = coords
                part.ends = shells.map(\.end)
            } else {
                for m in members {
                    part.coords.append(contentsOf: coords[(2 * shells[m].start)..<(2 * shells[m].end)])
                    part.ends.append(part.coords.count / 2)
                }
            }
            part.box = members.dropFirst().reduce(shells[members[0]].box) { $0.union(shells[$1].box) }
            return Piece(parts: part, box: part.box, group: part.box)
        }
        subdivide(&pieces)
        return pieces.map(\.box)
    }

    /// The shells split into two groups far apart, or one group of all: the best cut of the
    /// shells sorted by box centre in x, or in y, by total area of the two groups' boxes, used
    /// when the groups do not touch and halve the area of the one box.
    /// - Parameter boxes: each shell's vertex box; at least one.
    /// - Returns: shell indices, in order, per group.
    /// - Complexity: O(p log p) for p shells.
    static func shellGroups(_ boxes: [Box]) -> [[Int]] {
        let all = Array(boxes.indices)
        guard boxes.count > 1 else { return [all] }
        let union = boxes.dropFirst().reduce(boxes[0]) { $0.union($1) }
        var best: (area: Double, groups: [[Int]]) = (union.area, [all])
        for axisX in [true, false] {
            let sorted = all.sorted {
                let a = boxes[$0], b = boxes[$1]
                return axisX ? (a.minX + a.maxX) < (b.minX + b.maxX) : (a.minY + a.maxY) < (b.minY + b.maxY)
            }
            // Prefix and suffix unions, then every cut between them.
            var prefix = [boxes[sorted[0]]]
            for i in sorted.dropFirst() { prefix.append(prefix[prefix.count - 1].union(boxes[i])) }
            var suffix = [Box](repeating: boxes[sorted[sorted.count - 1]], count: sorted.count)
            for i in stride(from: sorted.count - 2, through: 0, by: -1) { suffix[i] = suffix[i + 1].union(boxes[sorted[i]]) }
            for cut in 1..<sorted.count {
                let a = prefix[cut - 1]
                let b = suffix[cut]
                let area = a.area + b.area
                if area < best.area && !a.intersects(b) {
                    best = (area, [Array(sorted[..<cut]).sorted(), Array(sorted[cut...]).sorted()])
                }
            }
        }
        return best.area < 0.5 * union.area ? best.groups : [all]
    }

    /// Where `clip` puts each side's positions: `append` for each, `endRing` after each ring.
    protocol ClipSink {
        mutating func append(_ x: Double, _ y: Double)
        mutating func endRing()
    }

    /// Rings, or the parts of rings left by clipping: x, y back to back, each ring's end (a
    /// running count of positions), and the box of the positions.
    struct RingParts: ClipSink {
        var coords: [Double] = []
        var ends: [Int] = []
        var box = Box.empty

        @inline(__always)
        mutating func append(_ x: Double, _ y: Double) {
            coords.append(x)
            coords.append(y)
            box.extend(x, y)
        }

        mutating func endRing() {
            if coords.count / 2 > ends.last ?? 0 { ends.append(coords.count / 2) }
        }
    }

    /// A side of a trial cut: only the box of its positions and their count, nothing allocated.
    struct BoxSink: ClipSink {
        var box = Box.empty
        var positions = 0

        @inline(__always)
        mutating func append(_ x: Double, _ y: Double) {
            positions += 1
            box.extend(x, y)
        }

        mutating func endRing() {}
    }

    /// One index box and the part of the shells it must cover.
    struct Piece {
        var parts: RingParts
        /// The box handed to the index: `parts.box` itself before any cut, widened after.
        var box: Box
        /// The vertex box of the piece's group of shells: covers every piece cut from it.
        var group: Box
        /// A cut of this piece was refused.
        var settled = false
    }

    /// Cuts pieces greedily, largest box first, as `polygonBoxes` describes.
    /// - Complexity: O(v) per cut tried on a piece of v positions, at most `maxCutAttempts`
    ///   cuts, plus O(k) per cut to find the largest of k pieces.
    static func subdivide(_ pieces: inout [Piece]) {
        var attempts = 0
        while pieces.count < maxIndexBoxes && attempts < maxCutAttempts {
            // Fields read in place: a copy of a piece would retain and release its arrays.
            var pick = -1
            var largest = 0.0
            for i in pieces.indices where !pieces[i].settled {
                let area = pieces[i].box.area
                if area > largest && longerSide(pieces[i].parts.box) >= minimumCutSide { (pick, largest) = (i, area) }
            }
            // None left, or only boxes of no area (a point, a segment): nothing to gain.
            guard pick >= 0 else { return }
            attempts += 1
            let (alongX, cut) = cutLine(pieces[pick].parts.box)
            let group = pieces[pick].group
            guard cutPays(pieces[pick].parts, alongX: alongX, at: cut, group: group, area: largest) else {
                pieces[pick].settled = true
                continue
            }
            var low = RingParts()
            var high = RingParts()
            low.coords.reserveCapacity(pieces[pick].parts.coords.count / 2 + 64)
            high.coords.reserveCapacity(pieces[pick].parts.coords.count / 2 + 64)
            clip(pieces[pick].parts, alongX: alongX, at: cut, into: &low, &high)
            // A cut that pays leaves one half or both; the first takes the piece's place.
            var halves = [low, high].lazy.filter { !$0.ends.isEmpty }.map {
                Piece(parts: $0, box: widened($0.box, within: group), group: group)
            }.makeIterator()
            pieces[pick] = halves.next()!
            if let other = halves.next() { pieces.append(other) }
        }
    }

    /// `box` widened by `pieceMargin` and one more representable step on every side, then
    /// clamped to `group`. Ordered and finite when `box` is inside `group`, as a clipped
    /// piece's is (cut points lie between their edge's ends and on a cut inside the piece).
    static func widened(_ box: Box, within group: Box) -> Box {
        Box(
            minX: max(group.minX, (box.minX - pieceMargin).nextDown), minY: max(group.minY, (box.minY - pieceMargin).nextDown),
            maxX: min(group.maxX, (box.maxX + pieceMargin).nextUp), maxY: min(group.maxY, (box.maxY + pieceMargin).nextUp))
    }

    /// Sutherland–Hodgman against one axis-parallel line: each ring's part at or below `cut`
    /// along x (`alongX`) or y, and its part at or above. A position on the line goes to both;
    /// an edge crossing the line gets one cut point, exactly on the line, shared by both. Each
    /// part keeps the ring's winding about every point on its side, so it covers the same
    /// area there (with zero-width runs along the line, harmless to a box). A ring wholly on
    /// one side is left out of the other.
    /// - Complexity: O(v) for v positions.
    static func clip<Sink: ClipSink>(_ rings: RingParts, alongX: Bool, at cut: Double, into low: inout Sink, _ high: inout Sink) {
        rings.coords.withUnsafeBufferPointer { c in
            var start = 0
            for end in rings.ends {
                if end > start {
                    // Each edge runs from the previous position to this one; the first's
                    // previous is the last (a zero-length edge when the ring repeats it).
                    var (px, py) = (c[2 * (end - 1)], c[2 * (end - 1) + 1])
                    for i in start..<end {
                        let (qx, qy) = (c[2 * i], c[2 * i + 1])
                        let (p, q) = alongX ? (px, qx) : (py, qy)
                        if (p < cut && q > cut) || (p > cut && q < cut) {
                            if alongX {
                                let y = crossing(px, py, qx, qy, at: cut)
                                low.append(cut, y)
                                high.append(cut, y)
                            } else {
                                let x = crossing(py, px, qy, qx, at: cut)
                                low.append(x, cut)
                                high.append(x, cut)
                            }
                        }
                        if q <= cut { low.append(qx, qy) }
                        if q >= cut { high.append(qx, qy) }
                        (px, py) = (qx, qy)
                    }
                }
                low.endRing()
                high.endRing()
                start = end
            }
        }
    }

    @inline(__always)
    static func longerSide(_ box: Box) -> Double { max(box.maxX - box.minX, box.maxY - box.minY) }

    /// Where a piece whose rings' box is `tight` is cut: at the midpoint of its longer side.
    @inline(__always)
    static func cutLine(_ tight: Box) -> (alongX: Bool, at: Double) {
        let alongX = tight.maxX - tight.minX >= tight.maxY - tight.minY
        return (alongX, alongX ? (tight.minX + tight.maxX) / 2 : (tight.minY + tight.maxY) / 2)
    }

    /// Whether cutting `rings` at `cut` pays: its halves' boxes, widened within `group`, cover
    /// at most `pieceSplitRatio` of `area` (and some half is not empty). Reads the rings once,
    /// allocates nothing: most cuts tried (every ordinary fence's one) are refused.
    static func cutPays(_ rings: RingParts, alongX: Bool, at cut: Double, group: Box, area: Double) -> Bool {
        var low = BoxSink()
        var high = BoxSink()
        clip(rings, alongX: alongX, at: cut, into: &low, &high)
        var covered = 0.0
        if low.positions > 0 { covered += widened(low.box, within: group).area }
        if high.positions > 0 { covered += widened(high.box, within: group).area }
        return low.positions + high.positions > 0 && covered <= pieceSplitRatio * area
    }

    /// The other coordinate where the edge from (pa, pb) to (qa, qb) meets `a == cut`, for
    /// `cut` strictly between pa and qa. Computed from the lower end in `a` whichever way the
    /// edge runs, and kept between pb and qb, so rounding leaves it within a few units in the
    /// last place of the exact value and never outside the edge's box.
    @inline(__always)
    static func crossing(_ pa: Double, _ pb: Double, _ qa: Double, _ qb: Double, at cut: Double) -> Double {
        let (a1, b1, a2, b2) = pa < qa ? (pa, pb, qa, qb) : (qa, qb, pa, pb)
        let t = min(max((cut - a1) / (a2 - a1), 0), 1)
        return min(max(b1 + t * (b2 - b1), min(b1, b2)), max(b1, b2))
    }
}
