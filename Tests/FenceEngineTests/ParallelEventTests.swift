@testable import FenceEngine
import XCTest

/// The event paths on many workers, run by `.ci/tsan` under the thread sanitizer with 8
/// threads: the check-and-hash pass, the gather, containment, the per-partition apply (device
/// interning, hysteresis classification, cross detection, expiry) and the two-worker event
/// merge. Every setting must give the same events and the same state on 1, 2 and 8 threads.
final class ParallelEventTests: XCTestCase {
    func fences(_ rng: inout TestRandom) -> [Fence] {
        var fences: [Fence] = []
        for i in 0..<400 {
            let lon = rng.uniform(0, 2)
            let lat = rng.uniform(0, 2)
            var f: Fence =
                i % 3 == 0
                ? .circle(id: "c\(i)", lon: lon, lat: lat, radius: rng.uniform(2000, 15_000))
                : .polygon(id: "p\(i)", exterior: Shapes.star(&rng, lon: lon, lat: lat, radius: 0.12, vertices: 10))
            f.group = "g\(i % 5)"
            if i % 11 == 0 { f.expires = 1_000 + Double(i) }
            if i % 7 == 0 { f.dwell = 60 }
            fences.append(f)
        }
        return fences
    }

    func fixes(_ rng: inout TestRandom, devices: Int, rounds: Int, prefix: String = "dev-") -> [[Position]] {
        var home = (0..<devices).map { _ in (rng.uniform(0, 2), rng.uniform(0, 2)) }
        var batches: [[Position]] = []
        for r in 0..<rounds {
            var batch: [Position] = []
            for d in 0..<devices {
                home[d].0 = min(2, max(0, home[d].0 + rng.uniform(-0.03, 0.03)))
                home[d].1 = min(2, max(0, home[d].1 + rng.uniform(-0.03, 0.03)))
                let accuracy: Double? = d % 4 == 0 ? rng.uniform(0, 50) : nil
                batch.append(Position(device: "\(prefix)\(d)", time: Double(r * 45 + d % 40), lon: home[d].0, lat: home[d].1, accuracy: accuracy))
                if d % 13 == 0 { batch.append(batch[batch.count - 1]) }  // a duplicate
            }
            batch.reverse()  // out of order within the batch: the engine orders each device's fixes
            batches.append(batch)
        }
        return batches
    }

    func run(settings: EventSettings, threads: Int, prefix: String = "dev-") -> (events: [FenceEvent], state: TrackerSnapshot) {
        var rng = TestRandom(mixing: 77)
        var engine = EventEngine(settings: settings)
        _ = engine.add(fences(&rng), threads: threads)
        var events: [FenceEvent] = []
        for (k, batch) in fixes(&rng, devices: 1200, rounds: 6, prefix: prefix).enumerated() {
            events += engine.evaluate(batch, threads: threads).events
            if k == 3 { events += engine.remove(id: "p1") + engine.remove(id: "c3") }
        }
        return (events, engine.snapshot())
    }

    func testEventsAreThreadCountInvariant() {
        var plain = EventSettings()
        plain.dwell = 120
        var hysteresis = plain
        hysteresis.hysteresisMargin = 30
        hysteresis.exitDelay = 60
        var cross = plain
        cross.crossDetection = true
        for (name, settings) in [("plain", plain), ("hysteresis", hysteresis), ("cross", cross)] {
            let reference = run(settings: settings, threads: 1)
            XCTAssertGreaterThan(reference.events.count, 500, name)
            for threads in [2, 8] {
                let other = run(settings: settings, threads: threads)
                XCTAssertEqual(other.events, reference.events, "\(name), \(threads) threads")
                XCTAssertEqual(other.state.encoded(), reference.state.encoded(), "\(name), \(threads) threads")
            }
        }
    }

    /// Ids too long for a string's inline form live on the heap: the batch moves each one from
    /// its fix to the device's state exactly once. Renamed, the events and state match those of
    /// short ids on every thread count.
    func testLongDeviceIdsGiveTheSameEvents() {
        var settings = EventSettings()
        settings.dwell = 120
        let long = "a-device-identifier-well-past-fifteen-bytes-"
        let reference = run(settings: settings, threads: 1)
        for threads in [1, 2, 8] {
            let other = run(settings: settings, threads: threads, prefix: long)
            XCTAssertEqual(other.events.count, reference.events.count, "\(threads) threads")
            let renamed = other.events.map { e -> FenceEvent in
                var e = e
                XCTAssertTrue(e.device.hasPrefix(long), e.device)
                e.device = "dev-" + e.device.dropFirst(long.count)
                return e
            }
            XCTAssertEqual(renamed.sorted(), reference.events.sorted(), "\(threads) threads")
            XCTAssertEqual(Set(other.state.devices.map(\.id)), Set(reference.state.devices.map { long + $0.id.dropFirst(4) }))
        }
    }
}
