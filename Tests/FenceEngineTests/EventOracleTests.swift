@testable import FenceEngine
import XCTest

/// The event engine against a slow, obvious tracker written from the SPEC rules ("Status and
/// events"), not from the engine's code: a dictionary of visits per device, every fence checked
/// on every fix with the brute-force covering `Oracle`.
final class EventOracleTests: XCTestCase {

    // MARK: The oracle tracker

    /// What one `evaluate` call should return.
    struct Outcome {
        var events: [FenceEvent] = []
        var rejected: [Int] = []
        var late = 0
        var duplicates = 0
        var applied = 0
    }

    final class OracleTracker {
        struct Visit {
            var enterTime: Double
            var stayed = false
            var pendingSince: Double?
        }
        let fences: [String: Fence]
        let fenceIDs: [String]
        let cover: Oracle
        let settings: EventSettings
        var lastTime: [String: Double] = [:]
        var visits: [String: [String: Visit]] = [:]

        init(fences: [Fence], settings: EventSettings) {
            self.fences = Dictionary(uniqueKeysWithValues: fences.map { ($0.id, $0) })
            fenceIDs = fences.map(\.id).sorted()
            cover = Oracle(fences)
            self.settings = settings
        }

        static func isValid(_ f: Position) -> Bool {
            guard !f.device.isEmpty, f.time.isFinite, f.lon.isFinite, f.lat.isFinite else { return false }
            guard (-180.0...180.0).contains(f.lon), (-90.0...90.0).contains(f.lat) else { return false }
            if let a = f.accuracy, !(a.isFinite && a >= 0) { return false }
            return true
        }

        func evaluate(_ fixes: [Position]) -> Outcome {
            var out = Outcome()
            var byDevice: [String: [(index: Int, fix: Position)]] = [:]
            for (i, f) in fixes.enumerated() {
                if Self.isValid(f) { byDevice[f.device, default: []].append((i, f)) } else { out.rejected.append(i) }
            }
            for (device, list) in byDevice {
                // Time order; equal times keep input order.
                let ordered = list.sorted { ($0.fix.time, $0.index) < ($1.fix.time, $1.index) }
                for (_, fix) in ordered {
                    if let last = lastTime[device] {
                        if fix.time == last { out.duplicates += 1; continue }
                        if fix.time < last { out.late += 1; continue }
                    }
                    apply(fix, first: lastTime[device] == nil, into: &out.events)
                    lastTime[device] = fix.time
                    out.applied += 1
                }
            }
            out.events.sort()
            return out
        }

        func apply(_ fix: Position, first: Bool, into events: inout [FenceEvent]) {
            let covering = Set(cover.ids(covering: LonLat(lon: fix.lon, lat: fix.lat)))
            var mine = visits[fix.device] ?? [:]
            func emit(_ kind: FenceEventKind, _ fence: Fence, initial: Bool = false, inside: Double? = nil) {
                let mask = fence.actions ?? settings.actions
                guard mask.contains(kind.action) else { return }
                events.append(
                    FenceEvent(
                        time: fix.time, device: fix.device, fence: fence.id, group: fence.group, kind: kind,
                        lon: fix.lon, lat: fix.lat, initial: initial, reason: nil, insideSeconds: inside))
            }
            for id in fenceIDs {
                let fence = fences[id]!
                if covering.contains(id) {
                    if mine[id] == nil {
                        mine[id] = Visit(enterTime: fix.time)
                        if !first || settings.initialEvents { emit(.enter, fence, initial: first) }
                    } else {
                        mine[id]!.pendingSince = nil
                    }
                    let visit = mine[id]!
                    if !visit.stayed && fix.time - visit.enterTime >= (fence.dwell ?? settings.dwell) - 1e-6 {
                        emit(.dwell, fence, inside: fix.time - visit.enterTime)
                        mine[id]!.stayed = true
                    }
                } else if let visit = mine[id] {
                    let d = settings.exitDelay
                    if d == 0 {
                        emit(.exit, fence, inside: fix.time - visit.enterTime)
                        mine[id] = nil
                    } else if let since = visit.pendingSince {
                        if fix.time - since >= d - 1e-6 {
                            emit(.exit, fence, inside: fix.time - visit.enterTime)
                            mine[id] = nil
                        }
                    } else {
                        mine[id]!.pendingSince = fix.time
                    }
                }
            }
            visits[fix.device] = mine
        }
    }

    // MARK: Random scenarios

    struct Scenario {
        var fences: [Fence]
        var settings: EventSettings
        /// Valid fixes, one per (device, time), in generation order.
        var track: [Position]
        /// The evaluate() batches: shuffled, with duplicates and bad fixes.
        var batches: [[Position]]
    }

    static let lon0 = 13.20, lat0 = 52.40, span = 0.3, t0 = 1_700_000_000.0

    static func int(_ rng: inout TestRandom, _ r: ClosedRange<Int>) -> Int {
        r.lowerBound + Int(rng.next() % UInt64(r.count))
    }

    static func makeScenario(seed: UInt64, fixesPerDevice: ClosedRange<Int> = 40...100) -> Scenario {
        var rng = TestRandom(mixing: seed)
        var fences: [Fence] = []
        for i in 0..<int(&rng, 30...80) {
            let lon = lon0 + rng.uniform(0, span), lat = lat0 + rng.uniform(0, span)
            var f: Fence
            if rng.next() % 2 == 0 {
                f = .circle(id: "c\(i)", lon: lon, lat: lat, radius: rng.uniform(200, 5000))
            } else {
                let ring = Shapes.star(&rng, lon: lon, lat: lat, radius: rng.uniform(0.01, 0.05), vertices: int(&rng, 5...16))
                f = .polygon(id: "p\(i)", exterior: ring)
            }
            if rng.next() % 3 == 0 { f.group = "g\(rng.next() % 4)" }
            if rng.next() % 4 == 0 { f.dwell = rng.next() % 5 == 0 ? 0 : Double(int(&rng, 5...400)) }
            if rng.next() % 4 == 0 { f.actions = FenceActions(rawValue: UInt8(rng.next() % 8)) }
            fences.append(f)
        }
        // Long thin corridors, indexed under many boxes (`polygonBoxes`), from a generator of
        // their own so that the rest of the scenario is as it was.
        var corridorRNG = TestRandom(mixing: seed ^ 0xC0_44_1D_0E)
        for i in 0..<8 {
            let ring = Shapes.corridor(
                lon: lon0 + corridorRNG.uniform(0, span), lat: lat0 + corridorRNG.uniform(0, span),
                length: corridorRNG.uniform(0.1, 0.4), width: corridorRNG.uniform(0.0005, 0.003), angle: corridorRNG.uniform(0, .pi))
            fences.append(.polygon(id: "r\(i)", exterior: ring))
        }
        var settings = EventSettings()
        settings.dwell = Double(int(&rng, 30...300))
        settings.initialEvents = rng.next() % 2 == 0
        settings.exitDelay = rng.next() % 2 == 0 ? 0 : Double(int(&rng, 20...120))
        if rng.next() % 4 == 0 { settings.actions = FenceActions(rawValue: UInt8(1 + rng.next() % 7)) }

        // Random walks; times on a quarter-second grid so every sum and difference is exact.
        var track: [Position] = []
        for d in 0..<int(&rng, 20...50) {
            let startLon = lon0 + rng.uniform(0, span), startLat = lat0 + rng.uniform(0, span)
            var walk = RandomWalk(lon: startLon, lat: startLat, heading: rng.uniform(0, 2 * .pi), lon0: lon0, lat0: lat0, span: span)
            var t = t0 + Double(int(&rng, 0...600))
            for _ in 0..<int(&rng, fixesPerDevice) {
                track.append(Position(device: "dev\(d)", time: t, lon: walk.lon, lat: walk.lat))
                walk.step(&rng, metres: 10...300)
                t += Double(int(&rng, 1...30)) + 0.25 * Double(rng.next() % 4)
            }
        }

        // Batches by time, with a few fixes sent to another batch (late, or early: both fine).
        let batchCount = int(&rng, 1...3)
        let times = track.map(\.time).sorted()
        let cuts = (1..<batchCount).map { times[times.count * $0 / batchCount] }
        var batches = [[Position]](repeating: [], count: batchCount)
        func batchOf(_ t: Double) -> Int { cuts.filter { t >= $0 }.count }
        for fix in track {
            let b = rng.next() % 30 == 0 ? int(&rng, 0...(batchCount - 1)) : batchOf(fix.time)
            batches[b].append(fix)
            if rng.next() % 30 == 0 {  // a duplicate: same device and time, maybe another position
                var dup = fix
                if rng.next() % 2 == 0 { dup.lon += rng.uniform(-0.01, 0.01) }
                batches[rng.next() % 4 == 0 ? int(&rng, 0...(batchCount - 1)) : b].append(dup)
            }
        }
        for _ in 0..<int(&rng, 3...12) {
            var bad = track[int(&rng, 0...(track.count - 1))]
            switch rng.next() % 6 {
            case 0: bad.lon = .nan
            case 1: bad.lat = .nan
            case 2: bad.time = .nan
            case 3: bad.lat = 91
            case 4: bad.lon = -180.5
            default: bad.accuracy = -3
            }
            batches[int(&rng, 0...(batchCount - 1))].append(bad)
        }
        for b in batches.indices { batches[b].shuffle(using: &rng) }
        return Scenario(fences: fences, settings: settings, track: track, batches: batches)
    }

    static func makeEngine(_ s: Scenario, reversed: Bool = false) -> EventEngine {
        var store = FenceStore()
        let results = store.add(reversed ? s.fences.reversed() : s.fences, threads: 1)
        precondition(results.allSatisfy { $0.error == nil }, "\(results.compactMap(\.error))")
        return try! EventEngine(store: store, settings: s.settings)
    }

    // MARK: Comparison

    static func describe(_ e: FenceEvent) -> String {
        var s = "t=\(e.time) \(e.device) \(e.fence) \(e.kind) lon=\(e.lon) lat=\(e.lat)"
        if let g = e.group { s += " group=\(g)" }
        if e.initial { s += " initial" }
        if let r = e.reason { s += " reason=\(r.rawValue)" }
        if let i = e.insideSeconds { s += " inside_s=\(i)" }
        return s
    }

    static func same(_ a: FenceEvent, _ b: FenceEvent) -> Bool {
        let inside: Bool
        switch (a.insideSeconds, b.insideSeconds) {
        case (nil, nil): inside = true
        case (let x?, let y?): inside = abs(x - y) <= 1e-9
        default: inside = false
        }
        return a.time == b.time && a.device == b.device && a.fence == b.fence && a.group == b.group && a.kind == b.kind
            && a.lon == b.lon && a.lat == b.lat && a.initial == b.initial && a.reason == b.reason && inside
    }

    /// Fails with the first difference and its neighbourhood; true when equal.
    @discardableResult
    static func assertSame(
        _ actual: [FenceEvent], _ expected: [FenceEvent], _ context: String, file: StaticString = #filePath, line: UInt = #line
    ) -> Bool {
        let n = min(actual.count, expected.count)
        let first = (0..<n).first { !same(actual[$0], expected[$0]) } ?? (actual.count == expected.count ? nil : n)
        guard let i = first else { return true }
        let lo = max(0, i - 2)
        let a = actual[lo..<min(actual.count, i + 3)].map { "  " + describe($0) }.joined(separator: "\n")
        let e = expected[lo..<min(expected.count, i + 3)].map { "  " + describe($0) }.joined(separator: "\n")
        XCTFail(
            "\(context): \(actual.count) events, expected \(expected.count); first difference at \(i)"
                + "\nengine:\n\(a)\noracle:\n\(e)",
            file: file, line: line)
        return false
    }

    // MARK: Tests

    func testEventsMatchOracle() {
        var totals = [FenceEventKind: Int](), initials = 0, pendingExits = 0, late = 0, duplicates = 0, rejected = 0
        var corridorEvents = 0
        for seed in UInt64(1)...24 {
            let s = Self.makeScenario(seed: seed)
            var engine = Self.makeEngine(s)
            let oracle = OracleTracker(fences: s.fences, settings: s.settings)
            let threads = 1 + Int(seed % 4)
            for (b, batch) in s.batches.enumerated() {
                let ctx = "seed \(seed) batch \(b) (dwell \(s.settings.dwell), initial \(s.settings.initialEvents), "
                    + "exitDelay \(s.settings.exitDelay), actions \(s.settings.actions.rawValue))"
                let expected = oracle.evaluate(batch)
                let actual = engine.evaluate(batch, threads: threads)
                guard Self.assertSame(actual.events, expected.events, ctx) else { return }
                XCTAssertEqual(actual.rejected.map(\.index).sorted(), expected.rejected, ctx)
                XCTAssertEqual(actual.duplicates, expected.duplicates, ctx)
                XCTAssertEqual(actual.late, expected.late, ctx)
                XCTAssertEqual(actual.applied, expected.applied, ctx)
                late += expected.late
                duplicates += expected.duplicates
                rejected += expected.rejected.count
                for e in expected.events {
                    totals[e.kind, default: 0] += 1
                    if e.initial { initials += 1 }
                    if e.fence.hasPrefix("r") { corridorEvents += 1 }
                }
            }
            pendingExits += oracle.visits.values.reduce(0) { $0 + $1.values.filter { $0.pendingSince != nil }.count }
            // The status API agrees with the oracle's visits at the end.
            for (device, mine) in oracle.visits {
                XCTAssertEqual(engine.fences(insideOf: device), mine.keys.sorted(), "seed \(seed) \(device)")
                for (fence, v) in mine {
                    XCTAssertEqual(engine.status(device: device, fence: fence), v.stayed ? .stayed : .inside, "seed \(seed)")
                }
            }
        }
        // The scenarios exercise every rule.
        for kind in [FenceEventKind.enter, .exit, .dwell] { XCTAssertGreaterThan(totals[kind] ?? 0, 100, "\(kind)") }
        XCTAssertGreaterThan(initials, 10)
        XCTAssertGreaterThan(pendingExits, 0)
        XCTAssertGreaterThan(late, 10)
        XCTAssertGreaterThan(duplicates, 10)
        XCTAssertGreaterThan(rejected, 24)
        XCTAssertGreaterThan(corridorEvents, 50, "events at corridors (fences under many index boxes)")
    }

    func testThreadCountInvariance() {
        for seed in UInt64(101)...124 {
            let s = Self.makeScenario(seed: seed)
            var runs: [[EvaluationResult]] = []
            for threads in [1, 2, 8] {
                var engine = Self.makeEngine(s)
                runs.append(s.batches.map { engine.evaluate($0, threads: threads) })
            }
            for r in runs.dropFirst() {
                for b in s.batches.indices {
                    XCTAssertEqual(r[b].events, runs[0][b].events, "seed \(seed) batch \(b)")
                    XCTAssertEqual(r[b].duplicates, runs[0][b].duplicates)
                    XCTAssertEqual(r[b].late, runs[0][b].late)
                    XCTAssertEqual(r[b].applied, runs[0][b].applied)
                    XCTAssertEqual(r[b].rejected.map(\.index), runs[0][b].rejected.map(\.index))
                }
            }
            XCTAssertFalse(runs[0].allSatisfy { $0.events.isEmpty }, "seed \(seed)")
        }
    }

    func testSnapshotRestoreSplitsRun() throws {
        var pairsCarried = 0
        for seed in UInt64(201)...224 {
            let s = Self.makeScenario(seed: seed, fixesPerDevice: 30...80)
            var rng = TestRandom(mixing: seed ^ 0xABCD)
            // The track with exact duplicates (which copy wins must not depend on the shuffles),
            // stably by time; split at a time boundary so the two runs' outputs concatenate in order.
            var track = s.track
            for _ in 0..<(track.count / 40) { track.append(track[Self.int(&rng, 0...(track.count - 1))]) }
            let fixes = track.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
            let split = fixes[fixes.count / 2].time
            let firstHalf = fixes.filter { $0.time < split }, secondHalf = fixes.filter { $0.time >= split }

            var single = Self.makeEngine(s)
            let whole = single.evaluate(fixes.shuffled(using: &rng)).events
            if seed % 3 == 0 {  // one batch with exact duplicates, against the oracle too (a third of the seeds: time)
                let expected = OracleTracker(fences: s.fences, settings: s.settings).evaluate(fixes).events
                Self.assertSame(whole, expected, "seed \(seed) single run vs oracle")
            }

            var before = Self.makeEngine(s)
            let first = before.evaluate(firstHalf, threads: 2).events
            let snapshot = before.snapshot()
            pairsCarried += snapshot.devices.reduce(0) { $0 + $1.pairs.count }
            let bytes = snapshot.encoded()
            let decoded = try TrackerSnapshot(decoding: bytes)
            XCTAssertEqual(decoded, snapshot, "seed \(seed)")
            var after = try EventEngine(store: Self.makeEngine(s, reversed: true).store, settings: s.settings)
            XCTAssertEqual(try after.restore(decoded), 0)
            let second = after.evaluate(secondHalf.shuffled(using: &rng), threads: 3).events
            Self.assertSame(first + second, whole, "seed \(seed) split run vs single run")

            XCTAssertThrowsError(try TrackerSnapshot(decoding: Array(bytes.prefix(bytes.count / 2))), "seed \(seed) truncated")
            var flipped = bytes
            let at = Self.int(&rng, 0...(bytes.count - 1))
            flipped[at] ^= UInt8(1 + rng.next() % 255)
            XCTAssertThrowsError(try TrackerSnapshot(decoding: flipped), "seed \(seed) byte \(at) flipped")
        }
        XCTAssertGreaterThan(pairsCarried, 50)
    }

    /// A snapshot restored against edited fences and settings (`restoreReportingChanges`, what
    /// `fence eval --state` does between runs) gives the events the live engine gives for the
    /// same edits made through its API at that point: removals, replacements (moved shapes),
    /// fence masks and the engine's mask; and the two engines then agree on what follows.
    func testRestoreAgainstEditedFencesReportsTheEditsAsTheLiveEngineDoes() throws {
        var edits = 0
        for seed in UInt64(401)...440 {
            let s = Self.makeScenario(seed: seed)
            var rng = TestRandom(mixing: seed ^ 0xED17)
            let fixes = s.track.sorted { ($0.time, $0.device) < ($1.time, $1.device) }
            let split = fixes[fixes.count / 2].time
            let firstHalf = fixes.filter { $0.time < split }, secondHalf = fixes.filter { $0.time >= split }
            var live = Self.makeEngine(s)
            _ = live.evaluate(firstHalf, threads: 2)
            let snapshot = try TrackerSnapshot(decoding: live.snapshot().encoded())

            // Edit about a third of the fences, one edit each; maybe the engine's mask too.
            var edited = s.fences
            var removed: [String] = []
            var replaced: [Fence] = []
            var masked: [(String, FenceActions?)] = []
            for i in edited.indices.reversed() {
                switch rng.next() % 9 {
                case 0:
                    removed.append(edited[i].id)
                    edited.remove(at: i)
                case 1:
                    var f = edited[i]
                    let dx = rng.uniform(-0.02, 0.02), dy = rng.uniform(-0.02, 0.02)
                    switch f.shape {
                    case .circle(let c, let r): f.shape = .circle(center: LonLat(lon: c.lon + dx, lat: c.lat + dy), radius: r)
                    case .polygons(let ps):
                        f.shape = .polygons(ps.map { Polygon(exterior: $0.exterior.map { LonLat(lon: $0.lon + dx, lat: $0.lat + dy) }) })
                    }
                    if rng.next() % 2 == 0 { f.group = "moved" }
                    // A replacement may bring its own mask as well (it re-triggers then).
                    if rng.next() % 3 == 0 { f.actions = FenceActions(rawValue: UInt8(rng.next() % 8)) }
                    // Or only nudge the shape, so that the device stays inside it.
                    if rng.next() % 3 == 0 { f.shape = edited[i].shape; f.dwell = (f.dwell ?? 0) + 1 }
                    edited[i] = f
                    replaced.append(f)
                case 2:
                    let mask: FenceActions? = rng.next() % 3 == 0 ? nil : FenceActions(rawValue: UInt8(rng.next() % 8))
                    edited[i].actions = mask
                    masked.append((edited[i].id, mask))
                default: break
                }
            }
            var settings = s.settings
            let newEngineMask: FenceActions? = rng.next() % 3 == 0 ? FenceActions(rawValue: UInt8(1 + rng.next() % 7)) : nil
            if let m = newEngineMask { settings.actions = m }
            edits += removed.count + replaced.count + masked.count

            // The live engine, edited through its API. The restore compares each fence's mask
            // before and after; the live edits must not pass through a third mask on the way:
            // own masks first, then the engine's, then the fences that now follow it.
            var expected: [FenceEvent] = []
            for id in removed { expected += live.remove(id: id) }
            expected += live.add(replaced, threads: 1).events
            for (id, mask) in masked where mask != nil { expected += live.setActions(mask, fence: id) }
            if let m = newEngineMask { expected += live.setActions(m) }
            for (id, mask) in masked where mask == nil { expected += live.setActions(mask, fence: id) }
            expected = EventEngine.sorted(expected)

            // A new engine over the edited fences, restored from the snapshot.
            var store = FenceStore()
            XCTAssertTrue(store.add(edited, threads: 1).allSatisfy { $0.error == nil })
            var restored = try EventEngine(store: store, settings: settings)
            let (_, events) = try restored.restoreReportingChanges(snapshot)
            Self.assertSame(events, expected, "seed \(seed) restore vs live edits")
            Self.assertSame(
                restored.evaluate(secondHalf, threads: 2).events, live.evaluate(secondHalf, threads: 2).events,
                "seed \(seed) after the edits")
        }
        XCTAssertGreaterThan(edits, 200)
    }

    /// A version 1 state file (no fence records) still reads; a restore from it drops the
    /// pairs of missing fences without events, as before.
    func testVersionOneStateFileStillReads() throws {
        let s = Self.makeScenario(seed: 450)
        var engine = Self.makeEngine(s)
        _ = engine.evaluate(s.track)
        var snapshot = engine.snapshot()
        snapshot.fences = []
        snapshot.engineActions = nil
        // Version 1 is version 2 without the records: rewrite the header and drop the tail.
        var bytes = snapshot.encoded()
        let header = TrackerSnapshot.magic.count + 16
        var payload = Array(bytes[header...])
        payload.removeLast(9)  // the mask byte and the record count
        bytes = Array(bytes[..<header])
        bytes.replaceSubrange(TrackerSnapshot.magic.count..<(TrackerSnapshot.magic.count + 4), with: [1, 0, 0, 0])
        withUnsafeBytes(of: UInt64(payload.count).littleEndian) { bytes.replaceSubrange((TrackerSnapshot.magic.count + 4)..<(TrackerSnapshot.magic.count + 12), with: $0) }
        withUnsafeBytes(of: CRC32.checksum(payload).littleEndian) { bytes.replaceSubrange((TrackerSnapshot.magic.count + 12)..<header, with: $0) }
        bytes += payload
        let decoded = try TrackerSnapshot(decoding: bytes)
        XCTAssertEqual(decoded, snapshot)
        var other = try EventEngine(store: FenceStore(), settings: s.settings)
        let (dropped, events) = try other.restoreReportingChanges(decoded)
        XCTAssertEqual(dropped, snapshot.devices.reduce(0) { $0 + $1.pairs.count })
        XCTAssertEqual(events, [])
    }

    func testStreamMatchesBatch() {
        for seed in UInt64(301)...324 {
            let s = Self.makeScenario(seed: seed, fixesPerDevice: 30...80)
            var rng = TestRandom(mixing: seed ^ 0x5EED)
            // Exact duplicates only: which copy wins must not depend on arrival order.
            var fixes = s.track
            for _ in 0..<(fixes.count / 40) { fixes.append(fixes[Self.int(&rng, 0...(fixes.count - 1))]) }
            let sorted = fixes.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
            var batchEngine = Self.makeEngine(s)
            let batch = batchEngine.evaluate(sorted, threads: 2)
            // Arrival order: by time plus up to 50 s of delay, so never later than the 60 s lateness.
            var arrival = fixes.map { ($0, $0.time + rng.uniform(0, 50)) }.sorted { $0.1 < $1.1 }.map(\.0)
            let badCount = Self.int(&rng, 1...5)
            for _ in 0..<badCount {
                arrival.insert(Position(device: "bad", time: .nan, lon: 13.3, lat: 52.5), at: Self.int(&rng, 0...arrival.count))
            }

            var stream = EventStream(engine: Self.makeEngine(s), lateness: 60)
            var events: [FenceEvent] = []
            var latestSeen = -Double.infinity, injectedLate = 0
            var i = 0
            while i < arrival.count {
                let chunk = Array(arrival[i..<min(arrival.count, i + Self.int(&rng, 1...40))])
                i += chunk.count
                events += chunk.count == 1 ? stream.push(chunk[0]) : stream.push(contentsOf: chunk)
                latestSeen = max(latestSeen, chunk.map(\.time).filter { !$0.isNaN }.max() ?? latestSeen)
                // Now and then, fixes later than the lateness: at a fence centre, where they would enter.
                if latestSeen.isFinite && rng.next() % 8 == 0 {
                    let f = s.fences[Self.int(&rng, 0...(s.fences.count - 1))]
                    var p = LonLat(lon: Self.lon0, lat: Self.lat0)
                    if case .circle(let c, _) = f.shape { p = c }
                    let device = rng.next() % 2 == 0 ? "dev\(rng.next() % 20)" : "late\(injectedLate)"
                    let time = latestSeen - 60 - 0.25 - Double(rng.next() % 100)
                    let late = Position(device: device, time: time, lon: p.lon, lat: p.lat)
                    XCTAssertEqual(stream.push(late), [], "seed \(seed)")
                    injectedLate += 1
                }
            }
            events += stream.flush()
            XCTAssertEqual(stream.pendingCount, 0)
            Self.assertSame(events, batch.events, "seed \(seed) stream vs batch")
            XCTAssertGreaterThan(injectedLate, 0, "seed \(seed)")
            XCTAssertEqual(stream.late, injectedLate, "seed \(seed)")
            XCTAssertEqual(stream.duplicates, batch.duplicates, "seed \(seed)")
            XCTAssertEqual(stream.rejected, badCount, "seed \(seed)")
            let byID = { (e: EventEngine) in e.snapshot().devices.sorted { $0.id < $1.id } }
            XCTAssertEqual(byID(stream.engine), byID(batchEngine), "seed \(seed)")
            XCTAssertFalse(batch.events.isEmpty)
        }
    }
}
