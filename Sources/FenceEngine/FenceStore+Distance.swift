import Foundation
import SpatialIndex

extension FenceStore {
    static let metresPerDegreeLat = 111_132.954

    /// A box around `p` that holds every point within `metres` of it (padded; every longitude
    /// near a pole).
    static func box(around p: LonLat, metres: Double) -> Box {
        let dLat = metres / metresPerDegreeLat * 1.01 + 1e-9
        // At the latitude of the box's poleward edge, up to the pole itself (cos 0 there, the
        // box then as wide as the globe): capped below the pole, the box missed fences within
        // the margin at other longitudes of a fix within about 110 m of the pole.
        let cosLat = cos(min(90, abs(p.lat) + dLat) * .pi / 180)
        let dLon = dLat / max(cosLat, 1e-9)
        if dLon >= 180 || p.lat + dLat >= 90 || p.lat - dLat <= -90 {
            return Box(minX: -180, minY: max(-90, p.lat - dLat), maxX: 180, maxY: min(90, p.lat + dLat))
        }
        return Box(minX: p.lon - dLon, minY: p.lat - dLat, maxX: p.lon + dLon, maxY: p.lat + dLat)
    }

    /// Distance in metres from `p` to the boundary of the fence in `slot`.
    ///
    /// Circles: |geodesic distance to the centre - radius| on the WGS84 ellipsoid. Polygons:
    /// `PolygonDistance.boundary`: edges screened in a local projection at `p` with the
    /// ellipsoid's scales there (within about 0.1% up to 10 km below 80 degrees of latitude:
    /// the scale hysteresis margins need), and with `exact` the nearest ones measured on the
    /// ellipsoid (at any range and latitude; what `nearestBoundary` reports).
    /// - Complexity: O(v) for v vertices; for a large polygon (`EdgeTree`) about O(log v) plus
    ///   the edges near the nearest.
    /// - Parameter cutoff: with `exact`, a distance already found: a polygon that cannot come
    ///   nearer is not measured on the ellipsoid, and a value beyond `cutoff` is returned.
    ///   Without: the distance when it is below `cutoff`, else a value at or above it (a
    ///   large polygon's edge tree then opens no box beyond it).
    func boundaryDistance(slot: Int, _ p: LonLat, exact: Bool = false, cutoff: Double = .infinity) -> Double {
        let hot = slotHot[slot]
        return geometry.withUnsafeBufferPointer { g -> Double in
            let record = g.baseAddress! + HotWord.start(hot)
            if HotWord.kind(hot) == FlatGeometry.Kind.circle.rawValue {
                return abs(Geodesic.distance(lon1: record[0], lat1: record[1], lon2: p.lon, lat2: p.lat) - record[2])
            }
            let indexed = HotWord.kind(hot) == FlatGeometry.Kind.indexedPolygon.rawValue
            return PolygonDistance.boundary(record, p, exact: exact, cutoff: cutoff, tree: indexed ? EdgeTree.View(record: record) : nil)
        }
    }

    /// The fences within `margin` metres of `p` or covering it, classified for hysteresis.
    /// Fences that expire at or before `time` are skipped when `expiring`.
    func classify(
        _ p: LonLat, margin: Double, time: Double, expiring: Bool, scratch: inout ContainmentScratch,
        into out: inout [NearFence]
    ) {
        scratch.candidates.removeAll(keepingCapacity: true)
        tree.query(Self.box(around: p, metres: margin), into: &scratch.candidates)
        var unit: (Double, Double, Double)?
        var surface: PolygonDistance.SurfacePoint?
        var scales: (east: Double, north: Double)?
        var seen = Set<Int32>()
        for item in scratch.candidates {
            let slot = item >> 1
            if slotBoxCount[Int(slot)] > 1 && !seen.insert(slot).inserted { continue }
            if expiring && slotExpires[Int(slot)] <= time { continue }
            let covered = covers(slot: slot, p, unit: &unit, scratch: &scratch)
            let far: Bool
            let hot = slotHot[Int(slot)]
            let record = geometry.base + HotWord.start(hot)
            if HotWord.kind(hot) == FlatGeometry.Kind.circle.rawValue {
                if surface == nil { surface = PolygonDistance.SurfacePoint(p) }
                far = Self.circleBoundaryIsFar(
                    centre: LonLat(lon: record[0], lat: record[1]), radius: record[2], p, surface: surface!, margin: margin)
            } else {
                // Most positions of a small polygon are decided by the pure cells of its grid
                // around them (`SmallPolygonGrid.clearance`, a lower bound on the distance
                // below; a 1 µm slack covers the bound's rounding). The rest are measured, a
                // large polygon's edge tree opening only boxes nearer than the margin.
                //
                // Above 80 degrees of latitude the scales at `p` no longer hold across a margin
                // (near a pole a fence round the pole from `p` read 122 m where it is 95 m):
                // there the grid is not asked and the ellipsoid decides (`exact`).
                let polar = abs(p.lat) > 80
                let small = !polar && HotWord.kind(hot) == FlatGeometry.Kind.polygon.rawValue
                let enough = margin + 1e-6
                if small && scales == nil { scales = PolygonDistance.scales(lat: p.lat) }
                far = (small && SmallPolygonGrid.clearance(x: p.lon, y: p.lat, record: record, kx: scales!.east, ky: scales!.north, enough: enough) >= enough)
                    || boundaryDistance(slot: Int(slot), p, exact: polar, cutoff: margin) >= margin
            }
            let cls: NearFence.Class = covered ? (far ? .deepInside : .insideBand) : (far ? .farOutside : .outsideBand)
            out.append(NearFence(key: slotKey[Int(slot)], slot: slot, cls: cls))
        }
    }

    /// Whether `p` is `margin` metres or more from the boundary of a circle:
    /// |geodesic(centre, p) - radius| >= margin, as `boundaryDistance` measures it, but
    /// decided without the geodesic when two cheap bounds on it settle it: below, the chord
    /// through the Earth between the two points of the ellipsoid (`SurfacePoint`; no curve is
    /// shorter); above, the way straight in longitude and latitude the short way round
    /// (`PolygonDistance.pathLength`; the geodesic is the shortest way). Each within about 1%
    /// up to hundreds of km, so only a position within about 1% of the distance of `radius +-
    /// margin` is measured (a 1 mm slack covers the bounds' rounding: the answer is the
    /// geodesic's). A performance audit measured 340 ns a pair measuring every one (16 µs a
    /// fix under 50 nested circles with `--margin`).
    /// - Complexity: O(1): one square root and one cosine, and the centre's sine and cosines
    ///   for the chord; the geodesic only near the two circles.
    static func circleBoundaryIsFar(
        centre c: LonLat, radius r: Double, _ p: LonLat, surface: PolygonDistance.SurfacePoint, margin: Double
    ) -> Bool {
        let slack = 0.001
        let lower = surface.chord(to: PolygonDistance.SurfacePoint(c))
        if lower >= r + margin + slack { return true }
        var dLon = abs(p.lon - c.lon).truncatingRemainder(dividingBy: 360)
        if dLon > 180 { dLon = 360 - dLon }
        let upper = PolygonDistance.pathLength(dLat: p.lat - c.lat, dLon: dLon, between: p.lat, c.lat)
        if upper <= r - margin - slack { return true }
        if upper < r + margin - slack && lower > r - margin + slack { return false }
        return abs(Geodesic.distance(lon1: c.lon, lat1: c.lat, lon2: p.lon, lat2: p.lat) - r) >= margin
    }
}
