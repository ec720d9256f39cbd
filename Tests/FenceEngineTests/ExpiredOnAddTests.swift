@testable import FenceEngine
import XCTest

/// A fence added or replaced with an `expires` the engine's clock already passed expires in
/// `add`, before reshapes and masks are looked at, as a restore does: the live engine and an
/// engine restored from its snapshot against the same fences then say the same.
final class ExpiredOnAddTests: XCTestCase {
    static let square = [(0.0, 0.0), (1, 0), (1, 1), (0, 1), (0, 0)].map { LonLat(lon: $0.0, lat: $0.1) }

    static func fence(_ id: String = "sq", dx: Double = 0, expires: Double? = nil, actions: FenceActions? = nil) -> Fence {
        var f = Fence.polygon(id: id, exterior: square.map { LonLat(lon: $0.lon + dx, lat: $0.lat) })
        f.expires = expires
        f.actions = actions
        return f
    }

    /// v inside "sq" since 10, another device's fix at 200 (the clock): then the replacement.
    func engine(_ settings: EventSettings = EventSettings()) throws -> EventEngine {
        var e = try EventEngine(settings: settings)
        _ = e.add([Self.fence()])
        let r = e.evaluate([Position(device: "v", time: 10, lon: 0.5, lat: 0.5), Position(device: "w", time: 200, lon: 5, lat: 5)])
        XCTAssertEqual(summary(r.events), settings.actions.contains(.enter) ? ["10 v sq enter initial"] : [])
        XCTAssertEqual(e.fences(insideOf: "v"), ["sq"])
        return e
    }

    /// The replacement's events live, and those of a restore of the snapshot before it
    /// against the replaced fences (what a resumed worker or `fence eval --state` gives).
    func liveAndRestored(_ settings: EventSettings = EventSettings(), _ replacement: Fence) throws -> (live: [String], restored: [String]) {
        var live = try engine(settings)
        let snapshot = live.snapshot()
        let events = live.add([replacement]).events
        XCTAssertNil(live.store.handle(id: "sq"), "expired at once")
        var fresh = try EventEngine(settings: settings)
        _ = fresh.add([replacement])
        XCTAssertNotNil(fresh.store.handle(id: "sq"), "no clock yet: it waits")
        let (_, restoredEvents) = try fresh.restoreReportingChanges(snapshot)
        XCTAssertNil(fresh.store.handle(id: "sq"))
        XCTAssertEqual(fresh.fences(insideOf: "v"), live.fences(insideOf: "v"))
        return (summary(events), summary(restoredEvents))
    }

    /// With a mask that now reports `enter`: only the expiry exit, no re-trigger after it
    /// (which left the device inside a fence that was gone; a review found it).
    func testAReplacementWithAnotherMaskExpiresWithoutARetrigger() throws {
        var settings = EventSettings()
        settings.actions = [.exit]
        let (live, restored) = try liveAndRestored(settings, Self.fence(expires: 5, actions: [.enter, .exit]))
        XCTAssertEqual(live, ["10 v sq exit fence-expired 0s"])
        XCTAssertEqual(restored, live)
    }

    /// A new shape that misses the last fix: the expiry ends the visit, as a restore does.
    func testAReshapedReplacementExpiresAsARestoreDoes() throws {
        let (live, restored) = try liveAndRestored(EventSettings(), Self.fence(dx: 5, expires: 50))
        XCTAssertEqual(live, ["50 v sq exit fence-expired 40s"])
        XCTAssertEqual(restored, live)
    }

    /// A new fence the clock passed: a later fix dated before its expiry does not enter it.
    /// Before any batch it waits for the first batch's end, and that batch's fixes see it.
    func testANewFenceThatExpiredIsGoneAndBeforeAnyBatchItWaits() throws {
        var e = try engine()
        XCTAssertEqual(e.add([Self.fence("late", dx: 2, expires: 150)]).events, [])
        XCTAssertNil(e.store.handle(id: "late"))
        XCTAssertEqual(e.evaluate([Position(device: "g", time: 145, lon: 2.5, lat: 0.5)]).events, [])
        var fresh = EventEngine()
        _ = fresh.add([Self.fence("late", dx: 2, expires: 150)])
        let r = fresh.evaluate([Position(device: "g", time: 145, lon: 2.5, lat: 0.5), Position(device: "w", time: 200, lon: 9, lat: 9)])
        XCTAssertEqual(summary(r.events), ["145 g late enter initial", "150 g late exit fence-expired 5s"])
    }
}
