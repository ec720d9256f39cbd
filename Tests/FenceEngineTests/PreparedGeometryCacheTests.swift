@testable import FenceEngine
import XCTest

/// Positions the fast filters leave to GEOS (within about 1e-15 of a sloping edge) build and
/// prepare their polygon once per scratch, not once per position, and still get GEOS's answer.
final class PreparedGeometryCacheTests: XCTestCase {
    /// A ring of `n` positions round a circle: every edge slopes, so its float midpoints are
    /// mostly undecided by the fast filters.
    static func roundRing(lon: Double, lat: Double, radius: Double, n: Int) -> [LonLat] {
        var ring = (0..<n).map { k -> LonLat in
            let a = 2 * Double.pi * Double(k) / Double(n)
            return LonLat(lon: lon + radius * cos(a), lat: lat + radius * sin(a))
        }
        ring.append(ring[0])
        return ring
    }

    static func midpoints(_ ring: [LonLat]) -> [LonLat] {
        (0..<(ring.count - 1)).map { LonLat(lon: (ring[$0].lon + ring[$0 + 1].lon) / 2, lat: (ring[$0].lat + ring[$0 + 1].lat) / 2) }
    }

    func testNearEdgePositionsPrepareEachPolygonOnce() throws {
        let big = Self.roundRing(lon: 10, lat: 45, radius: 0.5, n: 3000)
        let small = Self.roundRing(lon: 10.2, lat: 45.1, radius: 0.05, n: 40)
        let fences: [Fence] = [.polygon(id: "big", exterior: big), .polygon(id: "small", exterior: small)]
        var store = FenceStore()
        XCTAssertTrue(store.add(fences).allSatisfy { $0.error == nil })
        let oracle = Oracle(fences)
        // The two polygons' edge points interleaved, so the kept geometries alternate.
        let a = Self.midpoints(big)
        let b = Self.midpoints(small)
        var points: [LonLat] = []
        for k in 0..<a.count {
            points.append(a[k])
            points.append(b[k % b.count])
        }
        var scratch = ContainmentScratch()
        for p in points {
            var got: [String] = []
            for id in ["big", "small"] {
                var unit: (Double, Double, Double)?
                let slot = store.handle(id: id)!.rawValue
                if store.covers(slot: slot, p, unit: &unit, scratch: &scratch) { got.append(id) }
            }
            XCTAssertEqual(got, oracle.ids(covering: p), "\(p)")
        }
        XCTAssertGreaterThan(scratch.geosCalls, 1000, "the float midpoints of sloping edges reach GEOS")
        XCTAssertEqual(scratch.preparations, 2, "each polygon built and prepared once")
        XCTAssertEqual(scratch.preparedPositions, big.count + small.count)
    }

    /// More polygons, or positions, than the scratch keeps: it is emptied and starts again,
    /// never holding more than either limit, and every answer is still GEOS's.
    func testKeptPolygonsStayBounded() throws {
        var fences: [Fence] = []
        var points: [(slot: String, at: LonLat)] = []
        for i in 0..<60 {
            let ring = Self.roundRing(lon: Double(i % 10), lat: Double(i / 10), radius: 0.3, n: 10 + 3 * (i % 7))
            fences.append(.polygon(id: "r\(i)", exterior: ring))
            points += Self.midpoints(ring).map { ("r\(i)", $0) }
        }
        var store = FenceStore()
        XCTAssertTrue(store.add(fences).allSatisfy { $0.error == nil })
        let oracle = Oracle(fences)
        // The last budget is below the largest ring (29 positions): those are used, not kept.
        for (polygons, positions) in [(8, 1_000_000), (1000, 120), (1000, 25)] {
            var scratch = ContainmentScratch()
            scratch.preparedLimit = polygons
            scratch.preparedPositionLimit = positions
            // Twice round, so polygons dropped are asked about again.
            for (id, p) in points + points {
                var unit: (Double, Double, Double)?
                let covered = store.covers(slot: store.handle(id: id)!.rawValue, p, unit: &unit, scratch: &scratch)
                XCTAssertEqual(covered, oracle.ids(covering: p).contains(id), "\(id) \(p)")
                XCTAssertLessThanOrEqual(scratch.preparedCount, polygons)
                XCTAssertLessThanOrEqual(scratch.preparedPositions, positions)
            }
            XCTAssertGreaterThan(scratch.preparations, 60, "dropped polygons are prepared again when asked about")
        }
    }
}
