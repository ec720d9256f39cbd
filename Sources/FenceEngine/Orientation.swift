/// Robust point-in-ring and orientation tests on flat coordinates.
///
/// These mirror GEOS's own algorithms (`RayCrossingCounter` and the fast filter in front of
/// `CGAlgorithmsDD::orientationIndex`), so wherever they give an answer it is the answer GEOS
/// gives. Where the floating-point filter cannot decide the sign of an orientation (the point is
/// within about 1e-15 relative of an edge's line), they report `uncertain` and the caller asks
/// GEOS, which decides with double-double arithmetic. GEOS stays the authority; it is only
/// spared the calls whose answer is already certain.
enum Orientation {
    /// The sign of the orientation of `q` against the directed line p1 -> p2: 1 left, -1
    /// right, 0 collinear, 2 when the filter cannot decide.
    ///
    /// Same arithmetic and error bound (`DP_SAFE_EPSILON` = 1e-15) as GEOS's
    /// `CGAlgorithmsDD::orientationIndexFilter`, with one more case left undecided: a product
    /// below the normal range (about 2.2e-308) of two non-zero differences. Such a product has
    /// lost its relative precision, or rounded to zero and lost its sign, which the error bound
    /// does not allow for: GEOS's filter takes it as it is, and called a point outside a
    /// polygon with coordinates near 1e-308 collinear with an edge, so on the boundary (found by
    /// the `wkb` fuzz target). The differences themselves are exact there (gradual underflow).
    @inline(__always)
    static func indexFilter(_ pax: Double, _ pay: Double, _ pbx: Double, _ pby: Double, _ pcx: Double, _ pcy: Double)
        -> Int
    {
        let detleft = (pax - pcx) * (pby - pcy)
        let detright = (pay - pcy) * (pbx - pcx)
        if abs(detleft) < .leastNormalMagnitude && pax != pcx && pby != pcy { return 2 }
        if abs(detright) < .leastNormalMagnitude && pay != pcy && pbx != pcx { return 2 }
        let det = detleft - detright
        let detsum: Double
        if detleft > 0 {
            if detright <= 0 { return signum(det) }
            detsum = detleft + detright
        } else if detleft < 0 {
            if detright >= 0 { return signum(det) }
            detsum = -detleft - detright
        } else {
            return signum(det)
        }
        let errbound = 1e-15 * detsum
        if det >= errbound || -det >= errbound { return signum(det) }
        return 2
    }

    @inline(__always)
    static func signum(_ x: Double) -> Int { x > 0 ? 1 : (x < 0 ? -1 : 0) }
}

/// Where a point lies against an areal geometry.
enum PointLocation: UInt8 {
    case exterior, boundary, interior
    /// The filter could not decide; ask GEOS.
    case uncertain
}

/// Locates a point against a polygon record (`FlatGeometry`) by counting crossings of the ray
/// to the right.
enum RingLocator {
    /// One segment's part in the count, in the same order of tests as GEOS
    /// `RayCrossingCounter::countSegment`.
    /// - Returns: true when the point is on the segment (the boundary).
    @inline(__always)
    static func count(
        _ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, x: Double, y: Double, crossings: inout Int,
        uncertain: inout Bool
    ) -> Bool {
        if x1 < x && x2 < x { return false }
        if x == x2 && y == y2 { return true }
        if y1 == y && y2 == y { return min(x1, x2) <= x && x <= max(x1, x2) }
        if (y1 > y && y2 <= y) || (y2 > y && y1 <= y) {
            var orient = Orientation.indexFilter(x1, y1, x2, y2, x, y)
            if orient == 2 {
                uncertain = true
                return false
            }
            if orient == 0 { return true }
            if y2 < y1 { orient = -orient }
            if orient == 1 { crossings += 1 }
        }
        return false
    }

    /// Whether the point is in the bounding box (edges included) of some exterior ring of a
    /// polygon record: exact comparisons, so a point outside every box is certainly outside.
    /// - Complexity: O(n) in the number of positions of the exterior rings.
    static func inExteriorBox(x: Double, y: Double, record: UnsafePointer<Double>) -> Bool {
        let ringCount = FlatGeometry.ringCount(of: record)
        let coords = record + 1 + ringCount
        for r in 0..<ringCount where FlatGeometry.isExterior(r, of: record) {
            let positions = FlatGeometry.ringPositions(r, of: record)
            let p = coords + 2 * positions.lowerBound
            let n = positions.count
            guard n > 0 else { continue }
            var minX = p[0], maxX = p[0], minY = p[1], maxY = p[1]
            for i in 1..<n {
                minX = min(minX, p[2 * i])
                maxX = max(maxX, p[2 * i])
                minY = min(minY, p[2 * i + 1])
                maxY = max(maxY, p[2 * i + 1])
            }
            if minX <= x && x <= maxX && minY <= y && y <= maxY { return true }
        }
        return false
    }

    /// - Parameters:
    ///   - x, y: the point.
    ///   - record: a polygon record (`FlatGeometry`): ring count, signed ring ends, then x, y
    ///     interleaved.
    /// - Returns: interior, boundary or exterior of the union of the rings by the even-odd rule
    ///   (right for a valid Polygon or MultiPolygon), or `uncertain`.
    /// - Complexity: O(n) in the number of positions, with no allocation.
    @inline(__always)
    static func locate(x: Double, y: Double, record: UnsafePointer<Double>) -> PointLocation {
        let ringCount = FlatGeometry.ringCount(of: record)
        var crossings = 0
        var uncertain = false
        let coords = record + 1 + ringCount
        for r in 0..<ringCount {
            let positions = FlatGeometry.ringPositions(r, of: record)
            let p = coords + 2 * positions.lowerBound
            let n = positions.count
            var i = 1
            while i < n {
                if count(p[2 * i - 2], p[2 * i - 1], p[2 * i], p[2 * i + 1], x: x, y: y, crossings: &crossings, uncertain: &uncertain) {
                    return .boundary
                }
                i += 1
            }
        }
        if uncertain { return .uncertain }
        return crossings & 1 == 1 ? .interior : .exterior
    }

    /// The same answer as `locate`, usually without counting: a point outside the record's
    /// bounding box is exterior, one in a pure cell of its grid (`FlatGeometry.insertCellGrid`)
    /// takes the cell's location, and one in a mixed cell is located from the cell's centre
    /// (`locateFromCentre`); only the rest count the edges of their slab
    /// (`locateIndexedBySlab`).
    /// - Complexity: O(1) for a pure cell, O(e) for the e edges listed in a mixed cell, else
    ///   O(e) for the e edges in one slab; no allocation.
    @inline(__always)
    static func locateIndexed(x: Double, y: Double, record: UnsafePointer<Double>) -> PointLocation {
        cellLocation(x: x, y: y, record: record) ?? locateIndexedBySlab(x: x, y: y, record: record)
    }

    /// Where the cell grid alone places a point (see `locateIndexed`), or nil when the slab
    /// count must decide: a cell without a reference, or a point the crossing count from the
    /// centre cannot settle (on or within about 1e-15 relative of a listed edge's line, or
    /// collinear with the centre and an edge's end).
    @inline(__always)
    static func cellLocation(x: Double, y: Double, record: UnsafePointer<Double>) -> PointLocation? {
        let grid = cellGrid(of: record)
        if x < grid[1] || y < grid[2] || x > grid[3] || y > grid[4] { return .exterior }
        let side = Int(grid[0])
        let cx = FlatGeometry.slab(x, minY: grid[1], scale: grid[5], slabs: side)
        let cy = FlatGeometry.slab(y, minY: grid[2], scale: grid[6], slabs: side)
        let words = UnsafeRawPointer(grid + FlatGeometry.cellHeaderCount).assumingMemoryBound(to: UInt32.self)
        let cell = cy &* side &+ cx
        let word = words[cell]
        switch word & 7 {
        case FlatGeometry.CellCode.exterior: return .exterior
        case FlatGeometry.CellCode.interior: return .interior
        case FlatGeometry.CellCode.mixed: return nil
        default:
            let rx = FlatGeometry.cellCentre(cx, min: grid[1], width: grid[7])
            let ry = FlatGeometry.cellCentre(cy, min: grid[2], width: grid[8])
            let lists = UnsafeRawPointer(words + (side &* side &+ 1))
            let range = Int(word >> 3)..<Int(words[cell &+ 1] >> 3)
            let flips: Int? =
                grid[9] != 0
                ? crossings(lists.assumingMemoryBound(to: UInt32.self), range, from: rx, ry, to: x, y, record: record)
                : crossings(lists.assumingMemoryBound(to: UInt16.self), range, from: rx, ry, to: x, y, record: record)
            guard let flips else { return nil }
            let inside = (word & 7 == FlatGeometry.CellCode.mixedFromInterior) != (flips & 1 == 1)
            return inside ? .interior : .exterior
        }
    }

    /// How many of the listed edges (`entries[range]`, each the position index of its first
    /// end) the segment from the reference point R to P crosses properly (at a point inside
    /// both), or nil when some listed edge might touch the segment otherwise: R or P on the
    /// edge's line, the edge's end on the segment's line, or an orientation the filter cannot
    /// decide. When every listed edge is either apart from the segment or crosses it properly,
    /// and the list holds every edge that meets the segment, P's location is R's flipped once
    /// per crossing; a P on the boundary always gives nil.
    /// - Complexity: O(e) for e entries: one box test per edge, and two to four orientations
    ///   for an edge whose box meets the segment's.
    @inline(__always)
    static func crossings<Entry: FixedWidthInteger>(
        _ entries: UnsafePointer<Entry>, _ range: Range<Int>, from rx: Double, _ ry: Double, to x: Double, _ y: Double,
        record: UnsafePointer<Double>
    ) -> Int? {
        let coords = record + 1 + Int(record[0])
        let loX = min(rx, x)
        let hiX = max(rx, x)
        let loY = min(ry, y)
        let hiY = max(ry, y)
        var flips = 0
        for e in range {
            let i = Int(entries[e])
            let ax = coords[2 &* i]
            let ay = coords[2 &* i &+ 1]
            let bx = coords[2 &* i &+ 2]
            let by = coords[2 &* i &+ 3]
            // Boxes apart (exact compares): the edge cannot meet the segment.
            if (ax < loX && bx < loX) || (ax > hiX && bx > hiX) || (ay < loY && by < loY) || (ay > hiY && by > hiY) { continue }
            let o1 = Orientation.indexFilter(ax, ay, bx, by, rx, ry)
            let o2 = Orientation.indexFilter(ax, ay, bx, by, x, y)
            if o1 == 0 || o1 == 2 || o2 == 0 || o2 == 2 { return nil }
            if o1 == o2 { continue }  // R and P strictly on one side of the edge's line
            let o3 = Orientation.indexFilter(rx, ry, x, y, ax, ay)
            let o4 = Orientation.indexFilter(rx, ry, x, y, bx, by)
            if o3 == 0 || o3 == 2 || o4 == 0 || o4 == 2 { return nil }
            if o3 != o4 { flips &+= 1 }
        }
        return flips
    }

    /// What the cell grid of an indexed record says of a point: its cell's code
    /// (`FlatGeometry.CellCode`: 0 exterior, 1 interior, 2 and 3 mixed with an exterior or
    /// interior centre, 4 mixed without a reference), or 5 outside the polygon's box (so
    /// exterior).
    static func gridCode(x: Double, y: Double, record: UnsafePointer<Double>) -> UInt32 {
        let grid = cellGrid(of: record)
        if x < grid[1] || y < grid[2] || x > grid[3] || y > grid[4] { return 5 }
        let side = Int(grid[0])
        let cx = FlatGeometry.slab(x, minY: grid[1], scale: grid[5], slabs: side)
        let cy = FlatGeometry.slab(y, minY: grid[2], scale: grid[6], slabs: side)
        let words = UnsafeRawPointer(grid + FlatGeometry.cellHeaderCount).assumingMemoryBound(to: UInt32.self)
        return words[cy &* side &+ cx] & 7
    }

    /// Where the cell grid of an indexed record starts (`FlatGeometry.insertCellGrid`): right
    /// after the coordinates, so finding it takes the ring count and the last ring's end
    /// (`FlatGeometry.coordinatesEnd`), O(1) whatever the rings.
    @inline(__always)
    static func cellGrid(of record: UnsafePointer<Double>) -> UnsafePointer<Double> {
        record + FlatGeometry.coordinatesEnd(of: record)
    }

    /// Where the edge index of an indexed record starts (`FlatGeometry.appendEdgeIndex`):
    /// after the cell grid, whose header holds its length in doubles.
    @inline(__always)
    static func edgeIndex(of record: UnsafePointer<Double>) -> UnsafePointer<Double> {
        let grid = cellGrid(of: record)
        return grid + Int(grid[FlatGeometry.cellHeaderCount - 1])
    }

    /// The same answer as `locate`, from only the edges whose latitude range can hold `y`
    /// (`locateBySlab` on the record's edge index).
    @inline(__always)
    static func locateIndexedBySlab(x: Double, y: Double, record: UnsafePointer<Double>) -> PointLocation {
        locateBySlab(x: x, y: y, coords: record + 1 + Int(record[0]), index: edgeIndex(of: record))
    }

    /// The same answer as `locate` for the polygon whose coordinates start at `coords`, from
    /// only the edges whose latitude range can hold `y`: the edge index at `index`
    /// (`FlatGeometry.appendEdgeIndex`) lists, per horizontal slab, every edge that reaches
    /// into it. Edges outside the point's slab cannot touch the ray, so the count is
    /// unchanged; nor can edges wholly west of the point, and as a slab lists its edges
    /// easternmost first, the count stops at the first of those.
    /// - Complexity: O(e) for the e edges of the slab east of the point's west end, no
    ///   allocation.
    @inline(__always)
    static func locateBySlab(x: Double, y: Double, coords: UnsafePointer<Double>, index header: UnsafePointer<Double>) -> PointLocation {
        let slabs = Int(header[0])
        let ints = UnsafeRawPointer(header + 3).assumingMemoryBound(to: Int32.self)
        let s = FlatGeometry.slab(y, minY: header[1], scale: header[2], slabs: slabs)
        var crossings = 0
        var uncertain = false
        for e in Int(ints[s])..<Int(ints[s + 1]) {
            let i = Int(ints[slabs + 1 + e])
            let x1 = coords[2 * i]
            let x2 = coords[2 * i + 2]
            // Easternmost first: once an edge lies wholly west of the point, so do the rest,
            // and `count` would return at its first test for each.
            if x1 < x && x2 < x { break }
            if count(x1, coords[2 * i + 1], x2, coords[2 * i + 3], x: x, y: y, crossings: &crossings, uncertain: &uncertain) {
                return .boundary
            }
        }
        if uncertain { return .uncertain }
        return crossings & 1 == 1 ? .interior : .exterior
    }
}

/// A fast proof that a small ring is simple, so the common valid fence skips GEOS validation.
enum RingSimplicity {
    /// True only when it is certain that the closed ring (`n` positions at `coords`, x, y
    /// interleaved, last = first) has at least three non-collinear vertices and no two edges
    /// meet except neighbours at their shared vertex: then GEOS `isValid` holds for a Polygon
    /// with this exterior and no holes. False means "not proven": the caller asks GEOS, which
    /// decides and gives its reason. Every orientation goes through the same filter as
    /// `Orientation.indexFilter`; an uncertain or zero one is never taken as proof.
    /// Pairs of edges whose boxes are strictly apart are skipped: they cannot meet. Rings of
    /// over 64 edges test only the pairs that share a cell of a grid (`gridPairs`), or, when
    /// their edges crowd its cells, go through the sweep (`RingSweep`).
    /// - Complexity: O(n²) box compares up to 64 edges; about O(n) above for spread-out edges,
    ///   O(n log n) for crowded ones.
    static func isCertainlySimple(_ coords: UnsafePointer<Double>, count n: Int) -> Bool {
        verdict(coords, count: n) == .simple
    }

    /// `isCertainlySimple`, or where a ring whose edges crowd the grid's cells certainly
    /// meets itself (`RingSweep.Verdict.meets`: such a ring is as slow for GEOS to explain as
    /// to check). A ring the grid or the pair test finds may meet itself is `.notProven`:
    /// GEOS explains it quickly.
    /// - Complexity: that of `isCertainlySimple`, O(n log n) when the sweep runs.
    static func verdict(_ coords: UnsafePointer<Double>, count n: Int) -> RingSweep.Verdict {
        let edges = n - 1
        guard edges >= 3, turnsEverywhere(coords, edges: edges) else { return .notProven }
        // Over 64 edges: the grid, and when it cannot tell (edges crowding its cells, as a
        // hedgehog's spikes do near their common point) the sweep, which costs O(n log n)
        // whatever the shape.
        if edges > 64 {
            switch gridPairs(coords, edges: edges) {
            case .apart: return .simple
            case .mayMeet: return .notProven
            case .crowded: return RingSweep.verdict(coords, count: n)
            }
        }
        // Each edge's box once (min x, max x, min y, max y, edge by edge), so the pairs whose
        // boxes are strictly apart, most of them, cost four compares (the same test as
        // `pairMayMeet`'s first: max of one below min of the other on some axis).
        return withUnsafeTemporaryAllocation(of: Double.self, capacity: 4 * edges) { box in
            for e in 0..<edges {
                box[4 * e] = min(coords[2 * e], coords[2 * e + 2])
                box[4 * e + 1] = max(coords[2 * e], coords[2 * e + 2])
                box[4 * e + 2] = min(coords[2 * e + 1], coords[2 * e + 3])
                box[4 * e + 3] = max(coords[2 * e + 1], coords[2 * e + 3])
            }
            for i in 0..<edges {
                let minX = box[4 * i]
                let maxX = box[4 * i + 1]
                let minY = box[4 * i + 2]
                let maxY = box[4 * i + 3]
                for j in stride(from: i + 2, to: edges, by: 1) {
                    if box[4 * j + 1] < minX || box[4 * j] > maxX || box[4 * j + 3] < minY || box[4 * j + 2] > maxY { continue }
                    if !areNeighbours(i, j, edges: edges) && linesMayMeet(coords, i, j) { return .notProven }
                }
            }
            return .simple
        }
    }

    /// Whether every edge certainly turns into the next (left or right), neither going
    /// straight on nor folding back along it: no zero-length edge, no collinear neighbours.
    /// - Complexity: O(n).
    static func turnsEverywhere(_ coords: UnsafePointer<Double>, edges: Int) -> Bool {
        for i in 0..<edges {
            let next = (i + 2) <= edges ? i + 2 : 1
            let turn = Orientation.indexFilter(
                coords[2 * i], coords[2 * i + 1], coords[2 * i + 2], coords[2 * i + 3], coords[2 * next], coords[2 * next + 1])
            if turn == 0 || turn == 2 { return false }
        }
        return true
    }

    /// What the grid's pair test found.
    enum GridOutcome {
        /// Every pair that shares a cell is certainly apart: the ring is simple.
        case apart
        /// A pair may meet.
        case mayMeet
        /// Too many cells or pairs to test: edges cross much of the box or crowd a few cells.
        case crowded
    }

    /// Whether non-neighbouring edges i < j might meet: false only when it is certain they do
    /// not (their boxes are strictly apart, or all four orientations are certain, nonzero and
    /// show no crossing). Neighbours (j = i + 1, and the first and last edge) share a vertex
    /// and are never reported.
    @inline(__always)
    static func pairMayMeet(_ coords: UnsafePointer<Double>, _ i: Int, _ j: Int, edges: Int) -> Bool {
        !areNeighbours(i, j, edges: edges) && !boxesApart(coords, i, j) && linesMayMeet(coords, i, j)
    }

    /// Whether edges i < j share a vertex: j = i + 1, or the ring's first and last edge.
    @inline(__always)
    static func areNeighbours(_ i: Int, _ j: Int, edges: Int) -> Bool { j == i + 1 || (i == 0 && j == edges - 1) }

    /// Whether the boxes of edges i and j are strictly apart, so the edges cannot meet (exact
    /// compares, so sound).
    @inline(__always)
    static func boxesApart(_ coords: UnsafePointer<Double>, _ i: Int, _ j: Int) -> Bool {
        let (ax, ay, bx, by) = (coords[2 * i], coords[2 * i + 1], coords[2 * i + 2], coords[2 * i + 3])
        let (cx, cy, dx, dy) = (coords[2 * j], coords[2 * j + 1], coords[2 * j + 2], coords[2 * j + 3])
        return (cx < ax && cx < bx && dx < ax && dx < bx) || (cx > ax && cx > bx && dx > ax && dx > bx)
            || (cy < ay && cy < by && dy < ay && dy < by) || (cy > ay && cy > by && dy > ay && dy > by)
    }

    /// `pairMayMeet`'s last step, for edges whose boxes are not apart: false only when all
    /// four orientations are certain, nonzero and show no crossing.
    @inline(__always)
    static func linesMayMeet(_ coords: UnsafePointer<Double>, _ i: Int, _ j: Int) -> Bool {
        let (o1, o2, o3, o4) = orientations(coords, i, j)
        if o1 == 2 || o2 == 2 || o3 == 2 || o4 == 2 { return true }
        if o1 == 0 || o2 == 0 || o3 == 0 || o4 == 0 { return true }
        return o1 != o2 && o3 != o4  // they cross
    }

    /// The four orientations (`Orientation.indexFilter`) of edges i and j (edge k runs from
    /// position k to k + 1): j's start and end against i's line, then i's start and end
    /// against j's line.
    @inline(__always)
    static func orientations(_ coords: UnsafePointer<Double>, _ i: Int, _ j: Int) -> (Int, Int, Int, Int) {
        let (ax, ay, bx, by) = (coords[2 * i], coords[2 * i + 1], coords[2 * i + 2], coords[2 * i + 3])
        let (cx, cy, dx, dy) = (coords[2 * j], coords[2 * j + 1], coords[2 * j + 2], coords[2 * j + 3])
        return (
            Orientation.indexFilter(ax, ay, bx, by, cx, cy), Orientation.indexFilter(ax, ay, bx, by, dx, dy),
            Orientation.indexFilter(cx, cy, dx, dy, ax, ay), Orientation.indexFilter(cx, cy, dx, dy, bx, by)
        )
    }

    /// The pair test over only the edges that share a cell of a grid of about one cell per
    /// edge laid over the ring's box, each edge filed under the cells it passes through. Two
    /// edges that meet share a point, and that point's cell is among both edges' cells (the
    /// ranges are widened against rounding), so every pair that might meet is tested at least
    /// once. Rings whose edges cross much of the box, or crowd a few cells, are `.crowded`.
    /// - Complexity: O(n + sum over cells of edges²), about O(n) for rings whose edges are
    ///   spread out, O(n²) at worst.
    static func gridPairs(_ coords: UnsafePointer<Double>, edges: Int) -> GridOutcome {
        var minX = Double.infinity
        var minY = Double.infinity
        var maxX = -Double.infinity
        var maxY = -Double.infinity
        for i in 0...edges {
            minX = min(minX, coords[2 * i])
            maxX = max(maxX, coords[2 * i])
            minY = min(minY, coords[2 * i + 1])
            maxY = max(maxY, coords[2 * i + 1])
        }
        guard minX.isFinite, minY.isFinite, maxX.isFinite, maxY.isFinite, maxX > minX, maxY > minY else { return .mayMeet }
        let side = max(1, min(2048, Int((4 * Double(edges)).squareRoot().rounded(.up))))
        let scaleX = Double(side) / (maxX - minX)
        let scaleY = Double(side) / (maxY - minY)
        @inline(__always) func cell(_ v: Double) -> Int { FlatGeometry.clampedIndex(v, count: side) }
        // Cells each edge passes through, counted and then filed (compressed rows). Per row of
        // cells, the edge's x extent within that row's band, all in cell units and widened by
        // 1e-6 cells: rounding here is below 1e-12 cells, so a point of the edge is always in
        // a cell the edge is filed under.
        let margin = 1e-6
        let cellCount = side * side
        // The cells of edge e, one call of `body` each.
        @inline(__always) func forEachCell(of e: Int, _ body: (Int) -> Void) {
            let ux1 = (coords[2 * e] - minX) * scaleX
            let uy1 = (coords[2 * e + 1] - minY) * scaleY
            let ux2 = (coords[2 * e + 2] - minX) * scaleX
            let uy2 = (coords[2 * e + 3] - minY) * scaleY
            let lowY = Swift.min(uy1, uy2)
            let highY = Swift.max(uy1, uy2)
            let slope = (ux2 - ux1) / (uy2 - uy1)
            // An error in y moves x by the slope times as much.
            let widen = slope.isFinite ? margin + abs(slope) * 1e-9 : 0
            for row in cell(lowY - margin)...cell(highY + margin) {
                var x0 = Swift.min(ux1, ux2)
                var x1 = Swift.max(ux1, ux2)
                if highY > lowY && slope.isFinite {
                    // Where the edge enters and leaves the band, clamped to the edge.
                    let b0 = Swift.max(lowY, Double(row) - margin)
                    let b1 = Swift.min(highY, Double(row + 1) + margin)
                    let xa = ux1 + (b0 - uy1) * slope
                    let xb = ux1 + (b1 - uy1) * slope
                    x0 = Swift.max(x0, Swift.min(xa, xb) - widen)
                    x1 = Swift.min(x1, Swift.max(xa, xb) + widen)
                }
                guard x0 <= x1 + 2 * margin else { continue }
                for cx in cell(x0 - margin)...cell(x1 + margin) { body(row * side + cx) }
            }
        }
        // Counted first, so a ring whose edges cross much of the box is left to the sweep
        // before anything is stored (storing the cells first took 512 bytes an edge, 933 MB
        // for a million-position sawtooth); then each cell's edges filed, ascending.
        var start = [Int32](repeating: 0, count: cellCount + 1)
        var total = 0
        let crowded = start.withUnsafeMutableBufferPointer { start -> Bool in
            for e in 0..<edges {
                forEachCell(of: e) { c in
                    start[c + 1] &+= 1
                    total &+= 1
                }
                // Edges that cross much of the box make the grid useless: left to the sweep.
                if total > 64 * (edges + side) { return true }
            }
            for c in 0..<cellCount { start[c + 1] &+= start[c] }
            return false
        }
        if crowded { return .crowded }
        var filed = [Int32](repeating: 0, count: total)
        start.withUnsafeBufferPointer { start in
            var fill = Array(start[0..<cellCount])
            filed.withUnsafeMutableBufferPointer { filed in
                fill.withUnsafeMutableBufferPointer { fill in
                    for e in 0..<edges {
                        forEachCell(of: e) { c in
                            filed[Int(fill[c])] = Int32(e)
                            fill[c] &+= 1
                        }
                    }
                }
            }
        }
        // Pairs are bounded too: a ring crowded into a few cells is left to the sweep.
        // Edges side by side along their length (a star's spikes) share several cells and
        // come up in each: a pair found apart is remembered in a small direct-mapped table,
        // so its orientations are computed about once (on a 1,000-vertex star they were
        // a third of the check).
        let memoSize = 1 << Swift.max(8, Swift.min(12, Int.bitWidth - edges.leadingZeroBitCount + 1))
        return withUnsafeTemporaryAllocation(of: UInt64.self, capacity: memoSize) { memo -> GridOutcome in
            memo.initialize(repeating: .max)
            var pairs = 0
            for c in 0..<cellCount {
                let lo = Int(start[c])
                let hi = Int(start[c + 1])
                if hi - lo < 2 { continue }
                pairs += (hi - lo) * (hi - lo - 1) / 2
                if pairs > 256 * edges { return .crowded }
                for p in lo..<(hi - 1) {
                    for q in (p + 1)..<hi {
                        let i = Swift.min(Int(filed[p]), Int(filed[q]))
                        let j = Swift.max(Int(filed[p]), Int(filed[q]))
                        if areNeighbours(i, j, edges: edges) || boxesApart(coords, i, j) { continue }
                        let key = UInt64(i) << 32 | UInt64(j)
                        let slot = Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 52) & (memoSize - 1)
                        if memo[slot] == key { continue }
                        if linesMayMeet(coords, i, j) { return .mayMeet }
                        memo[slot] = key
                    }
                }
            }
            return .apart
        }
    }
}
