import CGDAL
import FenceEngine

extension OGRReprojection {
    /// Removes the zero-width spikes GDAL's antimeridian cut can leave on ±180, in place, in
    /// every ring of `g` (a reprojected copy, ours to change).
    ///
    /// `WRAPDATELINE` snaps a vertex within a fraction of a millimetre of the antimeridian onto
    /// it, so a ring that passes that close can run along the line down and back up again
    /// (-16.5552165631, -16.5552165634, -16.5362597581 at lon -180 in a real case): collinear
    /// edges doubling back, which GEOS calls a self-intersection. The user's polygon was valid;
    /// the cut made it not. Every vertex between the first and the last of a run on one side
    /// of the line is dropped (`withoutRunsOnAntimeridian`): they all lie on one straight
    /// line, so the area is unchanged to the last bit, and the cut edge GDAL meant remains.
    /// - Complexity: O(n) in the positions: a copy of each ring, and a write-back of the rings
    ///   that change.
    func removeCutSpikes(_ g: OGRGeometryH) {
        try? OGRGeometry.forEachPointSequence(g) { (ring: OGRGeometryH) throws(FenceError) in
            let n = OGRGeometry.copyXY(ring, xs: &xs, ys: &ys)
            guard n >= 4, let kept = Self.withoutRunsOnAntimeridian(xs: xs[0..<n], ys: ys[0..<n]) else { return }
            OGR_G_SetPointCount(ring, Int32(kept.count))
            for (k, p) in kept.enumerated() { OGR_G_SetPoint_2D(ring, Int32(k), p.x, p.y) }
        }
    }

    /// A closed ring (last position = first) with each run of consecutive vertices on the
    /// antimeridian (|lon| within `FenceValidation.rangeTolerance` of 180) cut down to the
    /// run's first and last vertex (one, when those coincide), closed again; nil when nothing
    /// changes. +180 and -180 are one meridian, and GDAL's cut may put a vertex of a western
    /// piece at +180 (an edge across the whole map and back): the kept vertices take the side
    /// of the ring's vertices either side of the run. A run between vertices on opposite sides
    /// (a ring that really crosses the line) leaves the ring as it is, and so does a ring
    /// lying wholly on the line, or one that would keep under three vertices. The ring may start elsewhere than it did (at a vertex off the
    /// line), which changes no point of it.
    /// - Complexity: O(n).
    static func withoutRunsOnAntimeridian(xs: ArraySlice<Double>, ys: ArraySlice<Double>) -> [(x: Double, y: Double)]? {
        let m = xs.count - 1
        guard m >= 3 else { return nil }
        let edge = 180 - FenceValidation.rangeTolerance
        @inline(__always) func x(_ k: Int) -> Double { xs[xs.startIndex + k % m] }
        @inline(__always) func y(_ k: Int) -> Double { ys[ys.startIndex + k % m] }
        @inline(__always) func onLine(_ k: Int) -> Bool { abs(x(k)) >= edge }
        guard let start = (0..<m).first(where: { !onLine($0) }) else { return nil }
        var out: [(x: Double, y: Double)] = []
        out.reserveCapacity(m + 1)
        var changed = false
        var k = start
        let end = start + m
        while k < end {
            guard onLine(k) else {
                out.append((x(k), y(k)))
                k += 1
                continue
            }
            var last = k
            while last + 1 < end && onLine(last + 1) { last += 1 }
            // The vertices either side are off the line (the walk starts off it).
            let west = x(k - 1 + m) < 0
            guard west == (x(last + 1) < 0) else { return nil }
            let line = west ? -180.0 : 180.0
            let first = (x: (x(k) < 0) == west ? x(k) : line, y: y(k))
            let final = (x: (x(last) < 0) == west ? x(last) : line, y: y(last))
            out.append(first)
            if last > k && final != first { out.append(final) }
            if first.x != x(k) || final.x != x(last) || last - k + 1 > (last > k && final != first ? 2 : 1) { changed = true }
            k = last + 1
        }
        // A ring left with under three vertices was degenerate: validation says why.
        guard changed, out.count >= 3 else { return nil }
        out.append(out[0])
        return out
    }
}
