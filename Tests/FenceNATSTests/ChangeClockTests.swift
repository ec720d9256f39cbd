import FenceEngine
import FenceIO
import Foundation
import XCTest

@testable import FenceNATS

/// Fence changes whose effect depends on a partition's clock (its latest fix of any device): a
/// replacement whose expiry that clock has passed. From a review of session 37's change.
final class ChangeClockTests: XCTestCase {
    func engine(_ geoJSON: String) throws -> EventEngine {
        var e = EventEngine()
        let report = try GeoJSONFences.read(Data(geoJSON.utf8))
        XCTAssertTrue(report.errors.isEmpty)
        _ = e.add(report.fences, threads: 1)
        return e
    }

    static func square(group: String, actions: String, expires: Double? = nil) -> String {
        let exp = expires.map { #","expires":\#($0)"# } ?? ""
        return """
            {"type":"FeatureCollection","features":[{"type":"Feature","id":"sq","properties":{"group":"\(group)","actions":"\(actions)"\(exp)},
            "geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1],[0,0]]]}}]}
            """
    }

    /// v's events, as lines "time fence g=group kind reason", in one partition and in two, of
    /// v inside "sq" (group old, mask enter+exit) at 10, a device w of the other partition of
    /// two at 200, the change `change` (GeoJSON) after those, and v at 300 far outside.
    func eventsOfV(change: String) throws -> (one: [String], two: [String]) {
        let v = "v"
        let w = (0..<50).map { "w\($0)" }.first { FNV1a.hash($0.utf8) % 2 != FNV1a.hash(v.utf8) % 2 }!
        let base = try engine(Self.square(group: "old", actions: "enter,exit"))
        let fixes = [
            Position(device: v, time: 10, lon: 0.5, lat: 0.5), Position(device: w, time: 200, lon: 5, lat: 5),
            Position(device: v, time: 300, lon: 9, lat: 9),
        ]
        let simulated = SimulatedStream(fixes, window: 1, changes: [(1, FenceChange(.add(geoJSON: Array(change.utf8))))])
        let changes: [(UInt64, FenceChange)] = simulated.items.compactMap {
            if case .change(let c) = $0.item { return ($0.sequence, c) } else { return nil }
        }
        var byPartitioning: [[String]] = []
        for n in [1, 2] {
            var all: [FenceEvent] = []
            for p in 0..<n {
                var d = Driver(stream: PartitionStream(engine: base, lateness: 30, step: 1))
                d.feed(simulated.partition(p, of: n), changes: changes)
                XCTAssertEqual(d.changeErrors, [])
                all += d.releases.flatMap(\.events)
            }
            byPartitioning.append(
                all.sorted().filter { $0.device == v }.map { "\($0.time) \($0.fence) g=\($0.group ?? "-") \($0.kind) \($0.reason?.rawValue ?? "")" })
        }
        return (byPartitioning[0], byPartitioning[1])
    }

    /// Device v is inside "sq" (group old) since 10; device w, in the other partition of two,
    /// has a fix at 200. A change replaces "sq" by the same shape with group "new" (or a mask
    /// without exit) and expires 50; then v's fix at 300 far outside. In one partition the
    /// change finds the clock at 200 and expires the fence at once; in v's partition of two
    /// the clock is 10, the replacement stands, and v's fix at 300 expires it at 50. Both are
    /// worded with the replacement, so v's events are the same in both partitionings (worded
    /// with the old fence at the add, as 08145b8 had it for a while, they were not).
    func testExpiryWordingOfAChangeDoesNotDependOnThePartitioning() throws {
        let regrouped = try eventsOfV(change: Self.square(group: "new", actions: "enter,exit", expires: 50))
        XCTAssertEqual(regrouped.one, ["10.0 sq g=old enter ", "50.0 sq g=new exit fence-expired"])
        XCTAssertEqual(regrouped.two, regrouped.one, "group only: 1 partition vs 2")
        let remasked = try eventsOfV(change: Self.square(group: "old", actions: "enter", expires: 50))
        XCTAssertEqual(remasked.one, ["10.0 sq g=old enter "])
        XCTAssertEqual(remasked.two, remasked.one, "mask without exit: 1 partition vs 2")
    }

    /// A change that reshapes a fence to cover the last fix of a device whose exit waits out
    /// the delay (cancelled), then one that regroups and expires another fence the device is
    /// inside: a restart from a checkpoint after every step, through its bytes, gives the
    /// uninterrupted run's events, groups compared.
    func testResumeAroundACancellingReshapeAndAnExpiredRegroupIsExact() throws {
        func fc(_ id: String, size: Double, group: String, expires: Double? = nil) -> FenceChange {
            let s = size
            let exp = expires.map { #","expires":\#($0)"# } ?? ""
            return FenceChange(.add(geoJSON: Array("""
                {"type":"FeatureCollection","features":[{"type":"Feature","id":"\(id)","properties":{"group":"\(group)"\(exp)},
                "geometry":{"type":"Polygon","coordinates":[[[0,0],[\(s),0],[\(s),\(s)],[0,\(s)],[0,0]]]}}]}
                """.utf8)))
        }
        var settings = EventSettings()
        settings.exitDelay = 100
        settings.dwell = 1_000
        let base = try EventEngine(settings: settings)
        func fix(_ d: String, _ t: Double, _ lon: Double, _ lat: Double = 0.5) -> Position { Position(device: d, time: t, lon: lon, lat: lat) }
        struct Step { var fixes: [Position]? = nil; var change: FenceChange? = nil }
        let steps: [Step] = [
            Step(change: fc("F", size: 1, group: "f1")), Step(change: fc("G", size: 3, group: "g1")),
            Step(fixes: [fix("d", 60, 0.5)]), Step(fixes: [fix("d", 100, 1.5)]), Step(fixes: [fix("a", 130, 9)]),
            Step(change: fc("F", size: 2, group: "f2")),
            Step(fixes: [fix("d", 220, 2.5)]), Step(fixes: [fix("a", 260, 9)]),
            Step(change: fc("G", size: 3, group: "g2", expires: 240)),
            Step(fixes: [fix("d", 330, 2.5)]), Step(fixes: [fix("a", 500, 9)]),
            Step(change: FenceChange(.flush)),
        ]
        func run(_ part: ArraySlice<Step>, _ stream: inout PartitionStream, from first: Int) -> [FenceEvent] {
            var events: [FenceEvent] = []
            var errors: [String] = []
            for (k, step) in zip(first..., part) {
                if let fixes = step.fixes { events += stream.receive(fixes, sequence: UInt64(k + 1)) }
                if let change = step.change { events += stream.apply(change, sequence: UInt64(k + 1), errors: &errors) ?? [] }
            }
            XCTAssertEqual(errors, [])
            return events
        }
        func lines(_ events: [FenceEvent]) -> [String] {
            events.map { "\($0.time) \($0.device) \($0.fence) g=\($0.group ?? "-") \($0.kind) \($0.reason?.rawValue ?? "")" }
        }
        var whole = PartitionStream(engine: base, lateness: 10, step: 10)
        let all = run(steps[...], &whole, from: 0)
        XCTAssertEqual(lines(all), [
            "60.0 d F g=f1 enter ", "60.0 d G g=g1 enter ", "240.0 d G g=g2 exit fence-expired", "330.0 d F g=f2 exit ",
        ])
        for cut in 1..<steps.count {
            var first = PartitionStream(engine: base, lateness: 10, step: 10)
            let before = run(steps[..<cut], &first, from: 0)
            let cp = try PartitionCheckpoint(decoding: first.checkpoint(partition: 0, fingerprint: 1, owner: "t").encoded())
            var fences = base
            var errors: [String] = []
            for (k, step) in steps.enumerated() where UInt64(k + 1) <= cp.lastChangeSequence {
                if let change = step.change { _ = change.apply(to: &fences, errors: &errors) }
            }
            var (resumed, dropped) = try PartitionStream.restored(from: cp, engine: fences, lateness: 10, step: 10)
            XCTAssertEqual(dropped, 0, "cut \(cut)")
            for (k, step) in steps.enumerated() where UInt64(k + 1) >= cp.replayFrom && k < cut {
                if let fixes = step.fixes { _ = resumed.receive(fixes, sequence: UInt64(k + 1)) }
            }
            let after = run(steps[cut...], &resumed, from: cut)
            XCTAssertEqual(lines(before + after), lines(all), "cut \(cut)")
            XCTAssertEqual(resumed.engine.snapshot(fenceRecords: false), whole.engine.snapshot(fenceRecords: false), "cut \(cut)")
        }
    }

    /// The documented exception (README, "fence change"; `FenceChange`'s doc): the replacement
    /// moves "sq" off v's last fix and expires at 50. One partition (clock 200, past the
    /// expiry): `fence-expired` at 50. v's partition of two (clock 10): the replacement stands
    /// and its new shape misses v's last fix: `fence-replaced` at 10. Pinned, so that a change
    /// to either rule shows here.
    func testAnExpiredReshapeGoesByThePartitionsClock() throws {
        let moved = Self.square(group: "old", actions: "enter,exit", expires: 50)
            .replacingOccurrences(of: "[[[0,0],[1,0],[1,1],[0,1],[0,0]]]", with: "[[[3,0],[4,0],[4,1],[3,1],[3,0]]]")
        let events = try eventsOfV(change: moved)
        XCTAssertEqual(events.one, ["10.0 sq g=old enter ", "50.0 sq g=old exit fence-expired"], "1 partition: the clock (200) passed the expiry")
        XCTAssertEqual(events.two, ["10.0 sq g=old enter ", "10.0 sq g=old exit fence-replaced"], "2 partitions: v's clock (10) did not")
    }
}
