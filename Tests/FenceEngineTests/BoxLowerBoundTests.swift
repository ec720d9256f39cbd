import SpatialIndex
import XCTest

@testable import FenceEngine

/// `FenceStore.lowerBound`, the bound the nearest-fence and far-edge searches prune with: never
/// above the true geodesic distance to the box (else a search would skip the nearest), and no
/// looser than the mean sphere's band it replaced.
final class BoxLowerBoundTests: XCTestCase {
    /// The least geodesic distance from `p` to the box: 0 inside it, else the least over its
    /// four sides, each sampled at 240 points and refined by a golden-section search beside
    /// the best sample (the distance along a side has at most a few minima).
    static func geodesicToBox(_ p: LonLat, _ box: Box) -> Double {
        let lonInside = (box.minX...box.maxX).contains(p.lon) || (box.minX...box.maxX).contains(p.lon + 360)
            || (box.minX...box.maxX).contains(p.lon - 360)
        if lonInside && (box.minY...box.maxY).contains(p.lat) { return 0 }
        let sides: [(LonLat, LonLat)] = [
            (LonLat(lon: box.minX, lat: box.minY), LonLat(lon: box.maxX, lat: box.minY)),
            (LonLat(lon: box.minX, lat: box.maxY), LonLat(lon: box.maxX, lat: box.maxY)),
            (LonLat(lon: box.minX, lat: box.minY), LonLat(lon: box.minX, lat: box.maxY)),
            (LonLat(lon: box.maxX, lat: box.minY), LonLat(lon: box.maxX, lat: box.maxY)),
        ]
        var best = Double.infinity
        for (a, b) in sides {
            func d(_ t: Double) -> Double {
                Geodesic.distance(lon1: p.lon, lat1: p.lat, lon2: a.lon + t * (b.lon - a.lon), lat2: a.lat + t * (b.lat - a.lat))
            }
            best = min(best, minimumOverUnitInterval(samples: 240, rounds: 80, d))
        }
        return best
    }

    func testTheBoundNeverPassesTheGeodesicAndBeatsTheBand() throws {
        var rng = TestRandom(mixing: 3131)
        var tighter = 0
        var checked = 0
        for k in 0..<1_500 {
            let p = LonLat(lon: rng.uniform(-180, 180), lat: k % 7 == 0 ? rng.uniform(-90, 90) : rng.uniform(-80, 80))
            // Boxes from metres to a third of the globe, near p and far, across the equator
            // and the antimeridian, reaching the poles.
            let size = [1e-4, 0.01, 1, 10, 60][k % 5]
            let w = rng.uniform(0, size)
            let h = rng.uniform(0, size)
            var cx = k % 3 == 0 ? p.lon + rng.uniform(-3 * size, 3 * size) : rng.uniform(-180, 180)
            var cy = k % 3 == 0 ? p.lat + rng.uniform(-3 * size, 3 * size) : rng.uniform(-90, 90)
            if k % 11 == 0 { cy = rng.uniform(-h, h) }
            if k % 13 == 0 { cx = 180 }
            let box = Box(
                minX: max(-180, cx - w / 2), minY: max(-90, min(90, cy - h / 2)), maxX: min(180, cx + w / 2),
                maxY: min(90, max(-90, cy + h / 2)))
            guard box.minY <= box.maxY, box.minX <= box.maxX else { continue }
            let truth = Self.geodesicToBox(p, box)
            let bound = FenceStore.lowerBound(p, box)
            XCTAssertLessThanOrEqual(bound, truth, "\(p) \(box)")
            let band = FenceStore.SphereOrigin(p).chord(to: box) * 6_371_008.8 * (1 - Geodesic.sphericalRelativeBand) - 1
            XCTAssertGreaterThanOrEqual(bound, band - 1e-6, "\(p) \(box)")
            if bound > band + 1e-3 * truth { tighter += 1 }
            checked += 1
        }
        XCTAssertGreaterThan(checked, 1_400)
        // Most pairs lie in one hemisphere, under a quarter of the globe apart.
        XCTAssertGreaterThan(tighter, checked / 3)
    }

    /// `PolygonDistance.endsBound`, which spares the far search most measurements, and
    /// `chordEndsBound` (its chords instead of geodesics, which spares the near search its
    /// geodesics) are never above the distance to the edge's nearest point (a dense scan along
    /// the edge, refined): short and long edges, near and far, across the equator and the
    /// antimeridian.
    func testTheEndsBoundNeverPassesTheEdge() {
        var rng = TestRandom(mixing: 3232)
        var tight = 0
        var chordTight = 0
        var nearby = 0
        for k in 0..<800 {
            let p = LonLat(lon: rng.uniform(-180, 180), lat: rng.uniform(-89, 89))
            let ax = k % 2 == 0 ? p.lon + rng.uniform(-5, 5) : rng.uniform(-180, 180)
            let ay = k % 2 == 0 ? p.lat + rng.uniform(-5, 5) : rng.uniform(-89, 89)
            let size = [1e-4, 0.01, 1, 20][k % 4]
            let a = LonLat(lon: min(180, max(-180, ax)), lat: min(89.9, max(-89.9, ay)))
            let b = LonLat(lon: min(180, max(-180, a.lon + rng.uniform(-size, size))), lat: min(90, max(-90, a.lat + rng.uniform(-size, size))))
            let e = PolygonDistance.Edge(ax: a.lon, ay: a.lat, bx: b.lon, by: b.lat)
            func d(_ t: Double) -> Double {
                Geodesic.distance(lon1: p.lon, lat1: p.lat, lon2: a.lon + t * (b.lon - a.lon), lat2: a.lat + t * (b.lat - a.lat))
            }
            let truth = minimumOverUnitInterval(samples: 400, rounds: 80, d)
            let bound = PolygonDistance.endsBound(e, p)
            XCTAssertLessThanOrEqual(bound, truth, "\(p) \(e)")
            if truth - bound < 0.01 * truth + 1 { tight += 1 }
            let chordBound = PolygonDistance.chordEndsBound(e, PolygonDistance.SurfacePoint(p))
            XCTAssertLessThanOrEqual(chordBound, truth, "chords: \(p) \(e)")
            // Where the near search asks it, beside a coastline's short edges (here up to about
            // 1 km) within 100 km: short of the geodesics' bound by no more than a metre (the
            // chords to ends thousands of kilometres off fall short by more).
            if truth < 100_000 && size <= 0.01 {
                nearby += 1
                if bound - chordBound < 1 { chordTight += 1 }
            }
        }
        // Tight where it is used: for most edges short beside their distance.
        XCTAssertGreaterThan(tight, 300)
        XCTAssertGreaterThan(nearby, 10)
        XCTAssertEqual(chordTight, nearby)
    }

    /// The worst case of the old band, a north-south step on the equator, is still bounded; so
    /// is a meridian over a pole, and a pair across the equator.
    func testTheBoundHoldsWhereTheEllipsoidIsFlattest() {
        let cases: [(LonLat, Box)] = [
            (LonLat(lon: 10, lat: 0), Box(minX: 10, minY: 0.5, maxX: 10, maxY: 0.5)),
            (LonLat(lon: 10, lat: -0.25), Box(minX: 10, minY: 0.25, maxX: 10, maxY: 0.25)),
            (LonLat(lon: 10, lat: 45), Box(minX: 10, minY: -45, maxX: 10, maxY: -45)),
            (LonLat(lon: 0, lat: 89), Box(minX: 180, minY: 89, maxX: 180, maxY: 89)),
            (LonLat(lon: 0, lat: 30), Box(minX: 0, minY: 60, maxX: 0, maxY: 60)),
            (LonLat(lon: 0, lat: 1), Box(minX: 0, minY: 80, maxX: 0, maxY: 80)),
        ]
        for (p, box) in cases {
            let truth = Geodesic.distance(lon1: p.lon, lat1: p.lat, lon2: box.minX, lat2: box.minY)
            XCTAssertLessThanOrEqual(FenceStore.lowerBound(p, box), truth, "\(p) \(box)")
            XCTAssertGreaterThan(FenceStore.lowerBound(p, box), truth * 0.99, "\(p) \(box)")
        }
    }

    /// `FenceStore.FarBound`'s bounds, which let the far search pass by fences inside the
    /// coarse bound's band, are never above the geodesic to the box (the dense scan above):
    /// the auxiliary sphere's `b σ`, and the geodesic to the centre less `reach`. Boxes near
    /// and far, most of them across the globe (longitude gaps of 150 to 180 degrees, where
    /// the auxiliary longitude may pass 180), over the poles, the equator and the
    /// antimeridian. Far away the auxiliary bound is the tighter one for most.
    func testTheFarBoundsNeverPassTheGeodesic() {
        var rng = TestRandom(mixing: 3333)
        var tighter = 0
        var far = 0
        var checked = 0
        for k in 0..<1_600 {
            let p = LonLat(lon: rng.uniform(-180, 180), lat: k % 5 == 0 ? rng.uniform(-90, 90) : rng.uniform(-70, 70))
            let size = [1e-4, 0.05, 0.5, 3, 30][k % 5]
            let w = rng.uniform(0, size)
            let h = rng.uniform(0, size)
            var cx: Double
            var cy: Double
            switch k % 4 {
            case 0:  // about antipodal
                cx = p.lon + 180 + rng.uniform(-3, 3)
                cy = -p.lat + rng.uniform(-5, 5)
            case 1:  // across the globe
                cx = p.lon + rng.uniform(150, 210)
                cy = rng.uniform(-90, 90)
            case 2:  // anywhere
                cx = rng.uniform(-180, 180)
                cy = rng.uniform(-90, 90)
            default:  // nearby
                cx = p.lon + rng.uniform(-3 * size, 3 * size)
                cy = p.lat + rng.uniform(-3 * size, 3 * size)
            }
            if cx > 180 { cx -= 360 }
            if cx < -180 { cx += 360 }
            if k % 17 == 0 { cy = rng.uniform(-h, h) }
            if k % 19 == 0 { cx = 180 }
            let box = Box(
                minX: max(-180, cx - w / 2), minY: max(-90, min(90, cy - h / 2)), maxX: min(180, cx + w / 2),
                maxY: min(90, max(-90, cy + h / 2)))
            guard box.minY <= box.maxY, box.minX <= box.maxX else { continue }
            let truth = Self.geodesicToBox(p, box)
            let bound = FenceStore.FarBound(p)
            let auxiliary = bound.auxiliary(box)
            XCTAssertLessThanOrEqual(auxiliary, truth, "auxiliary: \(p) \(box)")
            XCTAssertLessThanOrEqual(bound.reference(box), truth, "reference: \(p) \(box)")
            if truth > 5_000_000 {
                far += 1
                if auxiliary > FenceStore.lowerBound(p, box) { tighter += 1 }
            }
            checked += 1
        }
        XCTAssertGreaterThan(checked, 1_500)
        XCTAssertGreaterThan(far, 600)
        XCTAssertGreaterThan(tighter, far / 2)
    }

    /// The auxiliary bound where it is tightest and where the longitude gap is near 180
    /// degrees: along the equator (b σ is a λ there, the distance), on a meridian, and at
    /// the antipode's neighbourhood, where the shortest way leaves the equator.
    func testTheAuxiliaryBoundAtItsEdges() {
        let cases: [(LonLat, LonLat)] = [
            (LonLat(lon: 0, lat: 0), LonLat(lon: 100, lat: 0)),
            (LonLat(lon: 0, lat: 0), LonLat(lon: 179, lat: 0)),
            (LonLat(lon: 0, lat: 0), LonLat(lon: 179.5, lat: 0)),
            (LonLat(lon: 0, lat: 0), LonLat(lon: 180, lat: 0)),
            (LonLat(lon: 0, lat: 0.3), LonLat(lon: 179.7, lat: -0.3)),
            (LonLat(lon: 10, lat: -45), LonLat(lon: -170, lat: 45)),
            (LonLat(lon: 10, lat: -45), LonLat(lon: -170.5, lat: 44.5)),
            (LonLat(lon: 0, lat: 1), LonLat(lon: 0, lat: 89)),
            (LonLat(lon: 0, lat: 89), LonLat(lon: 180, lat: 89)),
            (LonLat(lon: 0, lat: 90), LonLat(lon: 33, lat: -90)),
        ]
        for (p, q) in cases {
            let truth = Geodesic.distance(lon1: p.lon, lat1: p.lat, lon2: q.lon, lat2: q.lat)
            let box = Box(minX: q.lon, minY: q.lat, maxX: q.lon, maxY: q.lat)
            let auxiliary = FenceStore.FarBound(p).auxiliary(box)
            XCTAssertLessThanOrEqual(auxiliary, truth, "\(p) \(q)")
            XCTAssertGreaterThan(auxiliary, truth * 0.99, "\(p) \(q)")
        }
    }
}
