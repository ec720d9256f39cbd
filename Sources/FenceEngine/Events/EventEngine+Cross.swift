import Foundation
import SpatialIndex

extension EventEngine {
    /// `cross` events for the straight segment from the previous fix to this one, for every
    /// fence the device was outside of at both fixes whose area the segment passes through.
    ///
    /// Candidates come from the R-tree with the segment's box (two boxes when the segment
    /// crosses the antimeridian, taken the short way). A candidate none of whose index boxes
    /// the segment comes within 1e-9 degrees of is dropped at once (`segment(_:_:mayMeet:)`):
    /// a long diagonal segment's box holds hundreds of fences it never passes. Then, cheapest
    /// first: the fence asks for `cross` and has not expired, the device is in no visit of it
    /// (binary search of the sorted pair lists), neither fix is covered, and the segment meets
    /// the fence. Polygons: GEOS prepared `intersects` with the segment (prepared once per
    /// fence per worker). Circles: the closest point of the segment to the centre is found on
    /// the sphere (golden-section search), then decided by the ellipsoidal distance; within a
    /// few metres of the radius, the ellipsoidal distance's own closest point decides.
    /// - Complexity: O(log n + k) for the k index boxes the segment's box meets, plus the
    ///   exact tests of the fences whose boxes the segment itself passes through.
    func crossEvents(
        device d: String, from a: LonLat, to b: LonLat, time t: Double, before: [PairState], after: [PairState],
        near: [NearFence], scratch: inout ApplyScratch, events: inout [FenceEvent]
    ) {
        let pieces = Self.segmentPieces(a, b)
        scratch.segment.removeAll(keepingCapacity: true)
        for (p, q) in pieces {
            tree.query(
                Box(minX: min(p.lon, q.lon), minY: min(p.lat, q.lat), maxX: max(p.lon, q.lon), maxY: max(p.lat, q.lat)),
                into: &scratch.segment)
        }
        guard !scratch.segment.isEmpty else { return }
        // Index ids are slot * 2 + box: sorted, a slot's boxes are neighbours.
        scratch.segment.sort()
        var unit: (Double, Double, Double)?
        var unitA: (Double, Double, Double)?
        var last: Int32 = -1
        for id in scratch.segment {
            let slot = id >> 1
            if slot == last { continue }
            last = slot
            let s = Int(slot)
            guard actions(slot: s).contains(.cross) else { continue }
            if store.expiring > 0 && store.slotExpires[s] <= t { continue }
            guard pieces.contains(where: { p, q in segment(p, q, mayMeetBoxesOf: slot) }) else { continue }
            // Visits, not undetermined pairs (a fix within the margin outside may start a cross).
            let key = store.slotKey[s]
            if Self.visits(before, key) || Self.visits(after, key) || Self.covers(near, key) { continue }
            // Both fixes outside: not covered now and not covered at the previous fix.
            if store.covers(slot: slot, b, unit: &unit, scratch: &scratch.containment) { continue }
            if store.covers(slot: slot, a, unit: &unitA, scratch: &scratch.containment) { continue }
            var crosses = false
            for (p, q) in pieces where segment(p, q, intersects: slot, scratch: &scratch) {
                crosses = true
                break
            }
            if crosses { emit(.cross, device: d, slot: s, time: t, lon: b.lon, lat: b.lat, into: &events) }
        }
    }

    /// Whether `pairs` (ascending by fence key) holds a visit of the fence `key`: a pair that
    /// is not undetermined. O(log p).
    static func visits(_ pairs: [PairState], _ key: Int32) -> Bool {
        any(of: pairs, key: key, keyOf: \.fence) { !$0.isUndetermined }
    }

    /// Whether `near` (ascending by key) has the fix inside the fence `key` (either band). O(log k).
    static func covers(_ near: [NearFence], _ key: Int32) -> Bool {
        any(of: near, key: key, keyOf: \.key) { $0.cls.rawValue >= NearFence.Class.insideBand.rawValue }
    }

    /// Whether an item of `items` (ascending by `keyOf`) with key `key` passes `test`: a binary
    /// search for the first, then its run of equal keys.
    @inline(__always)
    static func any<T>(of items: [T], key: Int32, keyOf: (T) -> Int32, _ test: (T) -> Bool) -> Bool {
        var lo = 0
        var hi = items.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if keyOf(items[mid]) < key { lo = mid + 1 } else { hi = mid }
        }
        while lo < items.count && keyOf(items[lo]) == key {
            if test(items[lo]) { return true }
            lo += 1
        }
        return false
    }

    /// Whether the piece p -> q (not crossing the antimeridian) may meet the fence in `slot`:
    /// false only when it passes clear of every index box of the fence. A fence lies within its
    /// boxes (a circle's are padded past its ellipsoidal extent), so a segment that meets
    /// the fence, or a circle's closest point found on it, is in one of them.
    func segment(_ p: LonLat, _ q: LonLat, mayMeetBoxesOf slot: Int32) -> Bool {
        // A box not in the index (yet) is not known: keep the fence.
        let clear = store.forEachIndexBox(ofSlot: slot) { !Self.segment(p, q, mayMeet: $0) } ?? false
        return !clear
    }

    /// Whether the straight segment p -> q in lon/lat may meet `box`: false only when it
    /// certainly passes clear of the box grown by 1e-9 degrees (about 0.1 mm) on every side.
    ///
    /// Separating axes: the segment misses the box exactly when their boxes are apart or all
    /// four corners lie strictly on one side of the segment's line. The growth covers the
    /// rounding of the side tests (under 1e-12 of |dx| + |dy| here, against a margin of
    /// 1e-9 of it: a segment that touches the box has a grown corner at least that far on
    /// each side) and of a circle's closest point computed on the segment. A segment shorter
    /// than 1e-100 degrees is kept (its products would underflow).
    @inline(__always)
    static func segment(_ p: LonLat, _ q: LonLat, mayMeet box: Box) -> Bool {
        let grow = 1e-9
        let minX = box.minX - grow
        let maxX = box.maxX + grow
        let minY = box.minY - grow
        let maxY = box.maxY + grow
        if max(p.lon, q.lon) < minX || min(p.lon, q.lon) > maxX || max(p.lat, q.lat) < minY || min(p.lat, q.lat) > maxY {
            return false
        }
        let dx = q.lon - p.lon
        let dy = q.lat - p.lat
        if abs(dx) + abs(dy) < 1e-100 { return true }
        let x0 = minX - p.lon
        let x1 = maxX - p.lon
        let y0 = minY - p.lat
        let y1 = maxY - p.lat
        let s00 = dx * y0 - dy * x0
        let s01 = dx * y1 - dy * x0
        let s10 = dx * y0 - dy * x1
        let s11 = dx * y1 - dy * x1
        if s00 > 0 && s01 > 0 && s10 > 0 && s11 > 0 { return false }
        if s00 < 0 && s01 < 0 && s10 < 0 && s11 < 0 { return false }
        return true
    }

    var tree: RTree { store.tree }

    /// The segment a -> b as one or two pieces that do not cross the antimeridian: a segment
    /// whose longitudes differ by more than 180 degrees goes the short way, across it.
    static func segmentPieces(_ a: LonLat, _ b: LonLat) -> [(LonLat, LonLat)] {
        let dLon = b.lon - a.lon
        guard abs(dLon) > 180 else { return [(a, b)] }
        // Unwrap b next to a, find where the path meets +-180, split there.
        let bx = dLon > 0 ? b.lon - 360 : b.lon + 360
        let edge: Double = bx < a.lon ? -180 : 180
        let f = (edge - a.lon) / (bx - a.lon)
        let lat = a.lat + f * (b.lat - a.lat)
        return [(a, LonLat(lon: edge, lat: lat)), (LonLat(lon: -edge, lat: lat), b)]
    }

    /// Whether the piece p -> q (not crossing the antimeridian), one of whose ends the fence
    /// in `slot` does not cover, meets the fence. Circles: the closest point of the piece to
    /// the centre, found on the sphere (golden-section search), decided by the ellipsoidal
    /// distance. Small polygons: their edges when certain (`segment(_:_:crossesEdgesOf:)`),
    /// else, and for large ones, GEOS (`segmentByGEOS`).
    func segment(_ p: LonLat, _ q: LonLat, intersects slot: Int32, scratch: inout ApplyScratch) -> Bool {
        let hot = store.slotHot[Int(slot)]
        if HotWord.kind(hot) == FlatGeometry.Kind.circle.rawValue {
            let r = store.geometry[HotWord.start(hot)..<(HotWord.start(hot) + CircleGeometry.stride)].map { $0 }
            let center = LonLat(lon: r[0], lat: r[1])
            let c = CircleGeometry.unitVector(lon: center.lon, lat: center.lat)
            func chord2(_ t: Double) -> Double {
                let u = CircleGeometry.unitVector(lon: p.lon + t * (q.lon - p.lon), lat: p.lat + t * (q.lat - p.lat))
                return (u.0 - c.0) * (u.0 - c.0) + (u.1 - c.1) * (u.1 - c.1) + (u.2 - c.2) * (u.2 - c.2)
            }
            var lo = 0.0
            var hi = 1.0
            let g = (5.0.squareRoot() - 1) / 2
            for _ in 0..<60 {
                let m1 = hi - g * (hi - lo)
                let m2 = lo + g * (hi - lo)
                if chord2(m1) < chord2(m2) { hi = m2 } else { lo = m1 }
            }
            func distance(_ t: Double) -> Double {
                Geodesic.distance(lon1: center.lon, lat1: center.lat, lon2: p.lon + t * (q.lon - p.lon), lat2: p.lat + t * (q.lat - p.lat))
            }
            let nearest = distance((lo + hi) / 2)
            if nearest <= r[2] { return true }
            // The sphere's closest point is not quite the ellipsoid's: its distance is longer by
            // up to about r · 5e-6 (an oracle audit: a segment 2.4 m inside a 500 km circle,
            // 1.5 cm inside a 1 km one, got no cross). Within a band twenty times that, the
            // ellipsoidal distance itself is searched (about 80 geodesics, for a rare case).
            guard nearest <= r[2] * (1 + 1e-4) + 0.01 else { return false }
            lo = 0
            hi = 1
            var m1 = hi - g * (hi - lo)
            var m2 = lo + g * (hi - lo)
            var d1 = distance(m1)
            var d2 = distance(m2)
            for _ in 0..<80 {
                if d1 < d2 {
                    (hi, m2, d2) = (m2, m1, d1)
                    m1 = hi - g * (hi - lo)
                    d1 = distance(m1)
                } else {
                    (lo, m1, d1) = (m1, m2, d2)
                    m2 = lo + g * (hi - lo)
                    d2 = distance(m2)
                }
            }
            return min(d1, d2, distance(0), distance(1)) <= r[2]
        }
        if HotWord.kind(hot) == FlatGeometry.Kind.polygon.rawValue,
            let certain = Self.segment(p, q, crossesEdgesOf: store.geometry.base + HotWord.start(hot))
        {
            return certain
        }
        return segmentByGEOS(p, q, intersects: slot, scratch: &scratch)
    }

    /// GEOS prepared `intersects` of the segment p -> q with the polygon fence in `slot`
    /// (prepared once per worker, `ContainmentScratch.preparedGeometry`); false when GEOS fails.
    func segmentByGEOS(_ p: LonLat, _ q: LonLat, intersects slot: Int32, scratch: inout ApplyScratch) -> Bool {
        guard let prepared = scratch.containment.preparedGeometry(slot: slot, in: store),
            let line = scratch.containment.context().makeSegment(p, q)
        else { return false }
        return prepared.intersects(line) ?? false
    }

    /// Whether the segment p -> q, one of whose ends the polygon does not cover, meets the
    /// small polygon (`FlatGeometry.Kind.polygon`, at most 64 positions) whose record starts at
    /// `record`; nil when floating point cannot tell.
    ///
    /// With an end outside, the segment meets the polygon exactly when it meets a ring's edge.
    /// Each edge is decided by the four orientations of its ends against the segment and the
    /// segment's ends against it, each taken only when certain (beyond Shewchuk's error bound
    /// for the determinant, `ccwerrboundA` about 3.3e-16 of its terms, here 1e-15): a proper
    /// crossing is a meeting, both ends of one strictly on one side of the other is a miss.
    /// An edge that touches, runs along or passes within rounding of the segment leaves the
    /// answer to GEOS, so what is returned is what GEOS's exact predicates would say.
    /// - Complexity: O(v) for v positions, no allocation.
    static func segment(_ p: LonLat, _ q: LonLat, crossesEdgesOf record: UnsafePointer<Double>) -> Bool? {
        /// The sign of the orientation of c against a -> b, or 0 when not certain.
        @inline(__always)
        func orientation(_ ax: Double, _ ay: Double, _ bx: Double, _ by: Double, _ cx: Double, _ cy: Double) -> Int {
            let left = (bx - ax) * (cy - ay)
            let right = (by - ay) * (cx - ax)
            let det = left - right
            let sum = abs(left) + abs(right)
            // Below 1e-280 a product may have lost bits to underflow: not certain.
            guard sum > 1e-280, abs(det) > 1e-15 * sum else { return 0 }
            return det > 0 ? 1 : -1
        }
        let minX = min(p.lon, q.lon)
        let maxX = max(p.lon, q.lon)
        let minY = min(p.lat, q.lat)
        let maxY = max(p.lat, q.lat)
        let rings = Int(record[0])
        var at = 1 + rings
        var uncertain = false
        for r in 0..<rings {
            let n = FlatGeometry.ringPositions(r, of: record).count
            for i in 0..<(n - 1) {
                let cx = record[at + 2 * i]
                let cy = record[at + 2 * i + 1]
                let dx = record[at + 2 * i + 2]
                let dy = record[at + 2 * i + 3]
                // Boxes apart (exact comparisons): the edge misses.
                if max(cx, dx) < minX || min(cx, dx) > maxX || max(cy, dy) < minY || min(cy, dy) > maxY { continue }
                let o1 = orientation(p.lon, p.lat, q.lon, q.lat, cx, cy)
                let o2 = orientation(p.lon, p.lat, q.lon, q.lat, dx, dy)
                if o1 != 0 && o1 == o2 { continue }
                let o3 = orientation(cx, cy, dx, dy, p.lon, p.lat)
                let o4 = orientation(cx, cy, dx, dy, q.lon, q.lat)
                if o3 != 0 && o3 == o4 { continue }
                if o1 != 0 && o2 != 0 && o3 != 0 && o4 != 0 { return true }
                uncertain = true
            }
            at += 2 * n
        }
        return uncertain ? nil : false
    }
}

