import FenceEngine
import FenceIO
import Foundation
import XCTest

@testable import FenceNATS

/// A stream as the worker sees it: fix messages (one device's fixes of one window) and fence
/// changes, with stream sequences.
struct SimulatedStream {
    enum Item {
        case fixes(device: String, [Position])
        case change(FenceChange)
    }
    var items: [(sequence: UInt64, item: Item)] = []

    /// Groups time-ordered fixes as `FixPublisher` does (`FixWaves`); a change
    /// goes in after the fix at `changeAt` (an index into `fixes`), then a flush at the end.
    init(_ fixes: [Position], window: Double, changes: [(afterFix: Int, FenceChange)] = [], flush: Bool = true) {
        var seq: UInt64 = 1
        var waves = FixWaves(window: window, maxFixesPerMessage: .max)
        func wave() {
            for m in waves.take() {
                items.append((seq, .fixes(device: m.device, m.fixes)))
                seq += 1
            }
        }
        for (i, f) in fixes.enumerated() {
            if waves.closesWave(before: f) { wave() }
            _ = waves.append(f)
            for (at, change) in changes where at == i {
                wave()
                items.append((seq, .change(change)))
                seq += 1
            }
        }
        wave()
        if flush {
            items.append((seq, .change(FenceChange(.flush))))
            seq += 1
            items.append((seq, .fixes(device: "", [])))  // the tick
        }
    }

    /// The messages partition `p` of `n` reads (by a hash of the device), and every change.
    func partition(_ p: Int, of n: Int) -> [(sequence: UInt64, item: Item)] {
        items.filter {
            if case .fixes(let d, let f) = $0.item { return f.isEmpty || Int(FNV1a.hash(d.utf8) % UInt64(n)) == p }
            return true
        }
    }
}

/// Drives a partition stream the way `PartitionWorker` does, recording every release by its
/// cause (the sequence whose processing released it).
struct Driver {
    var stream: PartitionStream
    var releases: [(cause: UInt64, events: [FenceEvent])] = []
    var changeErrors: [String] = []
    /// When the server stored each message (seconds), as its acknowledgement subject says;
    /// none listed: no bound on the fixes' times.
    var storedAt: [UInt64: Double] = [:]

    mutating func feed(_ messages: some Sequence<(sequence: UInt64, item: SimulatedStream.Item)>, changes: [(UInt64, FenceChange)]) {
        for (seq, item) in messages {
            guard case .fixes(_, let fixes) = item else { continue }
            let d = stream.disposition(of: seq)
            if d == .skip { continue }
            if d == .apply {
                for (g, c) in changes where g > stream.lastChangeSequence && g < seq {
                    if let ev = stream.apply(c, sequence: g, errors: &changeErrors), !ev.isEmpty { releases.append((g, ev)) }
                }
            }
            let ev = stream.receive(fixes, sequence: seq, storedAt: storedAt[seq])
            if !ev.isEmpty { releases.append((seq, ev)) }
        }
    }
}

final class PartitionStreamTests: XCTestCase {
    func engine(_ geoJSON: String, settings: EventSettings = EventSettings()) throws -> EventEngine {
        var e = try EventEngine(settings: settings)
        let report = try GeoJSONFences.read(Data(geoJSON.utf8))
        XCTAssertTrue(report.errors.isEmpty)
        _ = e.add(report.fences, threads: 1)
        return e
    }

    func changes(of s: SimulatedStream) -> [(UInt64, FenceChange)] {
        s.items.compactMap { if case .change(let c) = $0.item { return ($0.sequence, c) } else { return nil } }
    }

    /// Streaming over any partitioning gives the events of one batch evaluation (the oracle)
    /// when every device's fixes arrive in time order and within the lateness.
    func testStreamingEqualsBatchOverPartitions() throws {
        for seed in 1...2 as ClosedRange<UInt64> {
            let fleet = Fleet(devices: 60, steps: 120, seed: seed, fenceCount: 150, size: 0.1)
            let fences = fleet.fencesGeoJSON()
            var settings = EventSettings()
            settings.dwell = 120
            let base = try engine(fences, settings: settings)
            let fixes = fleet.positions()
            var oracle = base
            let expected = oracle.evaluate(fixes, threads: 1).events.sorted()
            XCTAssertGreaterThan(expected.count, 100)
            XCTAssertTrue(expected.contains { $0.kind == .dwell })
            let simulated = SimulatedStream(fixes, window: 30)
            for n in [1, 3] {
                var all: [FenceEvent] = []
                for p in 0..<n {
                    var d = Driver(stream: PartitionStream(engine: base, lateness: 30, step: 1))
                    d.feed(simulated.partition(p, of: n), changes: changes(of: simulated))
                    XCTAssertEqual(d.stream.pendingCount, 0)
                    XCTAssertEqual(d.stream.counters.late, 0)
                    all += d.releases.flatMap(\.events)
                }
                XCTAssertEqual(all.sorted(), expected, "seed \(seed), \(n) partitions")
            }
        }
    }

    /// A restart from a checkpoint taken after any message, through the binary form, with
    /// redeliveries of earlier messages, releases exactly what the uninterrupted run releases
    /// after that message, under the same causes (so the same message ids).
    func testRestartFromEveryCheckpointIsExact() throws {
        let fleet = Fleet(devices: 12, steps: 60, seed: 7, fenceCount: 60, size: 0.05)
        let fences = fleet.fencesGeoJSON()
        var settings = EventSettings()
        settings.dwell = 60
        let base = try engine(fences, settings: settings)
        let extra = Fleet(devices: 0, steps: 0, seed: 8, size: 0.05).fencesGeoJSON(idPrefix: "x", count: 30)
        let simulated = SimulatedStream(
            fleet.positions(), window: 20,
            changes: [
                (200, FenceChange(.remove(ids: ["c1", "c2", "c3", "p5", "p10"]))), (300, FenceChange(.add(geoJSON: Array(extra.utf8)))),
                (400, FenceChange(.removeGroups(["g3"]))),
            ])
        let changeList = changes(of: simulated)
        let messages = simulated.partition(0, of: 1)
        var whole = Driver(stream: PartitionStream(engine: base, lateness: 20, step: 5))
        whole.feed(messages, changes: changeList)
        XCTAssertGreaterThan(whole.releases.count, 10)

        var prefix = Driver(stream: PartitionStream(engine: base, lateness: 20, step: 5))
        var checked = 0
        for k in messages.indices {
            prefix.feed(messages[k...k], changes: changeList)
            guard case .fixes = messages[k].item, k % 5 == 0 || k + 3 >= messages.count else { continue }
            checked += 1
            let bytes = prefix.stream.checkpoint(partition: 0, fingerprint: 42, owner: "t").encoded()
            let cp = try PartitionCheckpoint(decoding: bytes)
            // No fence records (only `restoreReportingChanges` reads them), where a state file
            // of the same state has one per paired fence.
            XCTAssertTrue(cp.snapshot.fences.isEmpty)
            XCTAssertEqual(
                prefix.stream.engine.snapshot().fences.count,
                Set(cp.snapshot.devices.flatMap { $0.pairs.map(\.fence) }).count)
            var restoredEngine = base
            var errors: [String] = []
            for (g, c) in changeList where g <= cp.lastChangeSequence { _ = c.apply(to: &restoredEngine, errors: &errors) }
            let (stream, dropped) = try PartitionStream.restored(from: cp, engine: restoredEngine, lateness: 20, step: 5)
            XCTAssertEqual(dropped, 0)
            XCTAssertEqual(stream.replayFrom, cp.replayFrom)
            var resumed = Driver(stream: stream)
            // The consumer starts where the restored stream says (the worker asks it, as here);
            // a few earlier messages come again (redelivery).
            let start = messages.firstIndex { $0.sequence >= stream.replayFrom } ?? messages.endIndex
            let redelivered = messages[max(0, start - 3)..<start]
            resumed.feed(redelivered, changes: changeList)
            resumed.feed(messages[start...], changes: changeList)
            let after = whole.releases.filter { $0.cause > cp.lastSequence && $0.cause > cp.lastChangeSequence }
            XCTAssertEqual(resumed.releases.map(\.cause), after.map(\.cause), "checkpoint after message \(messages[k].sequence)")
            XCTAssertEqual(resumed.releases.map(\.events), after.map(\.events), "checkpoint after message \(messages[k].sequence)")
            XCTAssertEqual(resumed.stream.engine.snapshot(), whole.stream.engine.snapshot())
        }
        XCTAssertGreaterThan(checked, 50)
    }

    /// Fence changes apply at their stream position in every partition: removals, groups and
    /// replacements give the events of one partition holding every device.
    func testFenceChangesGiveTheSameEventsInAnyPartitioning() throws {
        let fleet = Fleet(devices: 40, steps: 80, seed: 11, fenceCount: 120, size: 0.1)
        let base = try engine(fleet.fencesGeoJSON())
        // Replacements: the same ids with other shapes; then removals.
        let replacement = Fleet(devices: 0, steps: 0, seed: 12, size: 0.1).fencesGeoJSON(count: 60, seed: 5)
        let fixes = fleet.positions()
        let simulated = SimulatedStream(
            fixes, window: 30,
            changes: [
                (fixes.count / 4, FenceChange(.add(geoJSON: Array(replacement.utf8)))),
                (fixes.count / 2, FenceChange(.removeGroups(["g1", "g2"]))),
                (fixes.count * 3 / 4, FenceChange(.remove(ids: (0..<40).map { "c\($0)" }))),
            ])
        var reasons = Set<String>()
        var reference: [FenceEvent]?
        for n in [1, 3, 4] {
            var all: [FenceEvent] = []
            for p in 0..<n {
                var d = Driver(stream: PartitionStream(engine: base, lateness: 30, step: 1))
                d.feed(simulated.partition(p, of: n), changes: changes(of: simulated))
                // The removal names ids no fence has (c0, c5, ...: polygons are p0, p5, ...)
                // and ids of g1 and g2, removed before: each partition reports them.
                let unknown = (0..<40).filter { $0 % 5 == 0 || $0 % 7 == 1 || $0 % 7 == 2 }.map { "remove: no fence \"c\($0)\" is loaded" }
                XCTAssertEqual(d.changeErrors, unknown)
                all += d.releases.flatMap(\.events)
            }
            all.sort()
            for e in all { if let r = e.reason { reasons.insert(r.rawValue) } }
            if let reference { XCTAssertEqual(all, reference, "\(n) partitions") } else { reference = all }
        }
        XCTAssertEqual(reasons, ["fence-removed", "fence-replaced"])
    }

    /// Late fixes (beyond the lateness) are dropped and counted, never applied; the rest of
    /// the device's fixes still give their events.
    func testLateFixesAreDroppedAndCounted() throws {
        let base = try engine(Fleet(devices: 0, steps: 0).fencesGeoJSON(count: 0))
        var s = PartitionStream(engine: base, lateness: 10, step: 1)
        _ = s.receive([Position(device: "a", time: 100, lon: 0, lat: 0)], sequence: 1)
        _ = s.receive([Position(device: "b", time: 200, lon: 0, lat: 0)], sequence: 2)  // horizon 190
        _ = s.receive([Position(device: "a", time: 150, lon: 0, lat: 0)], sequence: 3)  // late
        _ = s.receive([Position(device: "a", time: .nan, lon: 0, lat: 0)], sequence: 4)  // rejected
        _ = s.receive([Position(device: "a", time: 195, lon: 0, lat: 0)], sequence: 5)  // held
        XCTAssertEqual(s.counters.late, 1)
        XCTAssertEqual(s.counters.rejected, 1)
        XCTAssertEqual(s.pendingCount, 2)
        XCTAssertEqual(s.replayFrom, 2)
        XCTAssertEqual(s.disposition(of: 5), .skip)
        XCTAssertEqual(s.disposition(of: 6), .apply)
    }

    /// A fix exactly `lateness` behind the latest seen is taken, not dropped ("up to
    /// --lateness"; an audit found it dropped), on whole seconds where the horizon falls on it,
    /// and a restart from a checkpoint taken after it holds it again. A version 1 checkpoint
    /// (fixes at its horizon were released or late then) is read with the horizon just above.
    func testAFixExactlyTheLatenessBehindIsTaken() throws {
        let base = try engine(#"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"id":"z","radius":1000},"geometry":{"type":"Point","coordinates":[0,0]}}]}"#)
        let messages: [(UInt64, Position)] = [
            (1, Position(device: "a", time: 60, lon: 5, lat: 5)),  // horizon 0
            (2, Position(device: "e", time: 0, lon: 0, lat: 0)),  // exactly 60 s behind
            (3, Position(device: "e", time: 61, lon: 5, lat: 5)),  // horizon 1
        ]
        var errors: [String] = []
        var s = PartitionStream(engine: base, lateness: 60, step: 1)
        _ = s.receive([messages[0].1], sequence: 1)
        XCTAssertEqual(s.horizon, 0)
        _ = s.receive([messages[1].1], sequence: 2)
        XCTAssertEqual(s.counters.late, 0)
        XCTAssertEqual(s.pendingCount, 2)
        // After message 2: a restart replays 1 and 2 to refill the held fixes, the one at the
        // horizon included.
        let cp = try PartitionCheckpoint(decoding: s.checkpoint(partition: 0, fingerprint: 1, owner: "t").encoded())
        XCTAssertEqual(cp.replayFrom, 1)
        var events = s.receive([messages[2].1], sequence: 3)
        events += s.apply(FenceChange(.flush), sequence: 4, errors: &errors) ?? []
        XCTAssertEqual(events.map { "\($0.device) \($0.kind)" }, ["e enter", "e exit"])
        // Restarted from that checkpoint: the same events.
        var (r, _) = try PartitionStream.restored(from: cp, engine: base, lateness: 60, step: 1)
        var again: [FenceEvent] = []
        for (seq, fix) in messages where r.disposition(of: seq) != .skip { again += r.receive([fix], sequence: seq) }
        again += r.apply(FenceChange(.flush), sequence: 4, errors: &errors) ?? []
        XCTAssertEqual(again, events)
        // The same checkpoint written as version 1 reads with its horizon one step up.
        var v1 = cp.encoded()
        v1[9] = 1
        let old = try PartitionCheckpoint(decoding: v1)
        XCTAssertEqual(old.horizon, cp.horizon.nextUp)
        XCTAssertEqual(PartitionCheckpoint.formatVersion, 2)
    }

    /// The lead bound: a fix dated more than `maxLead` after its message was stored is refused
    /// (rejected, never held); up to the bound, or with no stored time, it is taken.
    func testLeadBoundRefusesOnlyFixesPastIt() throws {
        let base = try engine(Fleet(devices: 0, steps: 0).fencesGeoJSON(count: 0))
        var s = PartitionStream(engine: base, lateness: 10, step: 1, maxLead: 60)
        _ = s.receive([Position(device: "a", time: 1010, lon: 0, lat: 0)], sequence: 1, storedAt: 950)  // 60 s ahead: taken
        _ = s.receive([Position(device: "b", time: 1011, lon: 0, lat: 0)], sequence: 2, storedAt: 950)  // 61 s: refused
        _ = s.receive([Position(device: "c", time: 5000, lon: 0, lat: 0)], sequence: 3, storedAt: nil)  // no stored time
        _ = s.receive([Position(device: "d", time: 4e9, lon: 0, lat: 0)], sequence: 4, storedAt: .nan)  // no usable one
        XCTAssertEqual(s.counters.rejected, 1)
        XCTAssertEqual(s.aheadRefused, 1)
        XCTAssertEqual(s.lastAhead?.fix.device, "b")
        XCTAssertEqual(s.lastAhead?.storedAt, 950)
        XCTAssertEqual(s.latestSeen, 4e9)
        var unbounded = PartitionStream(engine: base, lateness: 10, step: 1)
        _ = unbounded.receive([Position(device: "b", time: 4e9, lon: 0, lat: 0)], sequence: 1, storedAt: 950)
        XCTAssertEqual(unbounded.counters.rejected, 0, "no bound by default")
    }

    /// One fix dated 50 years ahead (a device with a broken clock) in the middle of a fleet's
    /// stream: under the lead bound it is refused and every other fix gives the events of the
    /// stream without it, none late; a restart from a checkpoint taken after any message near
    /// it replays exactly. Without the bound the same fix makes the rest of the stream late.
    func testFarFutureFixDoesNotStallThePartition() throws {
        let fleet = Fleet(devices: 30, steps: 80, seed: 21, fenceCount: 100, size: 0.1)
        let base = try engine(fleet.fencesGeoJSON())
        let fixes = fleet.positions()
        let clean = SimulatedStream(fixes, window: 30)
        // The same messages with the glitch inserted a third of the way in, renumbered; each
        // stored 5 s after its newest fix (a producer publishes a window once it closes).
        var items: [SimulatedStream.Item] = clean.items.map(\.item)
        let glitchTime = Fleet.t0 + 50 * 365.25 * 86_400
        items.insert(.fixes(device: "broken-clock", [Position(device: "broken-clock", time: glitchTime, lon: 0, lat: 0)]), at: items.count / 3)
        var messages: [(sequence: UInt64, item: SimulatedStream.Item)] = []
        var stored: [UInt64: Double] = [:]
        var wall = Fleet.t0
        for (k, item) in items.enumerated() {
            let seq = UInt64(k + 1)
            if case .fixes(let device, let f) = item, !f.isEmpty, device != "broken-clock" { wall = max(wall, f.map(\.time).max()! + 5) }
            stored[seq] = wall
            messages.append((seq, item))
        }
        let changeList = messages.compactMap { m -> (UInt64, FenceChange)? in
            if case .change(let c) = m.item { return (m.sequence, c) } else { return nil }
        }

        var reference = Driver(stream: PartitionStream(engine: base, lateness: 30, step: 1))
        reference.feed(clean.items, changes: changes(of: clean))
        let expected = reference.releases.flatMap(\.events).sorted()
        XCTAssertGreaterThan(expected.count, 50)

        var bounded = Driver(stream: PartitionStream(engine: base, lateness: 30, step: 1, maxLead: 3600))
        bounded.storedAt = stored
        bounded.feed(messages, changes: changeList)
        XCTAssertEqual(bounded.releases.flatMap(\.events).sorted(), expected)
        XCTAssertEqual(bounded.stream.counters.late, 0)
        XCTAssertEqual(bounded.stream.counters.rejected, 1)
        XCTAssertEqual(bounded.stream.counters.applied, reference.stream.counters.applied)

        var unbounded = Driver(stream: PartitionStream(engine: base, lateness: 30, step: 1))
        unbounded.storedAt = stored
        unbounded.feed(messages, changes: changeList)
        XCTAssertGreaterThan(unbounded.stream.counters.late, fixes.count / 2, "the harm the bound prevents")

        // Restarts around the glitch: the replay refuses it again, so nothing differs.
        let at = items.count / 3
        for k in (at - 3)...(at + 3) {
            var prefix = Driver(stream: PartitionStream(engine: base, lateness: 30, step: 1, maxLead: 3600))
            prefix.storedAt = stored
            prefix.feed(messages[...k], changes: changeList)
            let cp = try PartitionCheckpoint(decoding: prefix.stream.checkpoint(partition: 0, fingerprint: 1, owner: "t").encoded())
            var restoredEngine = base
            var errors: [String] = []
            for (g, c) in changeList where g <= cp.lastChangeSequence { _ = c.apply(to: &restoredEngine, errors: &errors) }
            let (stream, _) = try PartitionStream.restored(from: cp, engine: restoredEngine, lateness: 30, step: 1, maxLead: 3600)
            var resumed = Driver(stream: stream)
            resumed.storedAt = stored
            let start = messages.firstIndex { $0.sequence >= stream.replayFrom } ?? messages.endIndex
            resumed.feed(messages[start...], changes: changeList)
            let after = bounded.releases.filter { $0.cause > cp.lastSequence && $0.cause > cp.lastChangeSequence }
            XCTAssertEqual(resumed.releases.map(\.cause), after.map(\.cause), "checkpoint after message \(k + 1)")
            XCTAssertEqual(resumed.releases.map(\.events), after.map(\.events), "checkpoint after message \(k + 1)")
            XCTAssertEqual(resumed.stream.counters, bounded.stream.counters, "checkpoint after message \(k + 1)")
        }
    }

    /// A fence that expired before the checkpoint is gone after a restart too, as the batch
    /// that passed its expiry removed it: the same fences, and a later removal naming it is
    /// refused the same way in both runs.
    func testRestoreDropsFencesThatExpiredBeforeTheCheckpoint() throws {
        let fences = """
            {"type":"FeatureCollection","features":[
            {"type":"Feature","id":"soon","properties":{"radius":500,"expires":100},"geometry":{"type":"Point","coordinates":[0,0]}},
            {"type":"Feature","id":"later","properties":{"radius":500,"expires":1000},"geometry":{"type":"Point","coordinates":[0.1,0]}},
            {"type":"Feature","id":"never","properties":{"radius":500},"geometry":{"type":"Point","coordinates":[0.2,0]}}]}
            """
        let base = try engine(fences)
        var whole = PartitionStream(engine: base, lateness: 10, step: 1)
        var events: [FenceEvent] = []
        for (i, t) in stride(from: 0.0, through: 200, by: 10).enumerated() {
            events += whole.receive([Position(device: "a", time: t, lon: 0, lat: 0)], sequence: UInt64(i + 1))
        }
        XCTAssertEqual(events.map(\.kind), [.enter, .exit], "entered, then left at the expiry")
        XCTAssertNil(whole.engine.store.handle(id: "soon"))
        let cp = try PartitionCheckpoint(decoding: whole.checkpoint(partition: 0, fingerprint: 1, owner: "t").encoded())
        XCTAssertGreaterThan(cp.snapshot.watermark, 100)

        let (restored, dropped) = try PartitionStream.restored(from: cp, engine: base, lateness: 10, step: 1)
        XCTAssertEqual(dropped, 0)
        XCTAssertNil(restored.engine.store.handle(id: "soon"), "expired before the checkpoint")
        XCTAssertNotNil(restored.engine.store.handle(id: "later"))
        XCTAssertEqual(restored.engine.store.count, whole.engine.store.count)
        XCTAssertEqual(restored.engine.latestExpiredRemoval, whole.engine.latestExpiredRemoval)

        var afterWhole = whole
        var afterRestored = restored
        var e1: [String] = []
        var e2: [String] = []
        _ = afterWhole.apply(FenceChange(.remove(ids: ["soon"])), sequence: 30, errors: &e1)
        _ = afterRestored.apply(FenceChange(.remove(ids: ["soon"])), sequence: 30, errors: &e2)
        XCTAssertEqual(e1, [#"remove: no fence "soon" is loaded"#])
        XCTAssertEqual(e2, e1)
    }

    /// A fence change that adds a fence, or replaces one devices are inside, with an expiry the
    /// partition's clock already passed: the change expires it at once, so a restart from a
    /// checkpoint taken right after the change (whose restore drops such fences) gives the
    /// same events as the uninterrupted run. (It stayed until the next release before: the
    /// uninterrupted run then entered a held older fix into the new fence, and ended the
    /// replaced fence's visits at that release, events the resumed run never gave; a review
    /// found it.)
    func testAChangeAddingAnExpiredFenceResumesExactly() throws {
        func square(_ id: String, expires: Double) -> [UInt8] {
            Array(
                """
                {"type":"FeatureCollection","features":[{"type":"Feature","id":"\(id)","properties":{"expires":\(expires)},
                "geometry":{"type":"Polygon","coordinates":[[[-0.01,-0.01],[0.01,-0.01],[0.01,0.01],[-0.01,0.01],[-0.01,-0.01]]]}}]}
                """.utf8)
        }
        let base = try engine(#"{"type":"FeatureCollection","features":[]}"#)
        func fix(_ d: String, _ t: Double, inside: Bool = true) -> Position {
            Position(device: d, time: t, lon: inside ? 0 : 1, lat: 0)
        }
        struct Step { var fixes: [Position]? = nil; var change: FenceChange? = nil }
        // 1: a new fence expiring at 150 added when the clock is 200; a held fix at 145 inside.
        // 2: a fence d is inside replaced, same shape, with an expiry (50) the clock (130) passed.
        let cases: [(lateness: Double, step: Double, steps: [Step], expected: [FenceEventKind])] = [
            (60, 1, [
                Step(fixes: [fix("a", 200, inside: false)]), Step(change: FenceChange(.add(geoJSON: square("G", expires: 150)))),
                Step(fixes: [fix("g", 145)]), Step(fixes: [fix("a", 300, inside: false)]),
            ], []),
            (10, 10, [
                Step(change: FenceChange(.add(geoJSON: square("F", expires: 10_000)))),
                Step(fixes: [fix("d", 60), fix("d", 100)]), Step(fixes: [fix("a", 130, inside: false)]),
                Step(change: FenceChange(.add(geoJSON: square("F", expires: 50)))),
                Step(fixes: [fix("a", 200, inside: false)]),
            ], [.enter, .exit]),
        ]
        for (n, c) in cases.enumerated() {
            func run(_ steps: ArraySlice<Step>, _ stream: inout PartitionStream, from first: Int) -> [FenceEvent] {
                var events: [FenceEvent] = []
                var errors: [String] = []
                for (k, step) in zip(first..., steps) {
                    if let fixes = step.fixes { events += stream.receive(fixes, sequence: UInt64(k + 1)) }
                    if let change = step.change { events += stream.apply(change, sequence: UInt64(k + 1), errors: &errors) ?? [] }
                }
                XCTAssertEqual(errors, [], "case \(n)")
                return events
            }
            var whole = PartitionStream(engine: base, lateness: c.lateness, step: c.step)
            let all = run(c.steps[...], &whole, from: 0)
            XCTAssertEqual(all.map(\.kind), c.expected, "case \(n): \(summaryLines(all))")
            // Checkpoints after every step; each resumed on the fences as of its last change.
            for cut in 1..<c.steps.count {
                var first = PartitionStream(engine: base, lateness: c.lateness, step: c.step)
                let before = run(c.steps[..<cut], &first, from: 0)
                let cp = try PartitionCheckpoint(decoding: first.checkpoint(partition: 0, fingerprint: 1, owner: "t").encoded())
                var fences = base
                var errors: [String] = []
                for (k, step) in c.steps.enumerated() where UInt64(k + 1) <= cp.lastChangeSequence {
                    if let change = step.change { _ = change.apply(to: &fences, errors: &errors) }
                }
                var (resumed, dropped) = try PartitionStream.restored(from: cp, engine: fences, lateness: c.lateness, step: c.step)
                XCTAssertEqual(dropped, 0, "case \(n) cut \(cut)")
                // The replay refills the held fixes from replayFrom, then the rest applies.
                for (k, step) in c.steps.enumerated() where UInt64(k + 1) >= cp.replayFrom && k < cut {
                    if let fixes = step.fixes { _ = resumed.receive(fixes, sequence: UInt64(k + 1)) }
                }
                let after = run(c.steps[cut...], &resumed, from: cut)
                XCTAssertEqual(summaryLines(before + after), summaryLines(all), "case \(n) cut \(cut)")
            }
        }
    }

    /// The horizon is the greatest multiple of the step (as a Double multiplies it) not after
    /// latest - lateness, for decimal steps too: over 42,000 tenth- and thousandth-second latest
    /// times, never after it (a fix exactly `lateness` behind would be late) and never a step
    /// low (the rounded quotient's floor can be one short, as about a tenth of these tenth-second
    /// times at 1234560000 with step 0.1 are: such fixes were held a step longer).
    func testTheHorizonIsTheGreatestMultipleNotAfter() {
        var low = 0
        var cases: [(base: Double, lateness: Double, step: Double)] = []
        for base in [1_234_560_000.0, 1_700_000_000] {
            for lateness in [1.0, 10] {
                for step in [0.01, 0.05, 0.1, 0.3, 1.1, 2.7, 60] { cases.append((base, lateness, step)) }
            }
        }
        for (base, lateness, step) in cases {
            for i in 0..<1_500 {
                let latest = base + Double(i) * (i % 2 == 0 ? 0.1 : 0.001)
                let exact = latest - lateness
                let h = PartitionStream.horizon(latest: latest, lateness: lateness, step: step)
                let k = (h / step).rounded()
                XCTAssertEqual(k * step, h, "step \(step) latest \(latest): a multiple")
                XCTAssertLessThanOrEqual(h, exact, "step \(step) latest \(latest): not after")
                XCTAssertGreaterThan((k + 1) * step, exact, "step \(step) latest \(latest): the greatest")
                let floor = (exact / step).rounded(.down)
                if floor * step <= exact && h > floor * step { low += 1 }
            }
        }
        XCTAssertGreaterThan(low, 100, "quotients' floors one short (what the test is about)")
    }

    /// A step too small to round to (its multiples past what a Double counts in whole numbers,
    /// or an infinite quotient) is no rounding, as step 0: 1e-320 made the horizon +infinity,
    /// and every fix after the first message late; a review found it.
    func testATinyStepDoesNotRound() throws {
        let base = try engine(#"{"type":"FeatureCollection","features":[]}"#)
        for step in [1e-320, 1e-9, 0.0] {
            var s = PartitionStream(engine: base, lateness: 10, step: step)
            _ = s.receive([Position(device: "a", time: 1_700_000_000.123, lon: 0, lat: 0)], sequence: 1)
            XCTAssertEqual(s.horizon, 1_700_000_000.123 - 10, "step \(step)")
            _ = s.receive([Position(device: "b", time: 1_699_999_990.5, lon: 0, lat: 0)], sequence: 2)
            XCTAssertEqual(s.counters.late, 0, "step \(step)")
        }
        XCTAssertEqual(PartitionStream.horizon(latest: -.infinity, lateness: 10, step: 0.5), -.infinity)
        XCTAssertEqual(PartitionStream.horizon(latest: 1_700_000_000.123, lateness: 10, step: 0.25), 1_699_999_990)
    }

    func summaryLines(_ events: [FenceEvent]) -> [String] {
        events.map { "\($0.time) \($0.device) \($0.fence) \($0.kind)\($0.reason.map { " \($0)" } ?? "")" }
    }
}

/// The worker's late line names a message's own late fixes (`arrivedLate`), not fixes of
/// earlier messages its horizon move released and the engine then found late (a review:
/// "message 4: 2 of 1 fixes late" for a message whose one fix was on time).
final class ArrivedLateTests: XCTestCase {
    func testArrivedLateCountsTheMessagesOwnFixes() throws {
        var s = PartitionStream(engine: try EventEngine(settings: EventSettings()), lateness: 10, step: 0)
        func p(_ d: String, _ t: Double) -> Position { Position(device: d, time: t, lon: 1, lat: 1) }
        _ = s.receive([p("a", 100), p("b", 100)], sequence: 1)
        var errors: [String] = []
        _ = s.apply(FenceChange(.flush), sequence: 2, errors: &errors)
        // Held, not late (within the lateness of 100), though before the devices' last fixes.
        _ = s.receive([p("a", 95), p("b", 95)], sequence: 3)
        XCTAssertEqual(s.arrivedLate, 0)
        // Message 4's one fix is on time; the release finds message 3's two late.
        let late = s.counters.late
        _ = s.receive([p("c", 200)], sequence: 4)
        XCTAssertEqual(s.counters.late - late, 2)
        XCTAssertEqual(s.arrivedLate, 0)
        // One before the horizon (190) and one after: one of two.
        _ = s.receive([p("d", 150), p("d", 199)], sequence: 5)
        XCTAssertEqual(s.arrivedLate, 1)
    }
}
