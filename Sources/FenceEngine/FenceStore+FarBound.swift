import Foundation
import SpatialIndex

extension FenceStore {
    /// Tighter lower bounds than `lowerBound` for the far search, dearer, asked only of what
    /// comes up within `lowerBound`'s band of the nearest found (`nearestBoundary`): there, far
    /// from a dense set of fences, every fence would otherwise be measured (hundreds of
    /// kilometres deep at antipodal range).
    ///
    /// Two bounds on the ellipsoidal distance from the position to any point of a
    /// longitude/latitude box, the larger taken:
    /// - `auxiliary`: `b σ` on Bessel's auxiliary sphere (below); a few sines and cosines.
    /// - `reference`: the geodesic to the box's centre less `reach`, at least the surface
    ///   distance from the centre to any point of the box; one geodesic (about 0.5 µs), asked
    ///   only of a box small beside its distance.
    struct FarBound {
        let p: LonLat
        let lon: Double
        let beta: Double
        let sinBeta: Double
        let cosBeta: Double

        init(_ p: LonLat) {
            self.p = p
            lon = p.lon
            beta = Self.reducedLatitude(p.lat)
            sinBeta = sin(beta)
            cosBeta = cos(beta)
        }

        /// How far (metres) the coarse bound must be before these are asked: nearer, the
        /// near search's own screening does the work.
        static let from = 100_000.0

        /// The ellipsoid's semi-minor axis b = a (1 - f).
        static let b = Geodesic.wgs84A * (1 - Geodesic.wgs84F)

        /// Degrees by which a geodesic's longitude difference on the auxiliary sphere, ω12, may
        /// exceed its longitude difference λ12 (same sign): f sin α0 times an integral over
        /// σ12 of (2 - f) / (1 + (1 - f) sqrt(1 + k² sin² σ)) <= 1 (Karney 2013, eq. 8), so at
        /// most f σ12 <= f π (1.0017) (a shortest geodesic is at most 20,004 km, and at least
        /// b σ12, so σ12 <= 3.147): 0.6054 degrees, rounded up.
        static let longitudeExcess = 0.61

        /// β = atan((1 - f) tan φ), radians, for φ in degrees.
        @inline(__always)
        static func reducedLatitude(_ lat: Double) -> Double {
            let phi = lat * .pi / 180
            return atan2((1 - Geodesic.wgs84F) * sin(phi), cos(phi))
        }

        /// A lower bound in metres on the ellipsoidal distance to any point of `box`, on the
        /// auxiliary sphere: a geodesic of length s maps to a great-circle arc of angle σ12
        /// between the ends' reduced latitudes β at auxiliary longitudes ω, and
        /// s = b ∫ sqrt(1 + k² sin² σ) dσ >= b σ12 (Karney 2013, eq. 7). The arc is at least the
        /// great-circle angle between its ends, which grows with |ω12| up to 180 degrees;
        /// |ω12| lies between |λ12| and |λ12| + `longitudeExcess`, so the angle is at least the
        /// one at the longitude gap min(|λ12|, 360 - excess - |λ12|): taken at the box's least
        /// and greatest gaps, the box's nearest point found as `SphereOrigin.chord` finds it.
        /// Within about 0.35% of the distance where the coarse bound is within 0.67%.
        func auxiliary(_ box: Box) -> Double {
            let degree = Double.pi / 180
            let lo = Self.reducedLatitude(max(-90, box.minY))
            let hi = Self.reducedLatitude(min(90, box.maxY))
            guard lo <= hi else { return .infinity }
            func inLongitudes(_ l: Double) -> Bool { box.minX <= l && l <= box.maxX }
            let chord: Double
            if inLongitudes(lon) || inLongitudes(lon - 360) || inLongitudes(lon + 360) || box.maxX - box.minX >= 360 {
                let angle = max(0, lo - beta, beta - hi)
                chord = 2 * sin(min(angle, .pi) / 2)
            } else {
                func gap(_ l: Double) -> Double {
                    let d = abs(l - lon).truncatingRemainder(dividingBy: 360)
                    return d > 180 ? 360 - d : d
                }
                let opposite = lon + 180
                let spansOpposite =
                    inLongitudes(opposite) || inLongitudes(opposite - 360) || inLongitudes(opposite + 360)
                    || inLongitudes(opposite - 720)
                let (g1, g2) = (gap(box.minX), gap(box.maxX))
                let least = min(g1, g2)
                let most = spansOpposite ? 180 : max(g1, g2)
                let g = max(0, min(least, 360 - Self.longitudeExcess - most))
                chord = SphereOrigin.chordToSide(sinLat: sinBeta, cosLat: cosBeta, lo: lo, hi: hi, cosDl: cos(g * degree))
            }
            let angle = 2 * asin(min(1, chord / 2))
            return max(0, angle * Self.b * (1 - 1e-9) - 1)
        }

        /// At least the surface distance (metres) from the box's centre to any point of it:
        /// the way straight in longitude and latitude to its farthest corner, the largest
        /// radius of curvature (a²/b, 6,399,594 m) times its angular length with the widest
        /// parallel the box crosses (as `PolygonDistance.pathLength`).
        static func reach(_ box: Box) -> Double {
            PolygonDistance.pathLength(dLat: (box.maxY - box.minY) / 2, dLon: (box.maxX - box.minX) / 2, between: box.minY, box.maxY)
        }

        /// The geodesic to the box's centre less `reach`, less 1 mm for the geodesic's
        /// rounding: a lower bound on the distance to any point of the box.
        func reference(_ box: Box) -> Double {
            let d = Geodesic.distance(lon1: p.lon, lat1: p.lat, lon2: (box.minX + box.maxX) / 2, lat2: (box.minY + box.maxY) / 2)
            return d - Self.reach(box) - 0.001
        }

        /// Whether nothing in `box` (first bounded by `coarse`, `lowerBound`) can be nearer
        /// than `limit`, by `auxiliary`, then, for a box small beside its distance, by
        /// `reference`. False near (`from`) and while nothing is found.
        @inline(__always)
        func isBeyond(_ box: @autoclosure () -> Box, coarse: Double, limit: Double) -> Bool {
            guard coarse > Self.from && limit.isFinite else { return false }
            let box = box()
            if auxiliary(box) > limit { return true }
            return Self.reach(box) < 0.005 * coarse && reference(box) > limit
        }
    }

    /// The box of a polygon's vertices (every ring): its boundary, edges straight in longitude
    /// and latitude between them, lies inside. Nil for a circle.
    func vertexBox(slot: Int) -> Box? {
        let hot = slotHot[slot]
        let kind = HotWord.kind(hot)
        guard kind == FlatGeometry.Kind.polygon.rawValue || kind == FlatGeometry.Kind.indexedPolygon.rawValue else { return nil }
        return geometry.withUnsafeBufferPointer { g -> Box in
            let record = g.baseAddress! + HotWord.start(hot)
            let n = FlatGeometry.positionCount(of: record)
            let coords = record + 1 + Int(record[0])
            var box = Box.empty
            for i in 0..<n { box.extend(coords[2 * i], coords[2 * i + 1]) }
            return box
        }
    }
}
