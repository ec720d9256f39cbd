@testable import FenceEngine
import XCTest

/// Idle eviction ends visits (`device-idle` exits); a status still unknown under hysteresis is
/// no visit, so it ends in silence (a mutation audit found no test of it).
final class IdleUnknownStatusTests: XCTestCase {
    func testAnUnknownStatusEndsWithoutAnExitWhenTheDeviceGoesIdle() throws {
        var settings = EventSettings()
        settings.hysteresisMargin = 20
        settings.idleEviction = 100
        var e = try EventEngine(settings: settings)
        XCTAssertTrue(e.add([.circle(id: "c", lon: 0, lat: 0, radius: 100)]).results.allSatisfy { $0.error == nil })
        // u within the margin (unknown), i deep inside (a visit); then each found idle: u by
        // the batch's end, i by its own next fix.
        XCTAssertEqual(summary(e.evaluate([fixEast("u", 90, 0), fixEast("i", 50, 0)]).events), ["0 i c enter initial"])
        XCTAssertEqual(e.status(device: "u", fence: "c"), .unknown)
        let r = e.evaluate([fixEast("i", 50, 1000), fixEast("x", 1000, 1000)])
        XCTAssertEqual(summary(r.events), ["100 i c exit device-idle 0s", "1000 i c enter initial"])
        XCTAssertEqual(e.status(device: "u", fence: "c"), .unknown, "evicted: no state, as a device never seen")
        XCTAssertEqual(e.snapshot().devices.map(\.id), ["i", "x"])
    }
}

/// A device found not quite idle by a batch's end (short of the eviction time by less than the
/// rounding slack `mayBeIdle` allows for) stays in the idle queue and is evicted by a later
/// batch (a mutation audit found that dropping it from the queue went unnoticed).
final class NearlyIdleDeviceTests: XCTestCase {
    func testADeviceNearlyIdleAtOneBatchEndIsEvictedByALaterOne() throws {
        var settings = EventSettings()
        settings.idleEviction = 100
        var e = try EventEngine(settings: settings)
        XCTAssertTrue(e.add([.circle(id: "c", lon: 0, lat: 0, radius: 1000)]).results.allSatisfy { $0.error == nil })
        XCTAssertEqual(summary(e.evaluate([Position(device: "v", time: 0, lon: 0, lat: 0)]).events), ["0 v c enter initial"])
        // 10 µs short of 100 s: within `mayBeIdle`'s 2^-14 s, not idle.
        XCTAssertEqual(summary(e.evaluate([Position(device: "w", time: 99.99999, lon: 5, lat: 5)]).events), [])
        XCTAssertEqual(e.status(device: "v", fence: "c"), .inside)
        XCTAssertEqual(
            summary(e.evaluate([Position(device: "w", time: 1000, lon: 5, lat: 5)]).events), ["100 v c exit device-idle 0s"])
        XCTAssertEqual(e.status(device: "v", fence: "c"), .unknown)
    }
}
