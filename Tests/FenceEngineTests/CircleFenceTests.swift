@testable import FenceEngine
import XCTest

/// Circles: geodesic distance on the ellipsoid, boundary inside, antimeridian and poles.
final class CircleFenceTests: XCTestCase {
    /// A point 1 cm inside the radius is covered, 1 cm outside is not, in every direction, for
    /// circles of many sizes, including ones across the antimeridian and around the poles.
    func testCentimetreBoundaryOverSeeds() throws {
        for seed in UInt64(1)...20 {
            var rng = TestRandom(mixing: seed)
            var centers: [LonLat] = [LonLat(lon: 179.95, lat: rng.uniform(-60, 60)), LonLat(lon: -179.99, lat: 10)]
            centers.append(LonLat(lon: rng.uniform(-180, 180), lat: 89.9))
            centers.append(LonLat(lon: rng.uniform(-180, 180), lat: -89.95))
            centers.append(LonLat(lon: 0, lat: 90))
            for _ in 0..<5 { centers.append(LonLat(lon: rng.uniform(-180, 180), lat: rng.uniform(-85, 85))) }
            for (k, c) in centers.enumerated() {
                let radius = [1.0, 80.0, 2_500.0, 40_000.0, 900_000.0][k % 5] * rng.uniform(0.8, 1.2)
                var store = FenceStore()
                try store.add(.circle(id: "c", lon: c.lon, lat: c.lat, radius: radius))
                for _ in 0..<16 {
                    let az = rng.uniform(0, 360)
                    let inside = Geodesic.destination(lon: c.lon, lat: c.lat, azimuth: az, distance: radius - 0.01)
                    let outside = Geodesic.destination(lon: c.lon, lat: c.lat, azimuth: az, distance: radius + 0.01)
                    XCTAssertEqual(store.ids(covering: LonLat(lon: inside.lon, lat: inside.lat)), ["c"], "seed \(seed) center \(c) r \(radius) az \(az)")
                    XCTAssertEqual(store.ids(covering: LonLat(lon: outside.lon, lat: outside.lat)), [], "seed \(seed) center \(c) r \(radius) az \(az)")
                }
                XCTAssertEqual(store.ids(covering: c), ["c"])
            }
        }
    }

    /// A circle across the antimeridian is indexed under two boxes and found from both sides.
    func testAntimeridianCircle() throws {
        var store = FenceStore()
        try store.add(.circle(id: "fiji", lon: 179.9, lat: -17, radius: 50_000))
        XCTAssertEqual(store.ids(covering: LonLat(lon: -179.8, lat: -17)), ["fiji"])
        XCTAssertEqual(store.ids(covering: LonLat(lon: 179.5, lat: -17)), ["fiji"])
        XCTAssertEqual(store.ids(covering: LonLat(lon: 180, lat: -17)), ["fiji"])
        XCTAssertEqual(store.ids(covering: LonLat(lon: -180, lat: -17)), ["fiji"])
        XCTAssertEqual(store.ids(covering: LonLat(lon: -179.0, lat: -17)), [])
        XCTAssertEqual(store.tree.count, 2)
    }

    /// A circle around the pole covers every longitude near it.
    func testPolarCircle() throws {
        var store = FenceStore()
        try store.add(.circle(id: "north", lon: 45, lat: 89.5, radius: 100_000))
        for lon in stride(from: -180.0, through: 180, by: 15) {
            XCTAssertEqual(store.ids(covering: LonLat(lon: lon, lat: 89.9)), ["north"], "lon \(lon)")
        }
        XCTAssertEqual(store.ids(covering: LonLat(lon: 45, lat: 90)), ["north"])
        XCTAssertEqual(store.ids(covering: LonLat(lon: -135, lat: 88.8)), [], "1.7 degrees from the centre across the pole is 189 km")
        XCTAssertEqual(store.ids(covering: LonLat(lon: -135, lat: 89.7)), ["north"], "0.8 degrees across the pole is 89 km")
    }

    /// The widest circle taken covers the whole globe, its centre's antipode too; a radius
    /// beyond the longest geodesic (a value in the wrong unit, 1e300) is refused by name.
    func testRadiusUpToTheLongestGeodesic() throws {
        var store = FenceStore()
        try store.add(.circle(id: "world", lon: 10, lat: 45, radius: FenceValidation.maxRadius))
        for p in [LonLat(lon: -170, lat: -45), LonLat(lon: -170, lat: -44.9), LonLat(lon: 180, lat: 0), LonLat(lon: 0, lat: -90)] {
            XCTAssertEqual(store.ids(covering: p), ["world"], "\(p)")
        }
        let results = store.add([
            .circle(id: "over", lon: 0, lat: 0, radius: FenceValidation.maxRadius + 1), .circle(id: "huge", lon: 0, lat: 0, radius: 1e300),
        ])
        for r in results {
            XCTAssertEqual(r.error?.kind, .invalidRadius)
            XCTAssertTrue(r.error?.reason.contains("beyond the longest distance on the Earth") == true, "\(String(describing: r.error))")
        }
    }
}
