import Foundation
import SpatialIndex

extension FenceStore {
    static let metresPerDegreeLat = 111_132.954

    /// A box around `p` that holds every point within `metres` of it (padded; every longitude
    /// near a pole).
    static func box(around p: LonLat, metres: Double) -> Box {
        let dLat = metres / metresPerDegreeLat * 1.01 + 1e-9
        let cosLat = cos(min(89.999, abs(p.lat) + dLat) * .pi / 180)
        let dLon = dLat / max(cosLat, 1e-9)
        if dLon >= 180 || p.lat + dLat >= 90 || p.lat - dLat <= -90 {
            return Box(minX: -180, minY: max(-90, p.lat - dLat), maxX: 180, maxY: min(90, p.lat + dLat))
        }
        return Box(minX: p.lon - dLon, minY: p.lat - dLat, maxX: p.lon + dLon, maxY: p.lat + dLat)
    }

    /// Distance in metres from `p` to the boundary of the fence in `slot`.
    ///
    /// Circles: |geodesic distance to the centre - radius| on the WGS84 ellipsoid. Polygons: the
    /// nearest edge in a local equirectangular projection at `p` (metres east = degrees x
    /// cos(lat) x 111,320, north = degrees x 111,133); within 0.5% for distances up to tens of
    /// kilometres, the scale hysteresis margins and report delays need.
    /// - Complexity: O(v) for v vertices.
    func boundaryDistance(slot: Int, _ p: LonLat) -> Double {
        let hot = slotHot[slot]
        return geometry.withUnsafeBufferPointer { g -> Double in
            let record = g.baseAddress! + HotWord.start(hot)
            if HotWord.kind(hot) == FlatGeometry.Kind.circle.rawValue {
                return abs(Geodesic.distance(lon1: record[0], lat1: record[1], lon2: p.lon, lat2: p.lat) - record[2])
            }
            let kx = cos(p.lat * .pi / 180) * 111_319.49
            let ky = Self.metresPerDegreeLat
            let ringCount = Int(record[0])
            var q = record + 1 + ringCount
            var best = Double.infinity
            for r in 0..<ringCount {
                let n = Int(abs(record[1 + r]))
                for i in 0..<max(0, n - 1) {
                    var ax = (q[2 * i] - p.lon) * kx
                    var bx = (q[2 * i + 2] - p.lon) * kx
                    // An edge seen across the antimeridian from p is measured the short way.
                    if ax > 180 * kx { ax -= 360 * kx } else if ax < -180 * kx { ax += 360 * kx }
                    if bx > 180 * kx { bx -= 360 * kx } else if bx < -180 * kx { bx += 360 * kx }
                    let ay = (q[2 * i + 1] - p.lat) * ky
                    let by = (q[2 * i + 3] - p.lat) * ky
                    let dx = bx - ax
                    let dy = by - ay
                    let len2 = dx * dx + dy * dy
                    var t = len2 > 0 ? -(ax * dx + ay * dy) / len2 : 0
                    t = min(1, max(0, t))
                    let cx = ax + t * dx
                    let cy = ay + t * dy
                    best = min(best, cx * cx + cy * cy)
                }
                q += 2 * n
            }
            return best.squareRoot()
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
        var seen = Set<Int32>()
        for item in scratch.candidates {
            let slot = item >> 1
            if slotBoxCount[Int(slot)] > 1 && !seen.insert(slot).inserted { continue }
            if expiring && slotExpires[Int(slot)] <= time { continue }
            let covered = covers(slot: slot, p, unit: &unit, scratch: &scratch)
            let far = boundaryDistance(slot: Int(slot), p) >= margin
            let cls: NearFence.Class = covered ? (far ? .deepInside : .insideBand) : (far ? .farOutside : .outsideBand)
            out.append(NearFence(key: slotKey[Int(slot)], slot: slot, cls: cls))
        }
    }
}
