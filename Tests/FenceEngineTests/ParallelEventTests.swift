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
        var engine = try! EventEngine(settings: settings)
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

    /// Ids too long for a string's inline form live on the heap; the batch carries them as
    /// bytes (`PartitionedFixes`). Renamed, the events and state match those of short ids on
    /// every thread count.
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

    /// Batches of more than one check chunk (16,384 fixes) whose ids are short, exactly 15 and
    /// 16 bytes, multibyte across that edge, and UUIDs, each fix with its own copy of its id (as
    /// input gives them): the long ids' bytes are placed per chunk and partition, and must come
    /// back as the same devices. Against the same fleet named with short ids, on 1, 2 and 8
    /// threads.
    func testMixedIdLengthsInBatchesOfManyChunks() {
        func longForm(_ d: Int) -> String {
            switch d % 5 {
            case 0: return "d\(d)"
            case 1: return "x" + String(repeating: "0", count: 14 - String(d).count) + "\(d)"  // 15 bytes
            case 2: return "y" + String(repeating: "0", count: 15 - String(d).count) + "\(d)"  // 16 bytes
            case 3: return "車" + String(repeating: "é", count: 5) + "\(d)"  // 13 bytes + digits
            default:
                var rng = TestRandom(mixing: UInt64(d))
                return (0..<4).map { _ in String(UInt64(rng.uniform(0, 65_536)), radix: 16) }.joined(separator: "-") + "-uuid-\(d)"
            }
        }
        var rng = TestRandom(mixing: 91)
        let fenceList = fences(&rng)
        let devices = 36_000
        let batches = fixes(&rng, devices: devices, rounds: 3)
        let names = (0..<devices).map(longForm)
        XCTAssertEqual(Set(names).count, devices)
        XCTAssertTrue(names.contains { $0.utf8.count == 15 } && names.contains { $0.utf8.count == 16 })
        var shortOf: [String: String] = [:]
        for d in 0..<devices { shortOf[names[d]] = "dev-\(d)" }
        let renamed = batches.map { batch in
            batch.map { p -> Position in
                var q = p
                q.device = String(decoding: Array(names[Int(p.device.dropFirst(4))!].utf8), as: UTF8.self)
                return q
            }
        }
        XCTAssertGreaterThan(renamed[0].count, 2 * 16_384)
        func run(_ input: [[Position]], threads: Int) -> (events: [FenceEvent], state: TrackerSnapshot) {
            var settings = EventSettings()
            settings.dwell = 120
            var engine = try! EventEngine(settings: settings)
            _ = engine.add(fenceList, threads: threads)
            var events: [FenceEvent] = []
            for batch in input { events += engine.evaluate(batch, threads: threads).events }
            return (events, engine.snapshot())
        }
        let reference = run(batches, threads: 1)
        XCTAssertGreaterThan(reference.events.count, 1_000)
        for threads in [1, 2, 8] {
            let other = run(renamed, threads: threads)
            let back = other.events.map { e -> FenceEvent in
                var e = e
                e.device = shortOf[e.device] ?? "unknown \(e.device)"
                return e
            }
            XCTAssertEqual(back.sorted(), reference.events.sorted(), "\(threads) threads")
            XCTAssertEqual(other.state.devices.count, devices, "\(threads) threads")
            XCTAssertEqual(Set(other.state.devices.map { shortOf[$0.id] ?? $0.id }), Set(reference.state.devices.map(\.id)))
        }
    }
}
