@testable import FenceEngine
import XCTest

/// With hysteresis, the fences near a fix are found through a box of the margin around it
/// (`FenceStore.box(around:metres:)`); one it misses is taken for far outside. A mutation audit
/// found that a box 10% short, or one as narrow as at the fix's own latitude near the pole,
/// passed every test. The first fix within the margin outside a fence leaves its status
/// unknown (SPEC: between the bands the status holds); a missed fence would make it outside.
final class NearFenceQueryTests: XCTestCase {
    func status(after p: LonLat, fence: Fence, margin: Double) throws -> FenceStatus {
        var settings = EventSettings()
        settings.hysteresisMargin = margin
        var e = try EventEngine(settings: settings)
        XCTAssertTrue(e.add([fence]).results.allSatisfy { $0.error == nil })
        XCTAssertEqual(e.evaluate([Position(device: "v", time: 0, lon: p.lon, lat: p.lat)]).events, [])
        return e.status(device: "v", fence: fence.id)
    }

    /// 95 m east of a square with a 100 m margin: within the band.
    func testAFenceJustInsideTheMarginIsNear() throws {
        let square = Fence.polygon(id: "sq", exterior: [(0.0, 0.0), (0.01, 0), (0.01, 0.01), (0, 0.01), (0, 0)].map { LonLat(lon: $0.0, lat: $0.1) })
        let p = LonLat(lon: 0.01 + 95 / 111_320, lat: 0.005)
        XCTAssertEqual(try status(after: p, fence: square, margin: 100), .unknown)
        XCTAssertEqual(try status(after: LonLat(lon: 0.01 + 105 / 111_320, lat: 0.005), fence: square, margin: 100), .outside)
    }

    /// 111 m from the north pole, a 10 m circle 70 degrees of longitude round from the fix
    /// and nearer the pole is about 96 m away (circles are measured on the ellipsoid
    /// everywhere): the box must be as wide as the latitude nearest the pole it reaches makes
    /// it (here all longitudes), not as at the fix's latitude (52 degrees either side).
    func testNearThePoleTheBoxIsAsWideAsItsPolewardEdgeNeeds() throws {
        let fence = Fence.circle(id: "c", lon: 70, lat: 89.9995, radius: 10)
        let p = LonLat(lon: 0, lat: 89.999)
        let distance = Geodesic.distance(lon1: 70, lat1: 89.9995, lon2: p.lon, lat2: p.lat) - 10
        XCTAssertLessThan(distance, 99)
        XCTAssertGreaterThan(distance, 90)
        XCTAssertEqual(try status(after: p, fence: fence, margin: 100), .unknown, "\(distance) m away")
    }
}

/// A position outside [-180, 180] x [-90, 90] is covered by no fence, whichever way it is asked
/// (SPEC: out-of-range values are rejected), even one whose geodesic distance from a circle
/// across the antimeridian is within its radius.
final class OutOfRangeQueryTests: XCTestCase {
    func testAnOutOfRangePositionIsCoveredByNoFence() throws {
        var store = FenceStore()
        XCTAssertNil(store.add([.circle(id: "c", lon: 179.99, lat: 0, radius: 5000)]).first?.error)
        let handle = try XCTUnwrap(store.handle(id: "c"))
        XCTAssertTrue(store.fence(handle, covers: LonLat(lon: -179.995, lat: 0)))
        for p in [LonLat(lon: 180.005, lat: 0), LonLat(lon: -180.005, lat: 0), LonLat(lon: 179.99, lat: 90.01)] {
            XCTAssertFalse(store.fence(handle, covers: p), "\(p)")
            XCTAssertEqual(store.ids(covering: p), [], "\(p)")
        }
    }
}
