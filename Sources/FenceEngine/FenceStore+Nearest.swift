import Foundation
import SpatialIndex

/// The nearest fence boundary to a position (SPEC "Adaptive reporting").
public struct NearestBoundary: Sendable, Hashable {
    /// The fence whose boundary is nearest; nil when the store is empty.
    public var fence: FenceHandle?
    /// Metres to that boundary: negative when the position is inside that fence, +infinity
    /// when there is no fence; NaN (and no fence) for a position that is not a valid WGS84
    /// longitude/latitude (NaN, out of range), whose `reportDelay` is the maximum: check
    /// positions first (`Position.problem`).
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
    /// The bound for a box is its great-circle angle from the position times the least
    /// meridional radius of curvature on the way, less 1 m (`lowerBound`): a true lower bound
    /// on the ellipsoid, also over a pole. Distances to candidates are `boundaryDistance(exact: true)`: geodesic
    /// for circles, the nearest edges measured on the ellipsoid for polygons.
    /// With a `time`, fences that have expired by then (`hasExpired`) are not there.
    /// - Complexity: O(log n + k v) for the k fences whose bound is below the answer.
    public func nearestBoundary(to position: LonLat, coord: CoordinateSystem = .wgs84, at time: Double? = nil) -> NearestBoundary {
        nearestBoundary(to: position, coord: coord, at: time, farBounds: true)
    }

    /// `nearestBoundary`, without `FarBound` when `farBounds` is false (the tests' reference).
    func nearestBoundary(to position: LonLat, coord: CoordinateSystem = .wgs84, at time: Double? = nil, farBounds: Bool) -> NearestBoundary {
        let p = CoordinateConversion.toWGS84(position, from: coord)
        guard p.isValidWGS84Range else { return NearestBoundary(fence: nil, distance: .nan) }
        var best = NearestBoundary(fence: nil, distance: .infinity)
        var seen = Set<Int32>()
        var scratch = ContainmentScratch()
        let origin = SphereOrigin(p)
        let far = FarBound(p)
        // Far away (`FarBound`), a node or polygon that comes up within the coarse bound's band
        // is bounded again before it is opened or measured, and passed by if beyond the
        // nearest found. The order of the rest is unchanged, and what is passed by is further
        // than the nearest, so the answer is the same (ties included) as without.
        tree.nearest(
            lowerBound: { box in Self.lowerBound(origin, box) },
            open: { bound, box in !(farBounds && far.isBeyond(box(), coarse: bound, limit: abs(best.distance))) }
        ) { item, bound in
            if bound > abs(best.distance) { return false }
            let slot = item >> 1
            guard seen.insert(slot).inserted else { return true }
            if let time, hasExpired(FenceHandle(rawValue: slot), at: time) { return true }
            if farBounds, bound > FarBound.from, abs(best.distance).isFinite, let box = vertexBox(slot: Int(slot)),
                far.isBeyond(box, coarse: bound, limit: abs(best.distance))
            {
                return true
            }
            let d = boundaryDistance(slot: Int(slot), p, exact: true, cutoff: abs(best.distance))
            if d < abs(best.distance) {
                var unit: (Double, Double, Double)?
                let inside = covers(slot: slot, p, unit: &unit, scratch: &scratch)
                best = NearestBoundary(fence: FenceHandle(rawValue: slot), distance: inside ? -d : d)
            }
            return true
        }
        return best
    }

    /// `nearestBoundary` for every position of a batch, in input order, on `threads` workers.
    ///
    /// Each position is answered on its own (no state passes between positions), so the
    /// result is the same for every thread count and batch split.
    /// - Complexity: that of `nearestBoundary` per position, spread over the workers.
    /// With `times` (one per position), each position sees the fences not expired at its time.
    /// - Precondition: `times`, when given, has one entry per position (checked: a trap).
    public func nearestBoundaries(
        _ positions: UnsafeBufferPointer<LonLat>, coord: CoordinateSystem = .wgs84, times: [Double]? = nil,
        threads: Int = FenceStore.defaultThreads
    ) -> [NearestBoundary] {
        precondition(times == nil || times!.count == positions.count, "one time per position")
        let m = positions.count
        return [NearestBoundary](unsafeUninitializedCapacity: m) { buffer, n in
            nonisolated(unsafe) let out = buffer
            // Small chunks: a position far from every fence can cost a thousand times one
            // beside its nearest, and a worker takes the next chunk when it is done.
            Parallel.forEachChunk(count: m, chunkSize: 256, threads: threads, makeState: { () }) { _, _, range in
                for k in range { (out.baseAddress! + k).initialize(to: nearestBoundary(to: positions[k], coord: coord, at: times?[k])) }
            }
            n = m
        }
    }

    /// A lower bound in metres on the ellipsoidal distance from `p` to any point of `box`:
    /// the angle to the box's nearest point on the unit sphere (latitudes and longitudes taken
    /// as they are) times the least meridional radius of curvature `M` the way there can pass,
    /// less 1 m.
    ///
    /// Why it holds: the ellipsoid's length element, `sqrt(M² dφ² + N² cos²φ dλ²)`, is at
    /// least `M(φ)` times the unit sphere's (`N >= M`), so a geodesic is at least the least `M`
    /// along it times the great-circle angle between its ends. `M` grows with |latitude|,
    /// from 6,335,439 m on the equator (the sphere's 0.56% band, `Geodesic.sphericalRelativeBand`)
    /// to 6,399,594 m at a pole. A geodesic's latitude has no minimum between its ends short of
    /// its southern vertex, across the equator and back: half a circumference away, further
    /// than any shortest way between two points of one hemisphere. So when `p` and the box lie
    /// in one hemisphere the way stays at least as far from the equator as the nearer of the
    /// two; otherwise the equator's `M` is used, and also (a margin the argument does not
    /// need) for a box 98% of a quarter of the globe away or more. Tighter than the mean sphere's band by up to 1% of the distance
    /// (the far search measures every edge within the band of the nearest).
    static func lowerBound(_ p: LonLat, _ box: Box) -> Double {
        lowerBound(SphereOrigin(p), box)
    }

    static func lowerBound(_ origin: SphereOrigin, _ box: Box) -> Double {
        let chord = origin.chord(to: box)
        guard chord.isFinite else { return .infinity }
        let angle = 2 * asin(min(1, chord / 2))
        var phi = 0.0
        if angle < 0.98 * .pi / 2 {
            let degree = Double.pi / 180
            if origin.lat >= 0 && box.minY >= 0 {
                phi = min(origin.lat, box.minY * degree)
            } else if origin.lat <= 0 && box.maxY <= 0 {
                phi = min(-origin.lat, -box.maxY * degree)
            }
        }
        return max(0, angle * meridionalRadius(phi) * (1 - 1e-9) - 1)
    }

    /// The ellipsoid's meridional radius of curvature at latitude `phi` (radians):
    /// `a (1 - e²) / (1 - e² sin²φ)^(3/2)`.
    @inline(__always)
    static func meridionalRadius(_ phi: Double) -> Double {
        let e2 = Geodesic.wgs84F * (2 - Geodesic.wgs84F)
        let s = sin(phi)
        let w2 = 1 - e2 * s * s
        return Geodesic.wgs84A * (1 - e2) / (w2 * w2.squareRoot())
    }

    /// A position made ready for `chord(to:)`: its sine and cosine of latitude, once per query.
    struct SphereOrigin {
        let lon: Double
        let lat: Double
        let sinLat: Double
        let cosLat: Double

        init(_ p: LonLat) {
            lon = p.lon
            lat = p.lat * .pi / 180
            sinLat = sin(lat)
            cosLat = cos(lat)
        }

        /// The chord (unit sphere) from here to the nearest point of the longitude / latitude
        /// box; 0 inside it.
        ///
        /// Within the box's longitudes the nearest point is on this meridian. Otherwise it is
        /// on the box's meridian side with the smaller longitude gap `dl` (a parallel's nearest
        /// point is at this longitude, so along the parallel sides the distance only grows
        /// away from the corners; the two meridian sides span the same latitudes, and cos of
        /// the angle, sin(lat) sin(plat) + cos(lat) cos(plat) cos(dl), falls as `dl` grows).
        /// On that side it is a cosine of lat, largest at sin(lat) = sin(plat) / C with
        /// C = sqrt(sin²(plat) + cos²(plat) cos²(dl)) when cos(dl) >= 0: that point if the side
        /// reaches it, else the better end.
        /// - Complexity: O(1); five trigonometric calls off this meridian, none on it.
        func chord(to box: Box) -> Double {
            let degree = Double.pi / 180
            let lo = max(-90, box.minY) * degree
            let hi = min(90, box.maxY) * degree
            guard lo <= hi else { return .infinity }
            func inLongitudes(_ l: Double) -> Bool { box.minX <= l && l <= box.maxX }
            if inLongitudes(lon) || inLongitudes(lon - 360) || inLongitudes(lon + 360) || box.maxX - box.minX >= 360 {
                let angle = max(0, lo - lat, lat - hi)
                return 2 * sin(min(angle, .pi) / 2)
            }
            // Longitude gaps to the two sides, each the short way round, in [0, 180].
            func gap(_ l: Double) -> Double {
                let d = abs(l - lon).truncatingRemainder(dividingBy: 360)
                return d > 180 ? 360 - d : d
            }
            let cosDl = cos(min(gap(box.minX), gap(box.maxX)) * degree)
            return Self.chordToSide(sinLat: sinLat, cosLat: cosLat, lo: lo, hi: hi, cosDl: cosDl)
        }

        /// The chord (unit sphere) from latitude asin(`sinLat`) to the nearest point of a
        /// meridian side `lo...hi` (radians) at a longitude gap whose cosine is `cosDl`: the
        /// side's point at sin(lat) = sinLat / C if it reaches it, else the better end (`chord`).
        @inline(__always)
        static func chordToSide(sinLat: Double, cosLat: Double, lo: Double, hi: Double, cosDl: Double) -> Double {
            let sinLo = sin(lo)
            let sinHi = sin(hi)
            var best = max(sinLo * sinLat + cos(lo) * cosLat * cosDl, sinHi * sinLat + cos(hi) * cosLat * cosDl)
            if cosDl >= 0 {
                let c = (sinLat * sinLat + cosLat * cosLat * cosDl * cosDl).squareRoot()
                if c > 0 && sinLo * c <= sinLat && sinLat <= sinHi * c { best = c }
            }
            return (max(0, 2 - 2 * min(1, best))).squareRoot()
        }
    }
}
