@testable import FenceEngine
import SeededRandom
import XCTest

/// `cross` decides most segments against a small polygon's edges itself
/// (`EventEngine.segment(_:_:crossesEdgesOf:)`) and leaves to GEOS the ones whose orientations
/// rounding could turn: a segment ending a few ulps off an edge. Its certain answers must be
/// GEOS's (robust predicates); a mutation audit found no test that put a fix that close to
/// an edge, so a looser tolerance, or a "crosses" decided with one orientation unknown,
/// passed every test.
final class CrossEdgeRoundingTests: XCTestCase {
    func testCertainAnswersNearAnEdgeAreGEOSs() throws {
        var rng = TestRandom(mixing: 17)
        var e = EventEngine()
        var fences: [Fence] = []
        var edges: [(c: LonLat, d: LonLat)] = []
        for i in 0..<60 {
            let c = LonLat(lon: rng.uniform(-10, 10), lat: rng.uniform(-10, 10))
            let d = LonLat(lon: c.lon + rng.uniform(0.1, 2), lat: c.lat + rng.uniform(-2, 2))
            // A triangle below the edge c-d.
            let apex = LonLat(lon: (c.lon + d.lon) / 2, lat: min(c.lat, d.lat) - 1)
            fences.append(.polygon(id: "t\(i)", exterior: [c, d, apex, c]))
            edges.append((c, d))
        }
        XCTAssertTrue(e.add(fences).results.allSatisfy { $0.error == nil })
        var scratch = ApplyScratch()
        var certain = 0
        var left = 0
        for (i, edge) in edges.enumerated() {
            let slot = try XCTUnwrap(e.store.slotByID["t\(i)"])
            let record = e.store.geometry.base + HotWord.start(e.store.slotHot[Int(slot)])
            for _ in 0..<10 {
                let t = rng.uniform(0.2, 0.8)
                let onEdge = LonLat(lon: edge.c.lon + t * (edge.d.lon - edge.c.lon), lat: edge.c.lat + t * (edge.d.lat - edge.c.lat))
                // From above the edge down to a few ulps either side of it, or clear of it.
                var ends: [Double] = [onEdge.lat - 1e-6, onEdge.lat + 1e-6, onEdge.lat - 1e-9, onEdge.lat + 1e-9]
                for k in -4...4 {
                    var lat = onEdge.lat
                    for _ in 0..<abs(k) { lat = k > 0 ? lat.nextUp : lat.nextDown }
                    ends.append(lat)
                }
                for lat in ends {
                    let q = LonLat(lon: onEdge.lon, lat: lat)
                    let p = LonLat(lon: q.lon + rng.uniform(-0.5, 0.5), lat: q.lat + rng.uniform(0.5, 1.5))
                    // Both ends outside, as `cross` asks (its edge test assumes it).
                    let handle = FenceHandle(rawValue: slot)
                    if e.store.fence(handle, covers: q) || e.store.fence(handle, covers: p) { continue }
                    let geos = e.segmentByGEOS(p, q, intersects: slot, scratch: &scratch)
                    guard let fast = EventEngine.segment(p, q, crossesEdgesOf: record) else {
                        left += 1
                        continue
                    }
                    certain += 1
                    XCTAssertEqual(fast, geos, "fence t\(i), segment \(p) -> \(q)")
                }
            }
        }
        XCTAssertGreaterThan(left, 500, "segments ending within rounding of the edge go to GEOS")
        XCTAssertGreaterThan(certain, 500)
    }

    /// The same at the engine: a device coming down towards a triangle's slanted edge and
    /// stopping an ulp short of it (outside) has not crossed the fence.
    func testAFixAnUlpShortOfAnEdgeIsNoCross() throws {
        var settings = EventSettings()
        settings.crossDetection = true
        var e = try EventEngine(settings: settings)
        let triangle = [(0.0, 0.0), (1, 0), (1, 1), (0, 0)].map { LonLat(lon: $0.0, lat: $0.1) }
        XCTAssertTrue(e.add([.polygon(id: "t", exterior: triangle)]).results.allSatisfy { $0.error == nil })
        // The edge is y = x; (0.5, 0.5 + 1 ulp) is just above it, outside.
        let r = e.evaluate([
            Position(device: "v", time: 0, lon: 0.5, lat: 2), Position(device: "v", time: 10, lon: 0.5, lat: 0.5.nextUp),
            Position(device: "w", time: 0, lon: 0.5, lat: 2), Position(device: "w", time: 10, lon: 0.75, lat: 0.25),
            Position(device: "w", time: 20, lon: 0.5, lat: 2),
        ])
        XCTAssertEqual(summary(r.events), ["10 w t enter", "20 w t exit 10s"])
        XCTAssertEqual(e.status(device: "v", fence: "t"), .outside)
    }
}
