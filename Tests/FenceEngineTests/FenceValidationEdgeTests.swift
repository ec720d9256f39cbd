@testable import FenceEngine
import XCTest

/// Fence checks at their edges, which a mutation audit found untested: a fence at exactly a
/// limit loads, holes go to GEOS's check (not the single-ring proof), and a ring the proof
/// finds meeting itself is repaired when asked (SPEC: repair only when asked).
final class FenceValidationEdgeTests: XCTestCase {
    func ring(_ points: [(Double, Double)]) -> [LonLat] { points.map { LonLat(lon: $0.0, lat: $0.1) } }

    func testAFenceAtExactlyTheLimitsLoads() {
        var store = FenceStore()
        store.limits.maxPositions = 10
        store.limits.maxPolygons = 2
        let a = Polygon(exterior: ring([(0, 0), (1, 0), (1, 1), (0, 1), (0, 0)]))
        let b = Polygon(exterior: ring([(2, 0), (3, 0), (3, 1), (2, 1), (2, 0)]))
        let c = Polygon(exterior: ring([(4, 0), (5, 0), (5, 1), (4, 1), (4, 0)]))
        let results = store.add([
            Fence(id: "two", shape: .polygons([a, b])),
            Fence(id: "three", shape: .polygons([a, b, c])),
            Fence(id: "ten", shape: .polygons([Polygon(exterior: ring([(0, 0), (1, 0), (2, 0), (3, 0), (4, 0), (4, 1), (3, 1), (2, 1), (1, 1), (0, 0)]))])),
            Fence(id: "eleven", shape: .polygons([Polygon(exterior: ring([(0, 0), (1, 0), (2, 0), (3, 0), (4, 0), (4, 1), (3, 1), (2, 1), (1, 1), (0, 1), (0, 0)]))])),
        ])
        XCTAssertNil(results[0].error)
        XCTAssertEqual(results[1].error?.reason, "3 polygons exceed the limit of 2")
        XCTAssertNil(results[2].error)
        XCTAssertEqual(results[3].error?.reason, "11 positions exceed the limit of 10")
        XCTAssertEqual(store.ids(covering: LonLat(lon: 2.5, lat: 0.5)), ["ten", "two"])
    }

    /// A polygon with a hole is GEOS's to judge: valid ones load, and a hole outside its shell
    /// or across it is refused with GEOS's reason (the single-ring proof, given shell and hole
    /// as one ring, would say something else, or nothing).
    func testHolesAreJudgedByGEOS() {
        var store = FenceStore()
        let shell = ring([(0, 0), (10, 0), (10, 10), (0, 10), (0, 0)])
        let results = store.add([
            .polygon(id: "ok", exterior: shell, holes: [ring([(2, 2), (4, 2), (4, 4), (2, 4), (2, 2)])]),
            .polygon(id: "touching", exterior: shell, holes: [ring([(0, 0), (4, 2), (2, 4), (0, 0)])]),
            .polygon(id: "outside", exterior: shell, holes: [ring([(20, 20), (21, 20), (21, 21), (20, 21), (20, 20)])]),
            .polygon(id: "across", exterior: shell, holes: [ring([(8, 2), (12, 2), (12, 4), (8, 4), (8, 2)])]),
        ])
        XCTAssertNil(results[0].error)
        XCTAssertNil(results[1].error, "a hole touching the shell at one point is valid")
        XCTAssertEqual(results[2].error?.kind, .invalidGeometry)
        XCTAssertTrue(results[2].error?.reason.hasPrefix("Hole lies outside shell") ?? false, "\(String(describing: results[2].error))")
        XCTAssertEqual(results[3].error?.kind, .invalidGeometry)
        XCTAssertTrue(results[3].error?.reason.hasPrefix("Self-intersection") ?? false, "\(String(describing: results[3].error))")
        XCTAssertEqual(store.ids(covering: LonLat(lon: 2.5, lat: 2.5)), [])
        XCTAssertEqual(store.ids(covering: LonLat(lon: 5, lat: 5)), ["ok", "touching"])
        // A crowded shell (a hedgehog of 3,000 positions, which the single-ring sweep decides)
        // with a hole in its first spike touching the shell at its tip: valid.
        var hedgehog: [LonLat] = []
        for k in 0..<3000 {
            let a = 2 * Double.pi * Double(k) / 3000
            let r = k % 2 == 0 ? 1.0 : 0.2
            hedgehog.append(LonLat(lon: r * cos(a), lat: r * sin(a)))
        }
        hedgehog.append(hedgehog[0])
        let tipHole = ring([(1, 0), (0.6, 0.0001), (0.6, -0.0001), (1, 0)])
        var spiky = FenceStore()
        XCTAssertNil(spiky.add([.polygon(id: "spiky", exterior: hedgehog, holes: [tipHole])])[0].error)
        XCTAssertEqual(spiky.ids(covering: LonLat(lon: 0.5, lat: 0)), ["spiky"])
        XCTAssertEqual(spiky.ids(covering: LonLat(lon: 0.7, lat: 0)), [])
    }

    /// A ring meeting itself is refused, small (a bowtie) or crowded (a hedgehog the sweep
    /// proves), and repaired when repair is asked.
    func testARingMeetingItselfIsRepairedWhenAsked() {
        var hedgehog: [LonLat] = []
        for k in 0..<3000 {
            let a = 2 * Double.pi * Double(k) / 3000
            let r = k % 2 == 0 ? 1.0 : 0.2
            hedgehog.append(LonLat(lon: r * cos(a), lat: r * sin(a)))
        }
        // One spike bent across its neighbours.
        hedgehog[1500] = LonLat(lon: hedgehog[1500].lon, lat: hedgehog[1500].lat + 0.05)
        hedgehog.append(hedgehog[0])
        let bowtie = ring([(0, 0), (1, 1), (1, 0), (0, 1), (0, 0)])
        for (id, ring) in [("bowtie", bowtie), ("hedgehog", hedgehog)] {
            var store = FenceStore()
            let refused = store.add([.polygon(id: id, exterior: ring)])
            XCTAssertEqual(refused[0].error?.kind, .invalidGeometry, id)
            let repaired = store.add([.polygon(id: id, exterior: ring)], repair: true)
            XCTAssertNil(repaired[0].error, id)
            XCTAssertEqual(store.count, 1, id)
        }
    }
}
