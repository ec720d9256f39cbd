@testable import FenceEngine
import XCTest

/// Hysteresis cases a mutation audit found no test of.
final class HysteresisEdgeTests: XCTestCase {
    /// A status still unknown (first fix within the margin) is no visit: a change of action
    /// mask re-triggers visits only (SPEC: pairs whose current status is newly reported).
    func testAnUnknownStatusIsNotReTriggeredByAMaskChange() throws {
        var settings = EventSettings()
        settings.hysteresisMargin = 20
        settings.actions = [.exit]
        var e = try EventEngine(settings: settings)
        XCTAssertTrue(e.add([.circle(id: "c", lon: 0, lat: 0, radius: 100)]).results.allSatisfy { $0.error == nil })
        XCTAssertEqual(summary(e.evaluate([fixEast("u", 90, 10), fixEast("i", 50, 10)]).events), [])
        XCTAssertEqual(e.status(device: "u", fence: "c"), .unknown)
        XCTAssertEqual(summary(e.setActions([.enter, .exit])), ["10 i c enter actions-changed"])
        XCTAssertEqual(summary(e.setActions(nil, fence: "c")), [])
        XCTAssertEqual(summary(e.setActions([.enter], fence: "c")), [])
        XCTAssertEqual(summary(e.setActions([.exit], fence: "c")), [])
        XCTAssertEqual(summary(try e.updateSettings { $0.actions = [.enter] }), [])
        XCTAssertEqual(summary(e.setActions(nil, fence: "c")), ["10 i c enter actions-changed"])
    }

    /// Outside by exactly the margin is outside by at least it (SPEC: a pair leaves only when
    /// the fix is outside by at least m): the exit fires. The margin is set to the fix's
    /// distance from the boundary as the engine measures it, for a circle and a polygon.
    func testOutsideByExactlyTheMarginLeaves() throws {
        let east = Geodesic.destination(lon: 0, lat: 0, azimuth: 90, distance: 130)
        let p = LonLat(lon: east.lon, lat: east.lat)
        let circle = abs(Geodesic.distance(lon1: 0, lat1: 0, lon2: p.lon, lat2: p.lat) - 100)
        let square = Fence.polygon(
            id: "sq", exterior: [(0.01, -0.001), (0.011, -0.001), (0.011, 0.001), (0.01, 0.001), (0.01, -0.001)].map { LonLat(lon: $0.0, lat: $0.1) })
        var store = FenceStore()
        XCTAssertNil(store.add([square]).first?.error)
        let q = LonLat(lon: 0.0103, lat: 0.0013)
        let polygon = store.boundaryDistance(slot: 0, q)
        XCTAssertFalse(store.fence(FenceHandle(rawValue: 0), covers: q))
        for (fence, point, inside, margin) in [
            (Fence.circle(id: "c", lon: 0, lat: 0, radius: 100), p, LonLat(lon: 0, lat: 0), circle),
            (square, q, LonLat(lon: 0.0105, lat: 0), polygon),
        ] {
            XCTAssertGreaterThan(margin, 10)
            var settings = EventSettings()
            settings.hysteresisMargin = margin
            var e = try EventEngine(settings: settings)
            XCTAssertTrue(e.add([fence]).results.allSatisfy { $0.error == nil })
            let r = e.evaluate([
                Position(device: "v", time: 0, lon: inside.lon, lat: inside.lat), Position(device: "v", time: 10, lon: point.lon, lat: point.lat),
            ])
            XCTAssertEqual(summary(r.events), ["0 v \(fence.id) enter initial", "10 v \(fence.id) exit 10s"], "margin \(margin)")
        }
    }
}
