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
        let ringCount = Int(record[0])
        var p = record + 1 + ringCount
        for r in 0..<ringCount {
            let signed = record[1 + r]
            let n = Int(abs(signed))
            defer { p += 2 * n }
            guard signed > 0, n > 0 else { continue }
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
    ///   - record: a polygon record: ring count, signed ring lengths, then x, y interleaved.
    /// - Returns: interior, boundary or exterior of the union of the rings by the even-odd rule
    ///   (right for a valid Polygon or MultiPolygon), or `uncertain`.
    /// - Complexity: O(n) in the number of positions, with no allocation.
    @inline(__always)
    static func locate(x: Double, y: Double, record: UnsafePointer<Double>) -> PointLocation {
        let ringCount = Int(record[0])
        var crossings = 0
        var uncertain = false
        var p = record + 1 + ringCount
        for r in 0..<ringCount {
            let n = Int(abs(record[1 + r]))
            defer { p += 2 * n }
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

    /// The same answer as `locate`, from only the edges whose latitude range can hold `y`:
    /// the record's edge index (`FlatGeometry.appendEdgeIndex`) lists, per horizontal slab,
    /// every edge that reaches into it. Edges outside the point's slab cannot touch the ray, so
    /// the count is unchanged.
    /// - Complexity: O(e) for the e edges in one slab (about 2 for an even polygon), no allocation.
    @inline(__always)
    static func locateIndexed(x: Double, y: Double, record: UnsafePointer<Double>) -> PointLocation {
        let ringCount = Int(record[0])
        var n = 0
        for r in 0..<ringCount { n += Int(abs(record[1 + r])) }
        let coords = record + 1 + ringCount
        let header = coords + 2 * n
        let slabs = Int(header[0])
        let ints = UnsafeRawPointer(header + 3).assumingMemoryBound(to: Int32.self)
        let s = FlatGeometry.slab(y, minY: header[1], scale: header[2], slabs: slabs)
        var crossings = 0
        var uncertain = false
        for e in Int(ints[s])..<Int(ints[s + 1]) {
            let i = Int(ints[slabs + 1 + e])
            if count(coords[2 * i], coords[2 * i + 1], coords[2 * i + 2], coords[2 * i + 3], x: x, y: y, crossings: &crossings, uncertain: &uncertain) {
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
    /// - Complexity: O(n²); use it for small rings only.
    static func isCertainlySimple(_ coords: UnsafePointer<Double>, count n: Int) -> Bool {
        let edges = n - 1
        guard edges >= 3 else { return false }
        @inline(__always) func orient(_ a: Int, _ b: Int, _ c: Int) -> Int {
            Orientation.indexFilter(coords[2 * a], coords[2 * a + 1], coords[2 * b], coords[2 * b + 1], coords[2 * c], coords[2 * c + 1])
        }
        for i in 0..<edges {
            let a = i
            let b = i + 1
            // The next edge must turn, not fold back along this one.
            let next = (i + 2) <= edges ? i + 2 : 1
            let turn = orient(a, b, next)
            if turn == 0 || turn == 2 { return false }
            for j in stride(from: i + 2, to: edges, by: 1) {
                if i == 0 && j == edges - 1 { continue }  // first and last edges share vertex 0
                let c = j
                let d = j + 1
                let o1 = orient(a, b, c)
                let o2 = orient(a, b, d)
                let o3 = orient(c, d, a)
                let o4 = orient(c, d, b)
                if o1 == 2 || o2 == 2 || o3 == 2 || o4 == 2 { return false }
                if o1 == 0 || o2 == 0 || o3 == 0 || o4 == 0 { return false }
                if o1 != o2 && o3 != o4 { return false }  // they cross
            }
        }
        return true
    }
}
