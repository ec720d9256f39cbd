@testable import FenceEngine
import XCTest

/// `FenceStore.circleBoundaryIsFar` (hysteresis classification of circles without a geodesic
/// when the chord and the lon/lat path bound it) against the geodesic itself, the obvious
/// oracle: |distance(centre, p) - radius| >= margin.
final class MarginCircleBoundsTests: XCTestCase {
    func testBoundsDecideAsTheGeodesic() {
        var checked = 0, cheap = 0, failures: [String] = []
        for seed in UInt64(1)...40 {
            var rng = TestRandom(mixing: 4_400 + seed)
            for _ in 0..<300 {
                // Centres anywhere, some at the poles and on the antimeridian; radii 1 m to 5,000 km.
                var c = LonLat(lon: rng.uniform(-180, 180), lat: rng.uniform(-89.9, 89.9))
                switch rng.next() % 6 {
                case 0: c.lat = rng.next() % 2 == 0 ? 90 : -90
                case 1: c.lon = rng.next() % 2 == 0 ? 180 : -180
                default: break
                }
                let radius = pow(10, rng.uniform(0, 6.7))
                let margin = pow(10, rng.uniform(-1, 3))
                let surface = { (p: LonLat) in PolygonDistance.SurfacePoint(p) }
                for k in 0..<12 {
                    // Points at radius +- margin, off by a hair or more, and anywhere.
                    let target: Double
                    switch k % 4 {
                    case 0: target = radius + margin + (rng.next() % 2 == 0 ? 1 : -1) * pow(10, rng.uniform(-9, -2))
                    case 1: target = max(0, radius - margin + (rng.next() % 2 == 0 ? 1 : -1) * pow(10, rng.uniform(-9, -2)))
                    case 2: target = radius * rng.uniform(0, 3)
                    default: target = rng.uniform(0, 20_000_000)
                    }
                    let q = GeodesicWGS84.direct(lat1: c.lat, lon1: c.lon, azi1: rng.uniform(-180, 180), s12: min(target, 19_990_000))
                    let p = LonLat(lon: q.lon, lat: q.lat)
                    let exact = abs(Geodesic.distance(lon1: c.lon, lat1: c.lat, lon2: p.lon, lat2: p.lat) - radius) >= margin
                    let got = FenceStore.circleBoundaryIsFar(centre: c, radius: radius, p, surface: surface(p), margin: margin)
                    checked += 1
                    if got != exact && failures.count < 10 {
                        failures.append("seed \(seed): centre \(c) radius \(radius) margin \(margin) p \(p): \(got), want \(exact)")
                    }
                    // Decided by the bounds alone: far from radius +- margin by over 1%.
                    let d = Geodesic.distance(lon1: c.lon, lat1: c.lat, lon2: p.lon, lat2: p.lat)
                    if abs(d - radius - margin) > 0.02 * d + 1 && abs(d - radius + margin) > 0.02 * d + 1 { cheap += 1 }
                }
            }
        }
        XCTAssertEqual(failures, [])
        XCTAssertGreaterThan(checked, 100_000)
        print("MarginCircleBoundsTests: \(checked) positions, \(cheap) well clear of radius +- margin")
    }

    /// Nested circles with `--margin`: the engine's classification through `classify` agrees
    /// with one made from geodesics, for positions deep inside, in the band and outside.
    func testClassifyNestedCircles() {
        var store = FenceStore()
        let centre = LonLat(lon: 8.5, lat: 47.4)
        let radii = (1...50).map { Double($0) * 200 }
        store.add(radii.enumerated().map { Fence.circle(id: "c\($0.offset)", lon: centre.lon, lat: centre.lat, radius: $0.element) }, threads: 1)
        var rng = TestRandom(mixing: 45)
        for _ in 0..<2_000 {
            let s = rng.uniform(0, 11_000)
            let q = GeodesicWGS84.direct(lat1: centre.lat, lon1: centre.lon, azi1: rng.uniform(-180, 180), s12: s)
            let p = LonLat(lon: q.lon, lat: q.lat)
            var scratch = ContainmentScratch()
            var out: [NearFence] = []
            store.classify(p, margin: 25, time: 0, expiring: false, scratch: &scratch, into: &out)
            let d = Geodesic.distance(lon1: centre.lon, lat1: centre.lat, lon2: p.lon, lat2: p.lat)
            for near in out {
                let r = radii[Int(store.id(of: FenceHandle(rawValue: near.slot)).dropFirst())!]
                let far = abs(d - r) >= 25
                let want: NearFence.Class = d <= r ? (far ? .deepInside : .insideBand) : (far ? .farOutside : .outsideBand)
                XCTAssertEqual(near.cls, want, "p at \(d) m, circle \(r) m")
            }
        }
    }
}
