import CGDAL
import FenceEngine

extension OGRReprojection {
    /// Removes the zero-width spikes GDAL's antimeridian cut can leave on ±180, in place, in
    /// every ring of `g` (a reprojected copy, ours to change).
    ///
    /// `WRAPDATELINE` snaps a vertex within a fraction of a millimetre of the antimeridian onto
    /// it, so a ring that passes that close can run along the line down and back up again
    /// (-16.5552165631, -16.5552165634, -16.5362597581 at lon -180 in a real case), or a
    /// western piece can step to +180 and back at one latitude: edges doubling back, which
    /// GEOS calls a self-intersection. The user's polygon was valid; the cut made it not. The
    /// vertices inside each run on the line are dropped (`withoutRunsOnAntimeridian`).
    /// - Complexity: O(n) in the positions: the envelope, and for a geometry reaching ±180 a copy
    ///   of each ring and a write-back of the rings that change.
    func removeCutSpikes(_ g: OGRGeometryH) {
        // Most geometries reach neither name of the line: no ring is copied for them.
        var box = OGREnvelope()
        OGR_G_GetEnvelope(g, &box)
        guard box.MinX <= -180 || box.MaxX >= 180 else { return }
        try? OGRGeometry.forEachPointSequence(g) { (ring: OGRGeometryH) throws(FenceError) in
            let n = OGRGeometry.copyXY(ring, xs: &xs, ys: &ys)
            guard n >= 4, let kept = Self.withoutRunsOnAntimeridian(xs: xs[0..<n], ys: ys[0..<n]) else { return }
            OGR_G_SetPointCount(ring, Int32(kept.count))
            for (k, p) in kept.enumerated() { OGR_G_SetPoint_2D(ring, Int32(k), p.x, p.y) }
        }
    }

    /// A closed ring (last position = first) with each run of consecutive vertices exactly on
    /// the antimeridian (longitude ±180, as GDAL's cut writes it) cut down to the run's first
    /// and last vertex (one, when those coincide), closed again; nil when nothing is dropped.
    ///
    /// Only what changes no area goes: vertices inside a run on one name of the line are
    /// collinear with its ends. A vertex inside the run on the other name (+180 in a run at
    /// -180) is the same point of the Earth as its neighbour in the run, and must lie at that
    /// neighbour's latitude (to 1e-9 degrees): otherwise the ring really spans the map there,
    /// and it is left as it is. So is a ring whose run begins on one name and ends on the other,
    /// one lying wholly on the line, and one that would keep under three vertices. No vertex is
    /// moved. The ring may start elsewhere than it did (at a vertex off the line), which
    /// changes no point of it.
    /// - Complexity: O(n).
    static func withoutRunsOnAntimeridian(xs: ArraySlice<Double>, ys: ArraySlice<Double>) -> [(x: Double, y: Double)]? {
        let m = xs.count - 1
        guard m >= 3 else { return nil }
        @inline(__always) func x(_ k: Int) -> Double { xs[xs.startIndex + k % m] }
        @inline(__always) func y(_ k: Int) -> Double { ys[ys.startIndex + k % m] }
        @inline(__always) func onLine(_ k: Int) -> Bool { abs(x(k)) == 180 }
        guard let start = (0..<m).first(where: { !onLine($0) }) else { return nil }
        var out: [(x: Double, y: Double)] = []
        out.reserveCapacity(m + 1)
        var dropped = false
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
            guard x(last) == x(k) else { return nil }
            // A vertex on the other name is a step across the map and back at one latitude.
            for j in (k + 1)..<Swift.max(k + 1, last) where x(j) != x(k) {
                guard abs(y(j) - y(j - 1)) <= 1e-9 || abs(y(j) - y(j + 1)) <= 1e-9 else { return nil }
            }
            out.append((x(k), y(k)))
            if last > k && y(last) != y(k) { out.append((x(last), y(last))) }
            if last - k + 1 > (last > k && y(last) != y(k) ? 2 : 1) { dropped = true }
            k = last + 1
        }
        // A ring left with under three vertices was degenerate: validation says why.
        guard dropped, out.count >= 3 else { return nil }
        out.append(out[0])
        return out
    }
}
