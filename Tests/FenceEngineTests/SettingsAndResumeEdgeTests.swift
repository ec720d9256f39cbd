@testable import FenceEngine
import XCTest

/// Event paths the coverage audit found no test executing: a status left undetermined by
/// hysteresis after hysteresis is turned off, a stream resumed from a checkpoint whose clock is
/// not finite, and an asynchronous source of fixes that fails.
final class SettingsAndResumeEdgeTests: XCTestCase {
    /// 950 m east of the centre of a 1,000 m circle: inside by 50 m, within a 100 m margin.
    static let band = Position(device: "", time: 0, lon: 950 / 111_319.49, lat: 0)

    func fix(_ device: String, _ time: Double, _ lon: Double, _ lat: Double = 0) -> Position {
        Position(device: device, time: time, lon: lon, lat: lat)
    }

    /// A first fix within the margin leaves the status unknown (no event). Once the margin is
    /// turned off, the next fix settles it as a first fix would: inside is `enter` with
    /// `initial` (the device was never seen outside), outside is no event (it was never
    /// inside), and a visit begun so goes on to dwell and exit. Both through the engine's
    /// one-pair fast path and its general path (a second fence far away held by the device).
    func testUndeterminedStatusIsSettledOnceHysteresisIsOff() throws {
        for crowded in [false, true] {
            var settings = EventSettings()
            settings.hysteresisMargin = 100
            settings.dwell = 600
            var engine = try EventEngine(settings: settings)
            var fences: [Fence] = [.circle(id: "c", lon: 0, lat: 0, radius: 1000)]
            if crowded { fences.append(.circle(id: "big", lon: 0, lat: 0, radius: 50_000)) }
            XCTAssertTrue(engine.add(fences).results.allSatisfy { $0.error == nil })
            let lon = Self.band.lon
            var events = engine.evaluate([fix("in", 0, lon), fix("out", 0, lon)]).events
            XCTAssertEqual(summary(events), crowded ? ["0 in big enter initial", "0 out big enter initial"] : [], "crowded \(crowded)")
            XCTAssertEqual(engine.status(device: "in", fence: "c"), .unknown)
            XCTAssertEqual(try engine.updateSettings { $0.hysteresisMargin = 0 }, [])
            events = engine.evaluate([fix("in", 10, lon), fix("out", 10, 0.02)]).events
            events += engine.evaluate([fix("in", 700, lon), fix("out", 700, 0.005)]).events
            events += engine.evaluate([fix("in", 800, 0.02), fix("out", 800, 0.02)]).events
            XCTAssertEqual(
                summary(events.filter { $0.fence == "c" }),
                ["10 in c enter initial", "700 in c dwell 690s", "700 out c enter", "800 in c exit 790s", "800 out c exit 100s"],
                "crowded \(crowded)")
        }
    }

    /// A stream resumed from `Held` whose clock is infinite or NaN (a hand-made checkpoint)
    /// takes it as no clock yet: later fixes are applied, not all counted late; a finite clock
    /// is kept (a fix before its horizon is late).
    func testResumedClockThatIsNotFiniteIsNone() {
        var store = FenceStore()
        _ = store.add([.circle(id: "c", lon: 0, lat: 0, radius: 1000)])
        for (seen, horizon) in [(Double.infinity, Double.nan), (.nan, .infinity), (-.infinity, -.infinity)] {
            var stream = EventStream(
                engine: EventEngine(store: store), lateness: 5, resuming: EventStream.Held(fixes: [], latestSeen: seen, horizon: horizon))
            var events = stream.push(fix("v", 100, 0))
            events += stream.flush()
            XCTAssertEqual(summary(events), ["100 v c enter initial"], "\(seen) \(horizon)")
            XCTAssertEqual(stream.late, 0)
        }
        var kept = EventStream(
            engine: EventEngine(store: store), lateness: 5, resuming: EventStream.Held(fixes: [fix("v", 100, 0)], latestSeen: 110, horizon: 105))
        var events = kept.push(fix("v", 104, 0))
        events += kept.flush()
        XCTAssertEqual(kept.late, 1)
        XCTAssertEqual(summary(events), ["100 v c enter initial"])
    }

    struct SourceFailed: Error, Equatable {}

    /// When the fixes' asynchronous source throws, the events of the fixes it gave before come
    /// first, then the stream ends with that error (no flush: the held fixes are not applied).
    func testFailingSourceEndsTheEventsWithItsError() async {
        var store = FenceStore()
        _ = store.add([.circle(id: "c", lon: 0, lat: 0, radius: 1000)])
        let source = AsyncThrowingStream<Position, Error> { c in
            c.yield(fix("v", 0, 0))
            c.yield(fix("v", 10, 0.02))
            c.yield(fix("w", 12, 0))
            c.finish(throwing: SourceFailed())
        }
        var events: [FenceEvent] = []
        do {
            for try await e in EventStream.events(from: source, engine: EventEngine(store: store), lateness: 5) { events.append(e) }
            XCTFail("the stream ended without the source's error")
        } catch {
            XCTAssertEqual(error as? SourceFailed, SourceFailed())
        }
        // The fix at 12 moved the horizon to 7: the enter at 0 is out; the exit at 10 and w's
        // enter at 12 are held when the source fails.
        XCTAssertEqual(summary(events), ["0 v c enter initial"])
    }
}
