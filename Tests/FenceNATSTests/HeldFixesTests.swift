import FenceEngine
import SeededRandom
import XCTest

@testable import FenceNATS

/// `HeldFixes` against the obvious oracle, one list scanned whole at every release (what the
/// partition did before): the same fixes released, in the oracle's arrival order stably
/// sorted by bucket; the same count left and the same oldest sequence, over random arrivals
/// out of order by up to the lateness, limits on and between bucket edges, and +infinity.
final class HeldFixesTests: XCTestCase {
    func testEqualsOneListScannedWhole() {
        for seed in UInt64(1)...40 {
            var rng = SplitMix64(seed: seed &* 31)
            let width = [1.0, 0.25, 5, 60, 0.1][Int(seed % 5)]
            var held = HeldFixes(width: width)
            var oracle: [(fix: Position, sequence: UInt64)] = []
            var latest = 1_700_000_000.0
            for sequence in UInt64(1)...400 {
                for _ in 0..<Int(rng.next() % 6) {
                    latest += Double(rng.next() % 1000) / 1000
                    // Up to 30 s late; a third on whole seconds (ties across devices and
                    // within one).
                    var t = latest - Double(rng.next() % 30_000) / 1000
                    if rng.next() % 3 == 0 { t = t.rounded(.down) }
                    let fix = Position(device: "d\(rng.next() % 7)", time: t, lon: Double(sequence), lat: 0)
                    held.append(fix, sequence: sequence)
                    oracle.append((fix, sequence))
                }
                guard rng.next() % 4 == 0 else { continue }
                var limit = latest - 20 - Double(rng.next() % 10_000) / 1000
                if rng.next() % 3 == 0 { limit = (limit / width).rounded(.down) * width }
                if rng.next() % 25 == 0 { limit = .infinity }
                let got = held.take(before: limit)
                let due = oracle.filter { $0.fix.time < limit }.map(\.fix)
                oracle.removeAll { $0.fix.time < limit }
                let want = due.enumerated().sorted { a, b in
                    let (ka, kb) = (held.bucket(a.element.time), held.bucket(b.element.time))
                    return ka < kb || (ka == kb && a.offset < b.offset)
                }.map(\.element)
                XCTAssertEqual(got, want, "seed \(seed), sequence \(sequence), limit \(limit)")
                XCTAssertEqual(held.count, oracle.count, "seed \(seed)")
                XCTAssertEqual(held.oldestSequence, oracle.map(\.sequence).min(), "seed \(seed)")
            }
        }
    }

    /// What the bucket order changes for the engine: nothing. Released fixes evaluated in
    /// bucket order and in arrival order (the old release) give the same events, counts and
    /// state, release after release, with devices sending equal times (duplicates) and ties
    /// across devices.
    func testBucketOrderGivesTheEventsOfArrivalOrder() throws {
        for seed in UInt64(1)...12 {
            var rng = SplitMix64(seed: seed &* 97)
            var settings = EventSettings()
            settings.dwell = 20
            var fences: [Fence] = []
            for i in 0..<30 { fences.append(.circle(id: "f\(i)", lon: Double(rng.next() % 100) / 1000, lat: Double(rng.next() % 100) / 1000, radius: 800)) }
            var a = try EventEngine(settings: settings)
            _ = a.add(fences, threads: 1)
            var b = a
            var held = HeldFixes(width: [1.0, 3, 10][Int(seed % 3)])
            var arrival: [Position] = []
            var position = (0..<9).map { _ in (Double(rng.next() % 100) / 1000, Double(rng.next() % 100) / 1000) }
            var clock = 1_700_000_000.0
            for sequence in UInt64(1)...300 {
                let d = Int(rng.next() % 9)
                position[d].0 += (Double(rng.next() % 100) - 50) / 20_000
                position[d].1 += (Double(rng.next() % 100) - 50) / 20_000
                clock += Double(rng.next() % 3)
                let t = clock - Double(rng.next() % 8)
                let fix = Position(device: "v\(d)", time: t, lon: position[d].0, lat: position[d].1)
                held.append(fix, sequence: sequence)
                arrival.append(fix)
                guard sequence % 7 == 0 else { continue }
                let limit = sequence % 70 == 0 ? Double.infinity : clock - 10
                let bucketOrder = held.take(before: limit)
                let arrivalOrder = arrival.filter { $0.time < limit }
                arrival.removeAll { $0.time < limit }
                XCTAssertEqual(bucketOrder.count, arrivalOrder.count)
                let ra = a.evaluate(bucketOrder, threads: 1)
                let rb = b.evaluate(arrivalOrder, threads: 1)
                XCTAssertEqual(ra.events, rb.events, "seed \(seed), sequence \(sequence)")
                XCTAssertEqual([ra.late, ra.duplicates, ra.applied], [rb.late, rb.duplicates, rb.applied], "seed \(seed)")
                XCTAssertEqual(a.snapshot(), b.snapshot(), "seed \(seed), sequence \(sequence)")
            }
        }
    }
}
