@testable import FenceEngine
import XCTest

/// Idle eviction finds the devices that may be idle through each partition's `IdleQueue`
/// instead of scanning every device at every batch's end. The oracle is what that scan left:
/// after each batch no device held is idle, and the devices held are those an independent
/// count of the input says (every device sent to, less those idle at a batch's end while
/// eviction was on).
final class IdleQueueTests: XCTestCase {
    let square: [LonLat] = [(0.0, 0.0), (1, 0), (1, 1), (0, 1), (0, 0)].map { LonLat(lon: $0.0, lat: $0.1) }

    func engine(idle: Double) -> EventEngine {
        var settings = EventSettings()
        settings.idleEviction = idle
        var e = try! EventEngine(settings: settings)
        XCTAssertTrue(e.add([.polygon(id: "sq", exterior: square)]).0.allSatisfy { $0.error == nil })
        return e
    }

    /// Every device held and not dormant has exactly one entry in its partition's queue (those
    /// not yet covered none), at or before its last fix; no dormant device has one.
    func assertQueuesHold(_ e: EventEngine, _ context: String, file: StaticString = #filePath, line: UInt = #line) {
        for (p, partition) in e.partitions.enumerated() {
            var entries = [Int](repeating: 0, count: partition.states.count)
            for entry in partition.idle.heap.entries {
                let d = Int(entry.id)
                guard d < partition.states.count else {
                    return XCTFail("\(context): partition \(p) has an entry for device \(d) of \(partition.states.count)", file: file, line: line)
                }
                entries[d] += 1
                XCTAssertLessThanOrEqual(entry.time, partition.states[d].lastTime, "\(context): an entry after its device's last fix", file: file, line: line)
            }
            for d in partition.states.indices {
                let expected = partition.isDormant(d) || d >= partition.idle.covered ? 0 : 1
                if entries[d] != expected {
                    return XCTFail("\(context): partition \(p) device \(d) has \(entries[d]) entries, not \(expected)", file: file, line: line)
                }
            }
        }
    }

    /// A churning fleet in batches of 1-200 fixes (and a few of 9,000, cut into pieces by a
    /// match budget of 1): devices drawn from a window sliding over 4,000 ids, a twentieth from
    /// anywhere behind it (evicted devices coming back), with the eviction time changed, and
    /// turned off and on again, between batches. After each batch: no device held is idle, the
    /// devices held are the independent count's, and every queue is as `assertQueuesHold` says.
    func testEveryIdleDeviceGoesAndNoOtherAfterEachBatch() {
        for seed in 1...4 as ClosedRange<UInt64> {
            var rng = TestRandom(mixing: seed)
            var e = engine(idle: 100)
            var after = 100.0
            var held: [String: Double] = [:]
            var t = 1_700_000_000.0
            var evicted = 0
            var gone: Set<String> = []
            var back = 0
            var batches = 0
            var k = 0
            while k < 40_000 {
                let size = batches % 150 == 75 ? 9_000 : rng.int(1...200)
                var fixes: [Position] = []
                for _ in 0..<size {
                    t += rng.uniform(0, 0.3)
                    let window = k / 12
                    let d = rng.chance(0.05) ? rng.int(0...window) : window + rng.int(0...300)
                    fixes.append(Position(device: "d\(d)", time: t, lon: rng.uniform(0, 2), lat: rng.uniform(0, 2)))
                    k += 1
                }
                let r = e.evaluate(fixes, threads: 2, matchBudget: size > 8_192 ? 1 : 1 << 24)
                batches += 1
                XCTAssertEqual(r.late, 0, "seed \(seed)")
                for f in fixes {
                    if gone.remove(f.device) != nil { back += 1 }
                    held[f.device] = f.time
                }
                if after > 0 {
                    for (id, last) in held where EventEngine.hasPassed(from: last, to: t, after) {
                        held[id] = nil
                        gone.insert(id)
                        evicted += 1
                    }
                }
                let context = "seed \(seed), batch \(batches) (\(size) fixes), eviction after \(after) s"
                XCTAssertEqual(e.deviceCount, held.count, context)
                if after > 0 {
                    for partition in e.partitions {
                        for d in partition.states.indices where !partition.isDormant(d) {
                            XCTAssertFalse(EventEngine.hasPassed(from: partition.states[d].lastTime, to: t, after), "\(context): an idle device held")
                        }
                    }
                }
                assertQueuesHold(e, context)
                if batches % 40 == 0 {
                    let next = [100.0, 30, 0, 250, 60][(batches / 40) % 5]
                    XCTAssertNoThrow(try e.updateSettings { $0.idleEviction = next })
                    after = next
                }
            }
            XCTAssertEqual(Set(e.snapshot().devices.map(\.id)), Set(held.keys), "seed \(seed)")
            XCTAssertGreaterThan(evicted, 5_000, "seed \(seed): too few evictions to check")
            XCTAssertGreaterThan(back, 500, "seed \(seed): too few evicted devices back to check")
        }
    }

    /// A batch whose end is short of a device's last fix plus the eviction time by less than
    /// `hasPassed`'s slack evicts it: 0.5 µs short near 2023, and 10 µs short near 2^35 s
    /// (year 3058, where twice a Double's step is 15 µs).
    func testABatchEndWithinTheRoundingSlackEvicts() {
        for (start, short) in [(1_700_000_000.0, 5e-7), (0x1p35, 1e-5)] {
            let end = start + 100 - short
            XCTAssertTrue(EventEngine.hasPassed(from: start, to: end, 100), "the case needs the slack")
            XCTAssertLessThan(end - start, 100, "the case needs the slack")
            var e = engine(idle: 100)
            _ = e.evaluate([Position(device: "a", time: start, lon: 0.5, lat: 0.5)])
            let r = e.evaluate([Position(device: "b", time: end, lon: 5, lat: 5)])
            XCTAssertEqual(summary(r.events).map { $0.split(separator: " ").dropFirst().joined(separator: " ") }, ["a sq exit device-idle 0s"], "from \(start)")
            XCTAssertEqual(e.deviceCount, 1, "from \(start)")
            assertQueuesHold(e, "from \(start)")
        }
    }

    /// A device that reports more often than the eviction time is read about once an eviction
    /// time, not once a batch: 100 devices, each reporting every 10 s, 1,300 s in 2,600
    /// batches of 5 fixes, eviction at 600 s. A scan at each batch's end reads 260,000 states;
    /// the queues give up an entry about twice a device.
    func testADeviceReportingOftenIsReadAboutOnceAnEvictionTime() {
        var e = engine(idle: 600)
        var t = 1_700_000_000.0
        var n = 0
        for _ in 0..<2_600 {
            var fixes: [Position] = []
            for _ in 0..<5 {
                t += 0.1
                fixes.append(Position(device: "d\(n % 100)", time: t, lon: 0.5, lat: 0.5))
                n += 1
            }
            XCTAssertEqual(e.evaluate(fixes).events.filter { $0.kind == .exit }, [])
        }
        XCTAssertEqual(e.deviceCount, 100)
        XCTAssertEqual(e.partitions.reduce(0) { $0 + $1.idle.count }, 100)
        let popped = e.partitions.reduce(0) { $0 + $1.idle.popped }
        XCTAssertGreaterThanOrEqual(popped, 100, "each device's first entry is 1,300 s old")
        XCTAssertLessThanOrEqual(popped, 300)
        assertQueuesHold(e, "after")
    }
}
