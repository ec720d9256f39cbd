@testable import FenceEngine
import XCTest

/// A device the engine has heard of but applied no fix of is `unknown` against every fence
/// (SPEC: Baidu's four statuses; `FenceStatus.unknown`: no applied fix yet).
final class StatusBeforeFirstFixTests: XCTestCase {
    /// With idle eviction, a fix of a device the engine holds no state for, older than what
    /// eviction has judged, is late: the device is interned but nothing of it applied. Its
    /// status stays unknown, not outside (a mutation audit found no test that looked).
    func testADeviceWhoseOnlyFixWasLateIsUnknown() throws {
        var settings = EventSettings()
        settings.idleEviction = 100
        var e = try EventEngine(settings: settings)
        XCTAssertTrue(e.add([.circle(id: "c", lon: 0, lat: 0, radius: 1000)]).results.allSatisfy { $0.error == nil })
        XCTAssertEqual(e.evaluate([Position(device: "a", time: 1000, lon: 0, lat: 0)]).applied, 1)
        let r = e.evaluate([Position(device: "v", time: 500, lon: 5, lat: 5)])
        XCTAssertEqual(r.late, 1)
        XCTAssertEqual(r.applied, 0)
        XCTAssertEqual(e.status(device: "v", fence: "c"), .unknown)
        XCTAssertEqual(e.status(device: "a", fence: "c"), .inside)
    }
}
