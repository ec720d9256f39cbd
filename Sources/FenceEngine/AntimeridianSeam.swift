/// The antimeridian cut of a polygon, which is not its boundary.
///
/// A polygon that crosses the antimeridian arrives cut there (RFC 7946 section 3.1.9): its
/// rings are closed along longitude +180 on one side and -180 on the other, and a polar cap
/// runs along both. Where the fence has edges on both lines over the same latitudes, the two
/// sides are one area, and those edges (or those parts of them) are where it was written
/// down in two pieces, not where it ends: a position beside the cut is as far from the
/// boundary as it is from the nearest real edge. Containment never looks at the cut (a point
/// on it is covered from either side); distances (`nearest`, hysteresis margins) must leave
/// it out.
///
/// Only edges lying on the line (both ends at +180, or both at -180, within
/// `FenceValidation.rangeTolerance`: reprojected and cut data carries 1e-14 degrees of noise,
/// such as 179.99999999999997) are cut edges, which is how RFC 7946 writers and GDAL's
/// antimeridian cut (WRAPDATELINE, used by the OGR reader) emit them. An edge on +180 with no
/// counterpart on -180 is a real boundary (a fence that ends at the line).
enum AntimeridianSeam {
    /// Whether the edge from (ax, ay) to (bx, by) lies on the antimeridian.
    @inline(__always)
    static func isOnLine(_ ax: Double, _ bx: Double) -> Bool {
        let t = 180 - FenceValidation.rangeTolerance
        return (ax >= t && bx >= t) || (ax <= -t && bx <= -t)
    }

    /// The latitudes covered by a fence's edges on +180 (`east`) and on -180 (`west`), each
    /// as sorted, merged intervals.
    struct Cover {
        var east: [(lo: Double, hi: Double)] = []
        var west: [(lo: Double, hi: Double)] = []

        /// From the edges on the line (any others are ignored).
        init(_ edges: [PolygonDistance.Edge]) {
            for e in edges where AntimeridianSeam.isOnLine(e.ax, e.bx) {
                let span = (lo: min(e.ay, e.by), hi: max(e.ay, e.by))
                if e.ax > 0 { east.append(span) } else { west.append(span) }
            }
            east = Self.merged(east)
            west = Self.merged(west)
        }

        static func merged(_ spans: [(lo: Double, hi: Double)]) -> [(lo: Double, hi: Double)] {
            var out: [(lo: Double, hi: Double)] = []
            for s in spans.sorted(by: { $0.lo < $1.lo }) {
                if let last = out.last, s.lo <= last.hi {
                    out[out.count - 1].hi = max(last.hi, s.hi)
                } else {
                    out.append(s)
                }
            }
            return out
        }
    }

    /// The parts of an edge on the line that are boundary: its latitude span less what the
    /// fence covers on the other side. An edge off the line is returned whole.
    /// - Complexity: O(k) for k intervals on the other side.
    static func boundaryParts(of e: PolygonDistance.Edge, _ cover: Cover) -> [PolygonDistance.Edge] {
        guard isOnLine(e.ax, e.bx) else { return [e] }
        // Kept where it lies (the noise is far below a millimetre), only shortened.
        let other = e.ax > 0 ? cover.west : cover.east
        var lo = min(e.ay, e.by)
        let hi = max(e.ay, e.by)
        var parts: [PolygonDistance.Edge] = []
        for s in other where s.hi >= lo && s.lo <= hi {
            if s.lo > lo { parts.append(PolygonDistance.Edge(ax: e.ax, ay: lo, bx: e.ax, by: s.lo)) }
            lo = max(lo, s.hi)
            if lo >= hi { return parts }
        }
        if lo < hi || (parts.isEmpty && lo == hi && !other.contains(where: { $0.lo <= lo && lo <= $0.hi })) {
            parts.append(PolygonDistance.Edge(ax: e.ax, ay: lo, bx: e.ax, by: hi))
        }
        return parts
    }
}
