@testable import FenceEngine
import XCTest

/// Device-state eviction (`EventSettings.idleEviction`): memory stays bounded over a changing
/// fleet, and how the input is cut into batches does not change the events.
final class IdleEvictionTests: XCTestCase {
    let square: [LonLat] = [(0.0, 0.0), (1, 0), (1, 1), (0, 1), (0, 0)].map { LonLat(lon: $0.0, lat: $0.1) }

    func engine(idle: Double, exitDelay: Double = 0, fences: [Fence]? = nil) -> EventEngine {
        var settings = EventSettings()
        settings.idleEviction = idle
        settings.exitDelay = exitDelay
        settings.dwell = 60
        var e = try! EventEngine(settings: settings)
        let (results, _) = e.add(fences ?? [.polygon(id: "sq", exterior: square)])
        XCTAssertTrue(results.allSatisfy { $0.error == nil })
        return e
    }

    /// The events of `fixes` evaluated `batch` at a time, in order, on `engine`.
    static func evaluate(_ fixes: [Position], inBatchesOf batch: Int, on engine: inout EventEngine) -> [FenceEvent] {
        stride(from: 0, to: fixes.count, by: batch).flatMap { k in
            engine.evaluate(Array(fixes[k..<min(fixes.count, k + batch)])).events
        }
    }

    func testIdleDeviceInsideIsForgottenWithExitAndComesBackAsNew() {
        var e = engine(idle: 100)
        var r = e.evaluate([Position(device: "a", time: 0, lon: 0.5, lat: 0.5), Position(device: "b", time: 50, lon: 5, lat: 5)])
        XCTAssertEqual(summary(r.events), ["0 a sq enter initial"])
        XCTAssertEqual(e.deviceCount, 2)
        // The watermark passes a's last fix + 100: a goes, its visit ends at 100.
        r = e.evaluate([Position(device: "b", time: 150, lon: 5, lat: 5)])
        XCTAssertEqual(summary(r.events), ["100 a sq exit device-idle 0s"])
        XCTAssertEqual(e.deviceCount, 1)
        XCTAssertEqual(e.status(device: "a", fence: "sq"), .unknown)
        // Back: a first fix again.
        r = e.evaluate([Position(device: "a", time: 200, lon: 0.5, lat: 0.5)])
        XCTAssertEqual(summary(r.events), ["200 a sq enter initial"])
        // A fix for a device without state, older than what eviction already judged, is late.
        r = e.evaluate([Position(device: "c", time: 10, lon: 0.5, lat: 0.5)])
        XCTAssertEqual(r.late, 1)
        XCTAssertEqual(r.events, [])
    }

    /// Evicted devices are left in their partition (dormant) until they are a quarter of it:
    /// meanwhile they are absent to every reader, and one that sends again is a new device.
    func testDormantDevicesAreAbsentAndComeBackAsNew() {
        var e = engine(idle: 100)
        let n = 2_000
        _ = e.evaluate((0..<n).map { Position(device: "d\($0)", time: 0, lon: 0.5, lat: 0.5) })
        // At 90 and 150 all but the first 100 send again: those 100 are evicted, their exits at 100.
        _ = e.evaluate((100..<n).map { Position(device: "d\($0)", time: 90, lon: 0.5, lat: 0.5) })
        let r = e.evaluate((100..<n).map { Position(device: "d\($0)", time: 150, lon: 0.5, lat: 0.5) })
        XCTAssertEqual(r.events.filter { $0.kind == .exit && $0.reason == .deviceIdle }.count, 100)
        XCTAssertGreaterThan(e.partitions.reduce(0) { $0 + $1.dormantCount }, 0, "left in place, not dropped")
        XCTAssertEqual(e.deviceCount, n - 100)
        XCTAssertEqual(e.snapshot().devices.count, n - 100)
        XCTAssertFalse(e.snapshot().devices.contains { $0.id == "d7" })
        XCTAssertEqual(e.status(device: "d7", fence: "sq"), .unknown)
        XCTAssertEqual(e.fences(insideOf: "d7"), [])
        // d7 comes back as a first fix, as n0 (never seen) does.
        let back = e.evaluate([Position(device: "d7", time: 200, lon: 0.5, lat: 0.5), Position(device: "n0", time: 200, lon: 0.5, lat: 0.5)])
        XCTAssertEqual(summary(back.events), ["200 d7 sq enter initial", "200 n0 sq enter initial"])
        XCTAssertEqual(back.late, 0)
        XCTAssertEqual(e.deviceCount, n - 100 + 2)
        XCTAssertTrue(e.snapshot().devices.contains { $0.id == "d7" })
        XCTAssertEqual(e.fences(insideOf: "d7"), ["sq"])
        // Everyone else idle: far more than a quarter of each partition, all dropped.
        _ = e.evaluate([Position(device: "d7", time: 400, lon: 0.5, lat: 0.5), Position(device: "n0", time: 400, lon: 0.5, lat: 0.5)])
        XCTAssertEqual(e.deviceCount, 2)
        XCTAssertEqual(e.partitions.reduce(0) { $0 + $1.states.count }, 2, "dropped, not left dormant")
        XCTAssertEqual(e.partitions.reduce(0) { $0 + $1.dormantCount }, 0)
        // Turning eviction off drops what is dormant at once (nothing would drop it later).
        var f = engine(idle: 100)
        _ = f.evaluate((0..<n).map { Position(device: "d\($0)", time: 0, lon: 0.5, lat: 0.5) })
        _ = f.evaluate((100..<n).map { Position(device: "d\($0)", time: 90, lon: 0.5, lat: 0.5) })
        _ = f.evaluate((100..<n).map { Position(device: "d\($0)", time: 150, lon: 0.5, lat: 0.5) })
        XCTAssertGreaterThan(f.partitions.reduce(0) { $0 + $1.dormantCount }, 0)
        XCTAssertNoThrow(try f.updateSettings { $0.idleEviction = 0 })
        XCTAssertEqual(f.partitions.reduce(0) { $0 + $1.dormantCount }, 0)
        XCTAssertEqual(f.partitions.reduce(0) { $0 + $1.states.count }, n - 100)
        XCTAssertEqual(f.deviceCount, n - 100)
    }

    /// A gap of exactly the eviction time (whole-second data): the visit ends at the next fix's
    /// own time, and that fix enters again. The exit is written first: by kind alone the
    /// re-enter came first, and a reader replaying the output ended outside (a library audit).
    func testAGapOfExactlyTheEvictionTimeExitsBeforeTheReEnter() {
        let fixes = [Position(device: "b", time: 1_700_000_000, lon: 0.5, lat: 0.5), Position(device: "b", time: 1_700_000_100, lon: 0.5, lat: 0.5)]
        var one = engine(idle: 100)
        let expected = ["1700000000 b sq enter initial", "1700000100 b sq exit device-idle 0s", "1700000100 b sq enter initial"]
        XCTAssertEqual(summary(one.evaluate(fixes).events), expected)
        XCTAssertEqual(one.status(device: "b", fence: "sq"), .inside)
        var two = engine(idle: 100)
        XCTAssertEqual(summary(two.evaluate([fixes[0]]).events + two.evaluate([fixes[1]]).events), expected)
        // Sorted again from the reverse order (a list not in time order takes the other sort).
        var three = engine(idle: 100)
        XCTAssertEqual(summary(EventEngine.sorted(Array(three.evaluate(fixes).events.reversed()))), expected)
        // An exit timed at the device's last fix (a removal) keeps the kind order: it came
        // after what that fix caused (a review of the first version, which put it first).
        var four = engine(idle: 100)
        let entered = four.evaluate([fixes[0]]).events
        let removed = four.remove(id: "sq")
        XCTAssertEqual(
            summary(EventEngine.sorted(removed + entered)), ["1700000000 b sq enter initial", "1700000000 b sq exit fence-removed 0s"])
    }

    func testGapWithinOneBatchEndsTheVisitAsTwoBatchesWould() {
        let fixes = [
            Position(device: "a", time: 0, lon: 0.5, lat: 0.5), Position(device: "a", time: 70, lon: 0.5, lat: 0.6),
            Position(device: "b", time: 150, lon: 5, lat: 5), Position(device: "a", time: 400, lon: 0.5, lat: 0.5),
        ]
        var one = engine(idle: 100)
        let whole = one.evaluate(fixes).events
        XCTAssertEqual(summary(whole), ["0 a sq enter initial", "70 a sq dwell 70s", "170 a sq exit device-idle 70s", "400 a sq enter initial"])
        var two = engine(idle: 100)
        let split = two.evaluate(Array(fixes[..<3])).events + two.evaluate(Array(fixes[3...])).events
        XCTAssertEqual(split, whole)
    }

    func testPendingExitResolvesBeforeEviction() {
        // Exit delay 300 > idle 100: eviction waits for the delay.
        var e = engine(idle: 100, exitDelay: 300)
        _ = e.evaluate([Position(device: "a", time: 0, lon: 0.5, lat: 0.5), Position(device: "a", time: 10, lon: 3, lat: 3)])
        var r = e.evaluate([Position(device: "b", time: 250, lon: 5, lat: 5)])
        XCTAssertEqual(r.events, [])
        XCTAssertEqual(e.deviceCount, 2)
        r = e.evaluate([Position(device: "b", time: 320, lon: 5, lat: 5)])
        XCTAssertEqual(summary(r.events), ["310 a sq exit device-idle 10s"])
        XCTAssertEqual(e.deviceCount, 1)
    }

    /// Whichever comes first in event time ends the visit: the fence's expiry or the device's
    /// idle time. The idle exit won when a fix found the device idle after the expiry, and the
    /// expiry won at a batch's end when the device was idle before it, so the batch size
    /// changed the outcome (independent audit).
    func testExpiryAndIdlenessEndAVisitInTheirTimeOrder() {
        var expiring = Fence.polygon(id: "sq", exterior: square)
        expiring.expires = 50
        func run(_ idle: Double, _ fixes: [(String, Double)], batch: Int) -> [String] {
            var e = engine(idle: idle, fences: [expiring])
            let positions = fixes.map { Position(device: $0.0, time: $0.1, lon: $0.0 == "a" ? 0.5 : 5, lat: 0.5) }
            return summary(Self.evaluate(positions, inBatchesOf: batch, on: &e))
        }
        for batch in [1, 2, 3] {
            // Expiry at 50 before the idle time 70: fence-expired, whether a fix or the batch's
            // end finds the device idle.
            XCTAssertEqual(run(60, [("a", 10), ("a", 160)], batch: batch), ["10 a sq enter initial", "50 a sq exit fence-expired 40s"], "batch \(batch)")
            XCTAssertEqual(run(60, [("a", 10), ("b", 70), ("a", 160)], batch: batch), ["10 a sq enter initial", "50 a sq exit fence-expired 40s"], "batch \(batch)")
            // Idle at 40 before the expiry at 50: device-idle.
            XCTAssertEqual(run(30, [("a", 10), ("b", 100)], batch: batch), ["10 a sq enter initial", "40 a sq exit device-idle 0s"], "batch \(batch)")
            XCTAssertEqual(run(30, [("a", 10), ("a", 45)], batch: batch), ["10 a sq enter initial", "40 a sq exit device-idle 0s", "45 a sq enter initial"], "batch \(batch)")
        }
    }

    /// A device whose next fix is written exactly the eviction time after its last, where the
    /// sum rounds an ulp past that fix (near 2^30 s, 2004-01-10): a batch's end that finds the
    /// device idle times the exit no later than itself, as the fix does, so the events do not
    /// depend on where the batches end (an independent audit: the batch's end timed it at the
    /// sum, after the re-enter, a written millisecond later for sub-millisecond times, and
    /// after an expiry one ulp past the fix, which then won).
    func testAnIdleExitIsNotTimedPastTheClockThatFoundIt() {
        let last = 1_073_741_524.011
        XCTAssertGreaterThan(last + 300, 1_073_741_824.011, "the sum rounds past the fix")
        func run(_ fixes: [(String, Double)], expires: Double? = nil, batch: Int) -> [FenceEvent] {
            var fence = Fence.circle(id: "z", lon: 10, lat: 50, radius: 500)
            fence.expires = expires
            var e = engine(idle: 300, fences: [fence])
            let positions = fixes.map { Position(device: $0.0, time: $0.1, lon: $0.0 == "a" ? 10 : 11, lat: 50) }
            return Self.evaluate(positions, inBatchesOf: batch, on: &e)
        }
        let cases: [(name: String, fixes: [(String, Double)], expires: Double?, expected: [String])] = [
            (
                "whole milliseconds", [("a", last), ("b", 1_073_741_824.011), ("a", 1_073_741_824.011)], nil,
                ["1073741524 a z enter initial", "1073741824 a z exit device-idle 0s", "1073741824 a z enter initial"]
            ),
            (
                "sub-millisecond", [("a", 1_073_741_524.0015), ("b", 1_073_741_824.0015), ("a", 1_073_741_824.0015)], nil,
                ["1073741524 a z enter initial", "1073741824 a z exit device-idle 0s", "1073741824 a z enter initial"]
            ),
            (
                "an expiry an ulp after the fix",
                [("a", last), ("b", 1_073_741_824.011), ("a", 1_073_741_824.011), ("b", 1_073_741_900)], last + 300,
                [
                    "1073741524 a z enter initial", "1073741824 a z exit device-idle 0s", "1073741824 a z enter initial",
                    "1073741824 a z exit fence-expired 0s",
                ]
            ),
        ]
        // A batch ending on another device's fix at the sum, the device sending no more: the
        // exit is timed at that fix (an ulp before the sum one batch times it at), written the
        // same (the edge left: see `endIdleVisits`).
        let quiet: [(String, Double)] = [("a", last), ("b", 1_073_741_824.011), ("c", 1_073_741_900)]
        let quietWhole = run(quiet, batch: 3)
        XCTAssertEqual(summary(quietWhole), ["1073741524 a z enter initial", "1073741824 a z exit device-idle 0s"])
        for batch in 1...2 {
            let split = run(quiet, batch: batch)
            XCTAssertEqual(summary(split), summary(quietWhole), "another device's clock, batches of \(batch)")
            XCTAssertEqual(split.map { FenceEvent.outputMillisecond($0.time) }, quietWhole.map { FenceEvent.outputMillisecond($0.time) })
        }
        for c in cases {
            let whole = run(c.fixes, expires: c.expires, batch: c.fixes.count)
            XCTAssertEqual(summary(whole), c.expected, c.name)
            for batch in 1..<c.fixes.count {
                let split = run(c.fixes, expires: c.expires, batch: batch)
                XCTAssertEqual(split, whole, "\(c.name), batches of \(batch)")
                // As written: the same milliseconds, in the same order.
                XCTAssertEqual(split.map { FenceEvent.outputMillisecond($0.time) }, whole.map { FenceEvent.outputMillisecond($0.time) })
            }
        }
    }

    /// A fleet whose devices come and go: held devices stay bounded, and events equal those of
    /// one batch over the whole input, for several batch sizes and seeds; a third of the fences
    /// expire while devices are inside them, some of those devices idle.
    func testBoundedMemoryAndBatchInvarianceOverAChangingFleet() {
        for seed in 1...3 as ClosedRange<UInt64> {
            var rng = TestRandom(mixing: seed)
            var fences: [Fence] = []
            for i in 0..<40 {
                let lon = rng.uniform(0, 2)
                let lat = rng.uniform(0, 2)
                var fence = Fence.circle(id: "c\(i)", lon: lon, lat: lat, radius: rng.uniform(2_000, 20_000))
                if i % 3 == 0 { fence.expires = rng.uniform(100, 3_000).rounded() }
                fences.append(fence)
            }
            // 1,500 devices, each active for a short while at its own start time.
            var fixes: [Position] = []
            for d in 0..<1500 {
                let start = Double(d) * 2
                var lon = rng.uniform(0, 2)
                var lat = rng.uniform(0, 2)
                for k in 0..<Int(rng.uniform(1, 8)) {
                    fixes.append(Position(device: "d\(d)", time: start + Double(k) * rng.uniform(5, 40), lon: lon, lat: lat))
                    lon += rng.uniform(-0.02, 0.02)
                    lat += rng.uniform(-0.02, 0.02)
                }
            }
            fixes.sort { $0.time < $1.time }
            var whole = engine(idle: 120, fences: fences)
            let expected = whole.evaluate(fixes).events
            XCTAssertTrue(expected.contains { $0.reason == .deviceIdle }, "seed \(seed): no idle exits to check")
            XCTAssertTrue(expected.contains { $0.reason == .fenceExpired }, "seed \(seed): no expiry exits to check")
            for batch in [23, 400] {
                var e = engine(idle: 120, fences: fences)
                var events: [FenceEvent] = []
                var most = 0
                var k = 0
                while k < fixes.count {
                    let r = e.evaluate(Array(fixes[k..<min(fixes.count, k + batch)]), threads: 2)
                    XCTAssertEqual(r.late, 0)
                    events += r.events
                    most = max(most, e.deviceCount)
                    k += batch
                }
                XCTAssertEqual(events.sorted(), expected.sorted(), "seed \(seed), batch \(batch)")
                // Devices start 2 s apart and live under 5 minutes, then 120 s idle: a few
                // hundred at most, not 1,500.
                XCTAssertLessThan(most, 400 + batch, "seed \(seed), batch \(batch)")
            }
        }
    }
}
