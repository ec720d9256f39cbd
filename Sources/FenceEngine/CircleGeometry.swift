import Foundation
import SpatialIndex

/// Precomputed numbers for one circle fence, laid out flat in the store's geometry array.
///
/// The test first compares chord lengths on the unit sphere (a dot-product's worth of work):
/// inside the inner threshold or outside the outer one, the answer is certain because the
/// spherical distance differs from the ellipsoidal one by at most `Geodesic.sphericalRelativeBand`
/// (plus 1 m). Only points in that band pay for the exact ellipsoidal distance.
enum CircleGeometry {
    /// Doubles per circle in the geometry array:
    /// lon, lat, radius, cx, cy, cz, innerChord2, outerChord2.
    static let stride = 8
    static let meanRadius = 6_371_008.8

    /// The flat record for a circle. `radius` is positive and finite, `center` in WGS84 range.
    static func record(center: LonLat, radius: Double) -> [Double] {
        let (cx, cy, cz) = unitVector(lon: center.lon, lat: center.lat)
        let band = Geodesic.sphericalRelativeBand
        let inner = max(0, (radius - 1) / (meanRadius * (1 + band)))
        let outer = (radius + 1) / (meanRadius * (1 - band))
        return [center.lon, center.lat, radius, cx, cy, cz, chord2(angle: inner), outer >= .pi ? 5 : chord2(angle: outer)]
    }

    /// Squared chord of an arc of `angle` radians on the unit sphere.
    @inline(__always)
    static func chord2(angle: Double) -> Double {
        let s = 2 * sin(min(angle, .pi) / 2)
        return s * s
    }

    @inline(__always)
    static func unitVector(lon: Double, lat: Double) -> (Double, Double, Double) {
        let phi = lat * .pi / 180
        let lambda = lon * .pi / 180
        let c = cos(phi)
        return (c * cos(lambda), c * sin(lambda), sin(phi))
    }

    /// Whether the circle whose record starts at `r` covers the point (boundary included).
    /// `u` is the point's unit vector, `lon`/`lat` the point itself.
    /// - Complexity: O(1); one `Geodesic.distance` call only inside the uncertainty band.
    @inline(__always)
    static func covers(_ r: UnsafePointer<Double>, lon: Double, lat: Double, u: (Double, Double, Double)) -> Bool {
        let dx = u.0 - r[3]
        let dy = u.1 - r[4]
        let dz = u.2 - r[5]
        let c2 = dx * dx + dy * dy + dz * dz
        if c2 <= r[6] { return true }
        if c2 > r[7] { return false }
        return Geodesic.distance(lon1: r[0], lat1: r[1], lon2: lon, lat2: lat) <= r[2]
    }

    /// Index boxes for a circle: one, or two when it crosses the antimeridian; a circle holding
    /// a pole spans every longitude. Boxes are padded outward so they never cut off a covered point.
    static func boxes(center: LonLat, radius: Double) -> [Box] {
        let band = Geodesic.sphericalRelativeBand
        let angle = (radius + 1) / (meanRadius * (1 - band)) * 1.000001 + 1e-12
        let angleDeg = angle * 180 / .pi
        let minLat = center.lat - angleDeg
        let maxLat = center.lat + angleDeg
        if angle >= .pi || maxLat >= 90 || minLat <= -90 {
            return [Box(minX: -180, minY: max(-90, minLat), maxX: 180, maxY: min(90, maxLat))]
        }
        let sinAngle = sin(angle)
        let cosLat = cos(center.lat * .pi / 180)
        if sinAngle >= cosLat {
            return [Box(minX: -180, minY: minLat, maxX: 180, maxY: maxLat)]
        }
        let halfWidth = asin(sinAngle / cosLat) * 180 / .pi * 1.000001 + 1e-9
        if halfWidth >= 180 {
            return [Box(minX: -180, minY: minLat, maxX: 180, maxY: maxLat)]
        }
        let west = center.lon - halfWidth
        let east = center.lon + halfWidth
        if west < -180 {
            return [
                Box(minX: -180, minY: minLat, maxX: east, maxY: maxLat),
                Box(minX: west + 360, minY: minLat, maxX: 180, maxY: maxLat),
            ]
        }
        if east > 180 {
            return [
                Box(minX: west, minY: minLat, maxX: 180, maxY: maxLat),
                Box(minX: -180, minY: minLat, maxX: east - 360, maxY: maxLat),
            ]
        }
        return [Box(minX: west, minY: minLat, maxX: east, maxY: maxLat)]
    }
}
