import Foundation
import SpatialIndex

/// The nearest fence boundary to a position (SPEC "Adaptive reporting").
public struct NearestBoundary: Sendable, Hashable {
    /// The fence whose boundary is nearest; nil when the store is empty.
    public var fence: FenceHandle?
    /// Metres to that boundary: negative when the position is inside that fence, +infinity
    /// when there is no fence.
    public var distance: Double

    /// Suggested seconds before the device's next report: the time it needs at `maxSpeed`
    /// (m/s) to reach the nearest boundary, within `minimum...maximum`. Far from every fence a
    /// device may report rarely; near a boundary, often (Baidu's adaptive sampling).
    public func reportDelay(maxSpeed: Double, minimum: Double = 1, maximum: Double = 3600) -> Double {
        guard maxSpeed > 0, distance.isFinite else { return maximum }
        return min(maximum, max(minimum, abs(distance) / maxSpeed))
    }
}

extension FenceStore {
    /// The nearest fence boundary, found by searching the R-tree outward (best-first by a
    /// lower bound on the distance to each box), not by a scan.
    ///
    /// The bound for a box is the larger of its latitude gap times 110,574 m per degree (the
    /// shortest metre of latitude, a true lower bound on the ellipsoid) and its longitude gap
    /// times 111,319 m x cos(the highest latitude involved) x 0.99. Distances to candidates are
    /// `boundaryDistance` (exact for circles, local projection for polygons).
    /// - Complexity: O(log n + k v) for the k fences whose bound is below the answer.
    public func nearestBoundary(to position: LonLat, coord: CoordinateSystem = .wgs84) -> NearestBoundary {
        var p = position
        if coord != .wgs84 {
            let c = CoordinateConversion.toWGS84(lon: p.lon, lat: p.lat, from: coord)
            p = LonLat(lon: c.lon, lat: c.lat)
        }
        guard p.isValidWGS84Range else { return NearestBoundary(fence: nil, distance: .nan) }
        var best = NearestBoundary(fence: nil, distance: .infinity)
        var seen = Set<Int32>()
        var scratch = ContainmentScratch()
        tree.nearest(lowerBound: { box in Self.lowerBound(p, box) }) { item, bound in
            if bound > abs(best.distance) { return false }
            let slot = item >> 1
            guard seen.insert(slot).inserted else { return true }
            let d = boundaryDistance(slot: Int(slot), p)
            if d < abs(best.distance) {
                var unit: (Double, Double, Double)?
                let inside = covers(slot: slot, p, unit: &unit, scratch: &scratch)
                best = NearestBoundary(fence: FenceHandle(rawValue: slot), distance: inside ? -d : d)
            }
            return true
        }
        return best
    }

    /// A lower bound in metres on the distance from `p` to any point of `box`.
    static func lowerBound(_ p: LonLat, _ box: Box) -> Double {
        let dLat = max(0, box.minY - p.lat, p.lat - box.maxY)
        var dLon = max(0, box.minX - p.lon, p.lon - box.maxX)
        // Around the antimeridian the short way may be shorter.
        if box.minX > p.lon { dLon = min(dLon, p.lon + 360 - box.maxX) }
        if box.maxX < p.lon { dLon = min(dLon, box.minX + 360 - p.lon) }
        dLon = max(0, dLon)
        let maxLat = min(90, max(abs(p.lat), abs(box.minY), abs(box.maxY)))
        let latPart = dLat * 110_574
        let lonPart = dLon * 111_319 * cos(maxLat * .pi / 180) * 0.99
        return max(latPart, lonPart, 0)
    }
}
