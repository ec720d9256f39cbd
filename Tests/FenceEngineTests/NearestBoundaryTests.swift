@testable import FenceEngine
import XCTest

/// Adaptive reporting: the R-tree's outward search finds the same nearest boundary as a scan.
final class NearestBoundaryTests: XCTestCase {
    func testNearestMatchesScanOverSeeds() throws {
        for seed in UInt64(1)...20 {
            var rng = TestRandom(mixing: seed)
            var fences: [Fence] = []
            for i in 0..<150 {
                let lon = rng.uniform(0, 2)
                let lat = rng.uniform(40, 42)
                fences.append(
                    i % 2 == 0
                        ? .circle(id: "c\(i)", lon: lon, lat: lat, radius: rng.uniform(100, 5000))
                        : .polygon(id: "p\(i)", exterior: Shapes.star(&rng, lon: lon, lat: lat, radius: 0.03, vertices: 10)))
            }
            var store = FenceStore()
            store.add(fences)
            for _ in 0..<60 {
                let p = LonLat(lon: rng.uniform(-0.5, 2.5), lat: rng.uniform(39.5, 42.5))
                let found = store.nearestBoundary(to: p)
                // The scan: every fence, the same distance function.
                var best = Double.infinity
                var bestSlot: Int32 = -1
                for h in store.allHandles() {
                    let d = store.boundaryDistance(slot: Int(h.rawValue), p)
                    if d < best {
                        best = d
                        bestSlot = h.rawValue
                    }
                }
                XCTAssertEqual(abs(found.distance), best, accuracy: 1e-6, "seed \(seed) \(p)")
                let inside = store.fence(FenceHandle(rawValue: bestSlot), covers: p)
                XCTAssertEqual(found.distance < 0, inside, "seed \(seed) \(p)")
            }
        }
    }

    func testSignDistanceAndDelay() throws {
        var store = FenceStore()
        try store.add(.circle(id: "c", lon: 0, lat: 0, radius: 1000))
        let inside = store.nearestBoundary(to: LonLat(lon: 0, lat: 0))
        XCTAssertEqual(inside.distance, -1000, accuracy: 1e-6)
        let p = Geodesic.destination(lon: 0, lat: 0, azimuth: 30, distance: 4000)
        let outside = store.nearestBoundary(to: LonLat(lon: p.lon, lat: p.lat))
        XCTAssertEqual(outside.distance, 3000, accuracy: 1e-6)
        XCTAssertEqual(store.id(of: outside.fence!), "c")
        XCTAssertEqual(outside.reportDelay(maxSpeed: 30), 100, accuracy: 1e-6)
        XCTAssertEqual(outside.reportDelay(maxSpeed: 30, maximum: 60), 60)
        XCTAssertEqual(FenceStore().nearestBoundary(to: LonLat(lon: 0, lat: 0)).distance, .infinity)
        // Across the antimeridian the search goes the short way.
        var am = FenceStore()
        try am.add(.circle(id: "east", lon: -179.99, lat: 0, radius: 100))
        try am.add(.circle(id: "far", lon: 170, lat: 0, radius: 100))
        let q = am.nearestBoundary(to: LonLat(lon: 179.99, lat: 0))
        XCTAssertEqual(am.id(of: q.fence!), "east")
        XCTAssertEqual(q.distance, 2226.4 - 100, accuracy: 1)
    }
}
