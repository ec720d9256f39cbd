@testable import FenceEngine
import XCTest

/// The shortcuts that keep a small batch among many devices from costing O(devices): a batch
/// whose fences expire visits only the devices that may hold them (`EndingFences`), a fix
/// that no expiry touches keeps the fast path (`applyCommon`), and a partition's few fixes are
/// sorted instead of indexed by device. Each gives what the long way gives.
final class BatchEndShortcutTests: XCTestCase {
    let square: [LonLat] = [(0.0, 0.0), (1, 0), (1, 1), (0, 1), (0, 0)].map { LonLat(lon: $0.0, lat: $0.1) }

    func engine(_ fences: [Fence], settings: EventSettings = EventSettings()) -> EventEngine {
        var e = try! EventEngine(settings: settings)
        XCTAssertTrue(e.add(fences).results.allSatisfy { $0.error == nil })
        return e
    }

    /// A visit made in the same batch whose end expires its fence, in a partition where no
    /// device held that fence when the batch began: only the partition's own log says so.
    func testAVisitMadeInTheBatchThatExpiresItsFenceEnds() {
        var fence = Fence.polygon(id: "sq", exterior: square)
        fence.expires = 100
        var e = engine([fence])
        let r = e.evaluate([Position(device: "a", time: 50, lon: 0.5, lat: 0.5), Position(device: "b", time: 150, lon: 5, lat: 5)])
        XCTAssertEqual(summary(r.events), ["50 a sq enter initial", "100 a sq exit fence-expired 50s"])
        XCTAssertEqual(e.fences(insideOf: "a"), [])
        XCTAssertTrue(e.pairCountsAreExact)
    }

    /// Fixes after an expiry, in the batch that passes it: a device inside the expired fence
    /// exits at the expiry and does not stay (its fix inside the old shape is no visit), one
    /// that was inside and is now outside everything exits at the expiry, not at its fix, and a
    /// device outside does not enter it; a device inside another fence, not expiring, dwells
    /// as before. The fast path would take each of the first three.
    func testFixesPastAnExpiryDoNotTakeTheFastPathThroughIt() {
        var expiring = Fence.polygon(id: "sq", exterior: square)
        expiring.expires = 100
        let other = Fence.circle(id: "c", lon: 10, lat: 10, radius: 5_000)
        var settings = EventSettings()
        settings.dwell = 30
        var e = engine([expiring, other], settings: settings)
        _ = e.evaluate([
            Position(device: "in", time: 10, lon: 0.5, lat: 0.5), Position(device: "o", time: 10, lon: 10, lat: 10),
            Position(device: "left", time: 20, lon: 0.5, lat: 0.5),
        ])
        let r = e.evaluate([
            Position(device: "in", time: 120, lon: 0.5, lat: 0.5), Position(device: "out", time: 120, lon: 0.4, lat: 0.4),
            Position(device: "o", time: 120, lon: 10, lat: 10), Position(device: "left", time: 120, lon: 5, lat: 5),
        ])
        XCTAssertEqual(summary(r.events), ["100 in sq exit fence-expired 90s", "100 left sq exit fence-expired 80s", "120 o c dwell 110s"])
        XCTAssertEqual(e.fences(insideOf: "left"), [])
        XCTAssertEqual(e.fences(insideOf: "in"), [])
        XCTAssertEqual(e.fences(insideOf: "out"), [])
        XCTAssertEqual(e.fences(insideOf: "o"), ["c"])
    }

    /// Many devices among fences that expire throughout, fed in small batches (mostly each
    /// partition's few fixes sorted): the events, in time order, equal those of one batch over
    /// the input, for several seeds; the pair counts stay exact.
    func testExpiriesThroughoutGiveTheEventsOfOneBatch() {
        for seed in 1...3 as ClosedRange<UInt64> {
            var rng = TestRandom(mixing: seed)
            var fences: [Fence] = []
            for i in 0..<60 {
                var f = Fence.circle(id: "c\(i)", lon: rng.uniform(0, 1), lat: rng.uniform(0, 1), radius: rng.uniform(3_000, 15_000))
                if i % 2 == 0 { f.expires = rng.uniform(0, 2_000).rounded() }
                fences.append(f)
            }
            var walks = (0..<3_000).map { _ in (lon: rng.uniform(0, 1), lat: rng.uniform(0, 1)) }
            var fixes: [Position] = []
            var t = 0.0
            for _ in 0..<6_000 {
                t += rng.uniform(0, 0.3)
                let d = rng.int(0...(walks.count - 1))
                walks[d].lon += rng.uniform(-0.01, 0.01)
                walks[d].lat += rng.uniform(-0.01, 0.01)
                fixes.append(Position(device: "d\(d)", time: t.rounded(), lon: walks[d].lon, lat: walks[d].lat))
            }
            var one = engine(fences)
            let expected = one.evaluate(fixes).events
            XCTAssertGreaterThan(expected.filter { $0.reason == .fenceExpired }.count, 50, "seed \(seed): too few expiries to check")
            for sizes in [1...3, 1...40] {
                var e = engine(fences)
                var events: [FenceEvent] = []
                var k = 0
                while k < fixes.count {
                    let n = rng.int(sizes)
                    events += e.evaluate(Array(fixes[k..<min(fixes.count, k + n)]), threads: 2).events
                    k += n
                }
                let a = events.sorted(), b = expected.sorted()
                XCTAssertEqual(a.count, b.count, "seed \(seed), batches of \(sizes)")
                if let i = a.indices.first(where: { $0 < b.count && a[$0] != b[$0] }) { XCTFail("seed \(seed) \(sizes): \(a[i]) vs \(b[i])") }
                XCTAssertTrue(e.pairCountsAreExact, "seed \(seed)")
            }
        }
    }

    /// A partition's few fixes among many devices are sorted (device, time, input order): out
    /// of order, duplicated and tied fixes give what they give in a partition of few devices,
    /// where the batch is indexed by device.
    func testAFewFixesAmongManyDevicesApplyAsAmongFew() {
        var rng = TestRandom(mixing: 7)
        let fences: [Fence] = (0..<20).map { .circle(id: "c\($0)", lon: rng.uniform(0, 0.2), lat: rng.uniform(0, 0.2), radius: 4_000) }
        var batch: [Position] = []
        for d in 0..<6 {
            for _ in 0..<5 {
                let time = Double(rng.int(100...110))
                batch.append(Position(device: "x\(d)", time: time, lon: rng.uniform(0, 0.2), lat: rng.uniform(0, 0.2)))
                if rng.chance(0.3) { batch.append(batch[batch.count - 1]) }
            }
        }
        batch.shuffle(using: &rng)
        var few = engine(fences)
        var many = engine(fences)
        // 60,000 other devices, far away: every partition holds hundreds.
        _ = many.evaluate((0..<60_000).map { Position(device: "far\($0)", time: 1, lon: 50, lat: 50) })
        XCTAssertGreaterThan(many.partitions.map(\.states.count).min()!, 16 * batch.count)
        let expected = few.evaluate(batch)
        let got = many.evaluate(batch)
        XCTAssertEqual(got.events, expected.events)
        XCTAssertEqual(got.duplicates, expected.duplicates)
        XCTAssertGreaterThan(expected.duplicates, 0)
        XCTAssertEqual(got.late, expected.late)
        XCTAssertGreaterThan(expected.events.count, 5)
        for d in 0..<6 { XCTAssertEqual(many.fences(insideOf: "x\(d)"), few.fences(insideOf: "x\(d)")) }
    }
}
