@testable import FenceEngine
import XCTest

/// A device the engine has heard of but applied no fix of is `unknown` against every fence
/// (SPEC: Baidu's four statuses; `FenceStatus.unknown`: no applied fix yet). A mutation audit
/// found no test that looked.
final class StatusBeforeFirstFixTests: XCTestCase {
    /// A state may hold a device without a fix (a state file lists it with no last fix and no
    /// pairs): its status is unknown, not outside, and its first fix inside is an initial enter.
    func testARestoredDeviceWithoutAFixIsUnknown() throws {
        var e = EventEngine()
        XCTAssertTrue(e.add([.circle(id: "c", lon: 0, lat: 0, radius: 1000)]).results.allSatisfy { $0.error == nil })
        let device = TrackerSnapshot.Device(id: "v", lastTime: -.infinity, lastLon: .nan, lastLat: .nan, pairs: [])
        XCTAssertEqual(try e.restore(TrackerSnapshot(watermark: 1000, devices: [device])), 0)
        XCTAssertEqual(e.deviceCount, 1)
        XCTAssertEqual(e.status(device: "v", fence: "c"), .unknown)
        XCTAssertEqual(summary(e.evaluate([Position(device: "v", time: 2000, lon: 0, lat: 0)]).events), ["2000 v c enter initial"])
        XCTAssertEqual(e.status(device: "v", fence: "c"), .inside)
    }

    /// With idle eviction, a fix of a device the engine holds no state for, older than what
    /// eviction has judged, is late: nothing of the device is applied, and it is gone again by
    /// the batch's end. Its status is unknown.
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
