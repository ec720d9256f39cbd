@testable import FenceEngine
import XCTest

/// Restoring a state: cases a mutation audit found no test of.
final class RestoreEdgeTests: XCTestCase {
    /// Under idle eviction, a restored engine has judged devices idle up to the state's
    /// watermark, as the engine that wrote it had: a fix of a device it holds no state for,
    /// older than the watermark by the eviction time, is late (its state may have been
    /// dropped), not a new device's first fix.
    func testARestoredEngineKeepsTheEvictionHorizon() throws {
        var settings = EventSettings()
        settings.idleEviction = 100
        var live = try EventEngine(settings: settings)
        XCTAssertTrue(live.add([.circle(id: "c", lon: 0, lat: 0, radius: 1000)]).results.allSatisfy { $0.error == nil })
        _ = live.evaluate([Position(device: "a", time: 1000, lon: 0, lat: 0)])
        var restored = try EventEngine(store: live.store, settings: settings)
        XCTAssertEqual(try restored.restore(live.snapshot()), 0)
        for var engine in [live, restored] {
            let r = engine.evaluate([Position(device: "v", time: 500, lon: 0, lat: 0)])
            XCTAssertEqual(r.late, 1)
            XCTAssertEqual(r.events, [])
        }
    }

    /// A state written without the engine's action mask (an older state file) still expires
    /// the fences whose time its watermark has passed: the visit ends `fence-expired` and the
    /// fence is gone.
    func testAStateWithoutTheEngineMaskStillExpiresFences() throws {
        var fence = Fence.circle(id: "c", lon: 0, lat: 0, radius: 1000)
        fence.expires = 500
        var live = EventEngine()
        XCTAssertTrue(live.add([fence]).results.allSatisfy { $0.error == nil })
        XCTAssertEqual(summary(live.evaluate([Position(device: "a", time: 100, lon: 0, lat: 0)]).events), ["100 a c enter initial"])
        var snapshot = live.snapshot()
        snapshot.watermark = 1000
        snapshot.engineActions = nil
        var restored = EventEngine()
        XCTAssertTrue(restored.add([fence]).results.allSatisfy { $0.error == nil })
        let (dropped, events) = try restored.restoreReportingChanges(snapshot)
        XCTAssertEqual(dropped, 0)
        XCTAssertEqual(summary(events), ["500 a c exit fence-expired 400s"])
        XCTAssertEqual(restored.store.count, 0)
        XCTAssertEqual(restored.status(device: "a", fence: "c"), .outside)
    }
}
