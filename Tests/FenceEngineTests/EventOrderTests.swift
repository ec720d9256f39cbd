@testable import FenceEngine
import XCTest

/// The per-partition sort and the final merge against the obvious oracle: every event of every
/// list sorted by `FenceEvent.<`.
final class EventOrderTests: XCTestCase {
    /// Random events with few distinct times (many ties across and within lists), devices and
    /// fences that tie too, and every kind and reason. Half the ids and groups are over 15 bytes
    /// (heap strings, reference counted): a merge that copied instead of moving, or moved
    /// without leaving something in place, would leak or free one twice (`.ci/asan`).
    func randomEvents(_ rng: inout TestRandom, count: Int, times: Int) -> [FenceEvent] {
        let kinds = FenceEventKind.allCases
        let reasons: [FenceEventReason?] = [nil, .fenceRemoved, .fenceExpired, .deviceIdle]
        let devices = (0..<7).map { $0 % 2 == 0 ? "d\($0)" : "device-with-a-long-identifier-\($0)" }
        let fences = (0..<5).map { $0 % 2 == 0 ? "f\($0)" : "fence-with-a-long-identifier-\($0)" }
        let groups: [String?] = [nil, "g", "a-group-name-longer-than-fifteen"]
        return (0..<count).map { _ in
            FenceEvent(
                // Sub-millisecond parts too: the order takes times as written (to the ms).
                time: Double(rng.next() % UInt64(times)) + [0, 0.0001, 0.0004, 0.0006][Int(rng.next() % 4)], device: devices[Int(rng.next() % 7)], fence: fences[Int(rng.next() % 5)],
                group: groups[Int(rng.next() % 3)], kind: kinds[Int(rng.next() % 4)], lon: Double(rng.next() % 3),
                lat: Double(rng.next() % 3), initial: rng.next() % 2 == 0, reason: reasons[Int(rng.next() % 4)])
        }
    }

    func testMergeMatchesSortOfEverything() {
        for seed: UInt64 in 1...6 {
            var rng = TestRandom(mixing: seed)
            // Sizes either side of the parallel cut (65,536 events), empty lists among them.
            let perList = seed % 2 == 0 ? 40 : 4_000
            let times = seed <= 2 ? 3 : 5_000
            var lists: [[FenceEvent]] = []
            for l in 0..<64 {
                let n = l % 9 == 0 ? 0 : Int(rng.next() % UInt64(perList))
                lists.append(EventEngine.sorted(randomEvents(&rng, count: n, times: times)))
            }
            let original = lists.flatMap { $0 }
            let expected = original.sorted()
            // Odd seeds must reach the two-worker merge; even seeds stay under it.
            XCTAssertEqual(expected.count > 65_536, seed % 2 == 1, "seed \(seed): \(expected.count) events")
            // Two workers merge halves of the output; three and eight, more parts.
            for threads in [1, 2, 3, 8] {
                // A copy sharing the lists' storage: the merge must leave `lists` as it was.
                var taken = lists
                let got = EventEngine.mergeSorted(&taken, threads: threads)
                XCTAssertTrue(taken.allSatisfy(\.isEmpty), "seed \(seed): lists not emptied")
                XCTAssertTrue(lists.flatMap { $0 } == original, "seed \(seed): the caller's lists changed")
                let first = (0..<min(got.count, expected.count)).first { got[$0] != expected[$0] }
                XCTAssertTrue(
                    got.count == expected.count && first == nil,
                    "seed \(seed), \(threads) threads: \(got.count) of \(expected.count), first difference at \(first ?? -1)")
            }
        }
    }

    /// `sorted` on a list in time order (only ties sorted) and on one out of order.
    func testSortedMatchesStandardSort() {
        var rng = TestRandom(mixing: 9)
        for times in [1, 4, 1_000] {
            let events = randomEvents(&rng, count: 3_000, times: times)
            XCTAssertEqual(EventEngine.sorted(events), events.sorted(), "out of order, \(times) times")
            let timeOrdered = events.sorted { $0.time < $1.time }
            XCTAssertEqual(EventEngine.sorted(timeOrdered), events.sorted(), "time-ordered, \(times) times")
        }
    }

    /// Events are built, sorted and copied per event: the record stays at 88 bytes (one-byte
    /// fields after the optional time, filling its padding), not the 104 of declaration order.
    /// Output is sorted by the time as written: two devices' events in one millisecond go by
    /// device (found by an outside audit: the unwritten sub-millisecond part decided), and one
    /// device's events with one fence in one millisecond keep the order they happened in.
    func testOrderTakesTimesAsWritten() {
        let square = [(0.0, 0.0), (1, 0), (1, 1), (0, 1), (0, 0)].map { LonLat(lon: $0.0, lat: $0.1) }
        var engine = EventEngine()
        _ = engine.add([.polygon(id: "sq", exterior: square)])
        let r = engine.evaluate([
            Position(device: "a", time: 100.0004, lon: 0.5, lat: 0.5), Position(device: "b", time: 100.0001, lon: 0.5, lat: 0.5),
            Position(device: "c", time: 200.0001, lon: 0.5, lat: 0.5), Position(device: "c", time: 300.0001, lon: 5, lat: 5),
            Position(device: "c", time: 300.0004, lon: 0.5, lat: 0.5),
        ])
        XCTAssertEqual(r.events.map { "\($0.device) \($0.kind)" }, ["a enter", "b enter", "c enter", "c exit", "c enter"])
        let a = FenceEvent(time: 1.0004, device: "a", fence: "f", kind: .enter, lon: 0, lat: 0)
        let b = FenceEvent(time: 1.0001, device: "b", fence: "f", kind: .enter, lon: 0, lat: 0)
        XCTAssertTrue(a < b)
        XCTAssertFalse(b < a)
        XCTAssertTrue(b < FenceEvent(time: 1.0006, device: "a", fence: "f", kind: .enter, lon: 0, lat: 0))
    }

    func testEventRecordSize() {
        XCTAssertEqual(MemoryLayout<FenceEvent>.stride, 88)
    }
}
