@testable import FenceEngine
import XCTest

/// `EventStream`'s lateness rule against an oracle written from the documented rules alone
/// (SPEC "Status and events": "In streaming mode fixes up to a configured lateness are
/// reordered; later ones are dropped and counted, never applied"; `EventStream`'s doc comment:
/// the horizon is the latest fix time seen minus `lateness`, a fix older than the horizon when
/// it arrives is late, held fixes are applied in time order once the horizon passes them,
/// `flush` applies every held fix; the README: of two fixes of one device at one time the first
/// read is applied, the other dropped as a duplicate). Not from the stream's code.
///
/// The oracle walks the calls (pushes of a few arrivals, flushes) in order, deciding each fix's
/// fate (rejected, late, duplicate, taken), then applies the taken fixes of each device in time
/// order with `EventOracleTests.OracleTracker` (brute-force containment through `Oracle`). The
/// engine gets the same calls (`push(_:)`, `push(contentsOf:)` with an array or a lazy
/// sequence, `flush()`); after each, what the horizon implies is checked (fixes after it still
/// held, events before it out, none after it), and at the end the events, field by field, each
/// device's in order, the counts and the statuses.
///
/// Choices where the documents leave room (see the report that came with this file):
/// - A fix exactly `lateness` behind the latest seen is on the horizon, not older: taken.
/// - A fix that is both late and a duplicate counts as late (the horizon is checked first).
/// - A refused (malformed) fix is not "seen": it does not move the horizon, whatever its time.
/// - Whether a fix exactly on the horizon is released at once or held is left open; the
///   checks after each call allow both. Duplicates may be held until their release (and are
///   counted then): the counts are checked after the flush.
/// - A flush in mid-stream (as before a snapshot) applies everything held, so the horizon is
///   then the latest fix seen: a later fix before it is late.
/// - Each fix is judged against the horizon as it arrives: the fixes before it in the same
///   `push(contentsOf:)` have moved it. So the same arrivals give the same fates and events
///   however they are cut into calls (the engine judged a call's fixes against the horizon at
///   the call's start until this test found it: a fix more than `lateness` behind an earlier
///   fix of the same call was applied).
final class StreamLatenessOracleTests: XCTestCase {
    typealias Tracker = EventOracleTests.OracleTracker

    enum Fate: Equatable { case rejected, late, duplicate, taken }

    /// How a push hands its fixes over.
    enum Form { case one, lazySequence, array }
    enum Call {
        case push(Range<Int>, Form)
        case flush
    }

    struct Scenario {
        var fences: [Fence]
        var settings: EventSettings
        var lateness: Double
        var arrivals: [Position]
    }

    /// What the documented rules say about one arrival order, cut into calls.
    struct Prediction {
        var fates: [Fate] = []
        /// The horizon after each call.
        var horizonAfter: [Double] = []
        /// Events of the taken fixes, each device's in time order, devices in id order.
        var events: [FenceEvent] = []
        var perDevice: [String: [FenceEvent]] = [:]
        /// The taken fixes, in arrival order, with their arrival index.
        var taken: [Position] = []
        var takenArrival: [Int] = []
        var late = 0, duplicates = 0, rejected = 0
        /// Fixes taken exactly on the horizon; late ones exactly a quarter second before it;
        /// taken fixes that arrived after a later fix of their own device (truly reordered);
        /// copies that came late (counted late, not duplicate).
        var onHorizon = 0, justLate = 0, reordered = 0, lateDuplicates = 0
        var tracker: Tracker
        /// Event times, sorted, for the checks after each call.
        var sortedEventTimes: [Double] = []
    }

    static let lon0 = 13.20, lat0 = 52.40, span = 0.08, t0 = 1_700_000_000.0

    static func int(_ rng: inout TestRandom, _ r: ClosedRange<Int>) -> Int {
        r.lowerBound + Int(rng.next() % UInt64(r.count))
    }

    // MARK: The oracle

    static func predict(_ s: Scenario, _ calls: [Call]) -> Prediction {
        var p = Prediction(tracker: Tracker(fences: s.fences, settings: s.settings))
        var latest = -Double.infinity, floor = -Double.infinity
        struct Key: Hashable { var device: String; var time: Double }
        var seen = Set<Key>()
        var latestOfDevice: [String: Double] = [:]
        p.fates = Array(repeating: .rejected, count: s.arrivals.count)
        for call in calls {
            switch call {
            case .flush:
                floor = max(floor, latest)
            case .push(let range, _):
                for i in range {
                    let horizon = max(latest - s.lateness, floor)
                    let fix = s.arrivals[i]
                    let key = Key(device: fix.device, time: fix.time)
                    if !Tracker.isValid(fix) {
                        p.fates[i] = .rejected
                        p.rejected += 1
                    } else if fix.time < horizon {
                        p.fates[i] = .late
                        p.late += 1
                        if fix.time == horizon - 0.25 { p.justLate += 1 }
                        if seen.contains(key) { p.lateDuplicates += 1 }
                    } else if !seen.insert(key).inserted {
                        p.fates[i] = .duplicate
                        p.duplicates += 1
                    } else {
                        p.fates[i] = .taken
                        if fix.time == horizon { p.onHorizon += 1 }
                        if let l = latestOfDevice[fix.device], l > fix.time { p.reordered += 1 }
                        latestOfDevice[fix.device] = max(latestOfDevice[fix.device] ?? -.infinity, fix.time)
                        p.taken.append(fix)
                        p.takenArrival.append(i)
                        latest = max(latest, fix.time)
                    }
                }
            }
            p.horizonAfter.append(max(latest - s.lateness, floor))
        }
        // Each device's taken fixes in time order (times are unique per device by now).
        let byDevice = Dictionary(grouping: p.taken, by: \.device)
        for device in byDevice.keys.sorted() {
            var mine: [FenceEvent] = []
            for (k, fix) in byDevice[device]!.sorted(by: { $0.time < $1.time }).enumerated() {
                p.tracker.apply(fix, first: k == 0, into: &mine)
            }
            p.perDevice[device] = mine
            p.events += mine
        }
        p.sortedEventTimes = p.events.map(\.time).sorted()
        return p
    }

    /// Calls of random sizes up to `maxChunk` (one-fix calls through `push(_:)` or not), and
    /// now and then a flush when `flushes`; always a flush at the end.
    static func plan(_ count: Int, maxChunk: Int, flushes: Bool, seed: UInt64) -> [Call] {
        var rng = TestRandom(mixing: seed)
        var calls: [Call] = []
        var i = 0
        while i < count {
            let n = min(count - i, int(&rng, 1...maxChunk))
            let form: Form = n == 1 && rng.next() % 2 == 0 ? .one : (rng.next() % 2 == 0 ? .lazySequence : .array)
            calls.append(.push(i..<(i + n), form))
            i += n
            if flushes && rng.next() % 50 == 0 { calls.append(.flush) }
        }
        calls.append(.flush)
        return calls
    }

    // MARK: Scenarios

    static func makeScenario(seed: UInt64) -> Scenario {
        var rng = TestRandom(mixing: seed ^ 0x57_2E_A4_1A)
        var fences: [Fence] = []
        for i in 0..<int(&rng, 10...24) {
            let lon = lon0 + rng.uniform(0, span), lat = lat0 + rng.uniform(0, span)
            var f: Fence
            if rng.next() % 2 == 0 {
                f = .circle(id: "c\(i)", lon: lon, lat: lat, radius: rng.uniform(300, 2500))
            } else {
                let ring = Shapes.star(&rng, lon: lon, lat: lat, radius: rng.uniform(0.005, 0.02), vertices: int(&rng, 5...12))
                f = .polygon(id: "p\(i)", exterior: ring)
            }
            if rng.next() % 3 == 0 { f.group = "g\(rng.next() % 3)" }
            if rng.next() % 4 == 0 { f.dwell = rng.next() % 5 == 0 ? 0 : Double(int(&rng, 5...120)) }
            if rng.next() % 5 == 0 { f.actions = FenceActions(rawValue: UInt8(1 + rng.next() % 7)) }
            fences.append(f)
        }
        var settings = EventSettings()
        settings.dwell = Double(int(&rng, 20...200))
        settings.initialEvents = rng.next() % 3 != 0
        settings.exitDelay = rng.next() % 3 == 0 ? Double(int(&rng, 5...60)) : 0
        if rng.next() % 5 == 0 { settings.actions = FenceActions(rawValue: UInt8(1 + rng.next() % 7)) }

        // Lateness on a quarter-second grid, as every time here: all differences are exact.
        let lateness: Double
        switch seed % 6 {
        case 0: lateness = 0
        case 1: lateness = 0.25 * Double(int(&rng, 1...12))
        case 2: lateness = Double(int(&rng, 1...10))
        case 3: lateness = Double(int(&rng, 20...90))
        case 4: lateness = 120
        default: lateness = Double(int(&rng, 0...60)) + 0.5
        }

        // Each device's track: a random walk, whole or quarter seconds apart, so that devices
        // often share a time.
        let deviceCount = int(&rng, 3...10)
        var track: [Position] = []
        for d in 0..<deviceCount {
            var walk = RandomWalk(
                lon: lon0 + rng.uniform(0, span), lat: lat0 + rng.uniform(0, span), heading: rng.uniform(0, 2 * .pi),
                lon0: lon0, lat0: lat0, span: span)
            var t = t0 + Double(int(&rng, 0...60))
            let quarterSteps = rng.next() % 3 == 0
            for _ in 0..<int(&rng, 20...70) {
                track.append(Position(device: "dev\(d)", time: t, lon: walk.lon, lat: walk.lat))
                walk.step(&rng, metres: 20...400)
                t += quarterSteps ? 0.25 * Double(int(&rng, 1...40)) : Double(int(&rng, 1...12))
            }
        }

        // Arrival: time plus a delay, some none, some exactly the lateness, most within it,
        // some beyond it; a few copies (same device and time, maybe another position).
        func delay(_ rng: inout TestRandom) -> Double {
            let r = rng.next() % 100
            if r < 10 { return 0 }
            if r < 22 { return lateness }
            if r < 37 { return lateness + 0.25 * Double(int(&rng, 1...240)) }
            return 0.25 * Double(int(&rng, 0...Int(lateness * 4)))
        }
        var keyed: [(key: Double, tie: UInt64, fix: Position)] = []
        for fix in track {
            keyed.append((fix.time + delay(&rng), rng.next(), fix))
            if rng.next() % 12 == 0 {
                var copy = fix
                if rng.next() % 2 == 0 { copy.lon += rng.uniform(-0.004, 0.004) }
                keyed.append((fix.time + delay(&rng), rng.next(), copy))
            }
        }
        keyed.sort { ($0.key, $0.tie) < ($1.key, $1.tie) }

        // Fixes placed relative to the latest valid time so far: exactly on the horizon, a
        // quarter second before it (late), a quarter second after it; malformed ones, some
        // dated far ahead (they must not move the horizon); and in some scenarios one valid
        // fix far ahead, which makes most of what follows late.
        var arrivals: [Position] = []
        var latest = -Double.infinity
        let jumpAt = seed % 7 == 3 ? keyed.count / 2 : -1
        var fresh = 0
        func somewhere(_ rng: inout TestRandom) -> (Double, Double) {
            if rng.next() % 2 == 0, case .circle(let c, _) = fences[int(&rng, 0...(fences.count - 1))].shape { return (c.lon, c.lat) }
            return (lon0 + rng.uniform(0, span), lat0 + rng.uniform(0, span))
        }
        for (k, item) in keyed.enumerated() {
            arrivals.append(item.fix)
            latest = max(latest, item.fix.time)
            if k == jumpAt {
                let (lon, lat) = somewhere(&rng)
                let ahead = Position(device: "dev\(int(&rng, 0...(deviceCount - 1)))", time: latest + 3 * lateness + 200, lon: lon, lat: lat)
                arrivals.append(ahead)
                latest = ahead.time
            }
            if rng.next() % 8 == 0 {
                let offset = [0.0, 0, -0.25, 0.25][int(&rng, 0...3)]
                let device: String
                if rng.next() % 6 == 0 {
                    device = "new\(fresh)"
                    fresh += 1
                } else {
                    device = "dev\(int(&rng, 0...(deviceCount - 1)))"
                }
                let (lon, lat) = somewhere(&rng)
                arrivals.append(Position(device: device, time: latest - lateness + offset, lon: lon, lat: lat))
            }
            if rng.next() % 40 == 0 {
                var bad = item.fix
                if rng.next() % 2 == 0 { bad.time = latest + 10_000 }
                switch rng.next() % 6 {
                case 0: bad.lat = .nan
                case 1: bad.lon = 181
                case 2: bad.lat = -90.5
                case 3: bad.accuracy = -3
                case 4: bad.device = ""
                default: bad.time = .nan
                }
                arrivals.append(bad)
            }
        }
        return Scenario(fences: fences, settings: settings, lateness: lateness, arrivals: arrivals)
    }

    static func makeEngine(_ s: Scenario) -> EventEngine {
        var store = FenceStore()
        let results = store.add(s.fences, threads: 1)
        precondition(results.allSatisfy { $0.error == nil }, "\(results.compactMap(\.error))")
        return try! EventEngine(store: store, settings: s.settings)
    }

    // MARK: The engine, and the comparisons

    /// Number of sorted `times` below `t` (or at most `t` with `orEqual`).
    static func count(_ times: [Double], below t: Double, orEqual: Bool = false) -> Int {
        var lo = 0, hi = times.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if times[mid] < t || (orEqual && times[mid] == t) { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// Makes the calls, checking after each what the horizon implies: taken fixes after the
    /// horizon are still held, taken fixes before it are applied (only taken fixes and copies
    /// at or after it may be held); no event after the horizon is out yet, every event before
    /// it is; after a flush nothing is held. Returns every event in the order they came out.
    static func runStream(
        _ s: Scenario, _ calls: [Call], _ p: Prediction, ctx: String, threads: Int = 1, file: StaticString = #filePath, line: UInt = #line
    ) -> (events: [FenceEvent], stream: EventStream) {
        var stream = EventStream(engine: makeEngine(s), lateness: s.lateness, threads: threads)
        var events: [FenceEvent] = []
        var arrived = 0, failures = 0
        for (c, call) in calls.enumerated() {
            let out: [FenceEvent]
            switch call {
            case .flush:
                out = stream.flush()
            case .push(let range, .one):
                out = stream.push(s.arrivals[range.lowerBound])
                arrived = range.upperBound
            case .push(let range, .lazySequence):
                out = stream.push(contentsOf: s.arrivals[range].lazy.map { $0 })
                arrived = range.upperBound
            case .push(let range, .array):
                out = stream.push(contentsOf: Array(s.arrivals[range]))
                arrived = range.upperBound
            }
            events += out
            guard failures < 3 else { continue }
            let h = p.horizonAfter[c]
            var mustHold = 0, mayHold = 0
            for (k, fix) in p.taken.enumerated() where p.takenArrival[k] < arrived && fix.time > h { mustHold += 1 }
            for i in 0..<arrived where (p.fates[i] == .taken || p.fates[i] == .duplicate) && s.arrivals[i].time >= h { mayHold += 1 }
            if case .flush = call { mayHold = 0 }
            let mustBeOut = count(p.sortedEventTimes, below: h), mayBeOut = count(p.sortedEventTimes, below: h, orEqual: true)
            let at = "\(ctx): call \(c) (\(call)), after \(arrived) arrivals, horizon t0+\(h - t0)"
            var ok = true
            if !(mustHold...max(mustHold, mayHold)).contains(stream.pendingCount) {
                XCTFail("\(at): \(stream.pendingCount) fixes held, expected \(mustHold)...\(mayHold)", file: file, line: line)
                ok = false
            }
            if !(mustBeOut...mayBeOut).contains(events.count) {
                XCTFail("\(at): \(events.count) events out, expected \(mustBeOut)...\(mayBeOut)", file: file, line: line)
                ok = false
            }
            if let e = out.first(where: { $0.time > h }) {
                XCTFail("\(at): an event after the horizon is out: \(EventOracleTests.describe(e))", file: file, line: line)
                ok = false
            }
            if !ok { failures += 1 }
        }
        return (events, stream)
    }

    /// The engine's events against the oracle's: the same events (every field), each device's
    /// in the same order, and the whole list in event time order.
    @discardableResult
    static func compare(
        _ actual: [FenceEvent], _ p: Prediction, _ ctx: String, file: StaticString = #filePath, line: UInt = #line
    ) -> Bool {
        guard EventOracleTests.assertSame(actual.sorted(), p.events.sorted(), ctx + " (as sorted lists)", file: file, line: line)
        else { return false }
        let actualByDevice = Dictionary(grouping: actual, by: \.device)
        for (device, expected) in p.perDevice {
            guard EventOracleTests.assertSame(actualByDevice[device] ?? [], expected, "\(ctx) device \(device)", file: file, line: line)
            else { return false }
        }
        if let k = actual.indices.dropFirst().first(where: { actual[$0].time < actual[$0 - 1].time }) {
            XCTFail("\(ctx): events out of time order at \(k): \(EventOracleTests.describe(actual[k - 1])) then \(EventOracleTests.describe(actual[k]))", file: file, line: line)
            return false
        }
        return true
    }

    static func checkCounts(_ stream: EventStream, _ p: Prediction, _ s: Scenario, _ ctx: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(stream.late, p.late, "\(ctx): late", file: file, line: line)
        XCTAssertEqual(stream.duplicates, p.duplicates, "\(ctx): duplicates", file: file, line: line)
        XCTAssertEqual(stream.rejected, p.rejected, "\(ctx): rejected", file: file, line: line)
        XCTAssertEqual(stream.pendingCount, 0, "\(ctx): held after flush", file: file, line: line)
        // The engine's statuses at the end are the oracle's visits.
        for (device, visits) in p.tracker.visits {
            XCTAssertEqual(stream.engine.fences(insideOf: device), visits.keys.sorted(), "\(ctx) \(device)", file: file, line: line)
            for (fence, v) in visits {
                XCTAssertEqual(
                    stream.engine.status(device: device, fence: fence), v.stayed ? .stayed : .inside, "\(ctx) \(device) \(fence)",
                    file: file, line: line)
            }
        }
        // Devices none of whose fixes was taken (late or refused only) are unknown to the engine.
        let known = Set(p.taken.map(\.device))
        for device in Set(s.arrivals.map(\.device)) where !known.contains(device) && !device.isEmpty {
            XCTAssertEqual(stream.engine.fences(insideOf: device), [], "\(ctx) \(device)", file: file, line: line)
        }
    }

    // MARK: Tests

    func testLatenessRuleMatchesOracle() {
        var totals = Prediction(tracker: Tracker(fences: [], settings: EventSettings()))
        var kinds = [FenceEventKind: Int](), events = 0, runs = 0, initials = 0, zeroLateness = 0, seeds = 0
        var chunkedRuns = 0, midFlushes = 0
        for seed in UInt64(1)...48 {
            let s = Self.makeScenario(seed: seed)
            let ctx = "seed \(seed) (lateness \(s.lateness), \(s.arrivals.count) arrivals)"
            seeds += 1
            if s.lateness == 0 { zeroLateness += 1 }
            // Fix by fix (the documented reading exactly), then in chunks; flushes in mid-stream
            // in half the seeds.
            let single = Self.plan(s.arrivals.count, maxChunk: 1, flushes: seed % 2 == 0, seed: seed &* 31)
            let perFix = Self.predict(s, single)
            let chunked = Self.plan(s.arrivals.count, maxChunk: [4, 16, 64, 400][Int(seed % 4)], flushes: seed % 2 == 1, seed: seed &* 31 &+ 1)
            for (k, calls) in [single, chunked].enumerated() {
                let p = k == 0 ? perFix : Self.predict(s, calls)
                let maxChunk = calls.map { if case .push(let r, _) = $0 { r.count } else { 0 } }.max()!
                let ctx = "\(ctx) calls of up to \(maxChunk)"
                // The chunked run on 2 threads: the same events as the oracle's, as fix by fix.
                let (actual, stream) = Self.runStream(s, calls, p, ctx: ctx, threads: 1 + k)
                guard Self.compare(actual, p, ctx) else { return }
                Self.checkCounts(stream, p, s, ctx)
                runs += 1
                events += p.events.count
                midFlushes += calls.count - calls.filter { if case .push = $0 { true } else { false } }.count - 1
                if maxChunk > 1 { chunkedRuns += 1 }
            }
            let p = perFix
            // The taken fixes as one batch, on 1 and on 2 threads: the stream's events, sorted.
            var rng = TestRandom(mixing: seed ^ 0xBA7C)
            let batch1 = { var e = Self.makeEngine(s); return e.evaluate(p.taken.shuffled(using: &rng), threads: 1) }()
            let batch2 = { var e = Self.makeEngine(s); return e.evaluate(p.taken.shuffled(using: &rng), threads: 2) }()
            XCTAssertEqual(batch1.events, batch2.events, "\(ctx): batch of the taken fixes, 1 vs 2 threads")
            XCTAssertEqual(batch1.duplicates + batch1.late + batch2.duplicates + batch2.late, 0, ctx)
            EventOracleTests.assertSame(batch2.events, p.events.sorted(), "\(ctx): batch of the taken fixes (2 threads) vs oracle")

            totals.late += p.late
            totals.duplicates += p.duplicates
            totals.rejected += p.rejected
            totals.onHorizon += p.onHorizon
            totals.justLate += p.justLate
            totals.reordered += p.reordered
            totals.lateDuplicates += p.lateDuplicates
            totals.taken += p.taken
            for e in p.events {
                kinds[e.kind, default: 0] += 1
                if e.initial { initials += 1 }
            }
        }
        // The scenarios exercise every rule.
        XCTAssertGreaterThanOrEqual(seeds, 40)
        XCTAssertGreaterThanOrEqual(zeroLateness, 6)
        XCTAssertGreaterThan(totals.late, 500, "late fixes")
        XCTAssertGreaterThan(totals.justLate, 50, "fixes a quarter second before the horizon")
        XCTAssertGreaterThan(totals.onHorizon, 100, "fixes exactly on the horizon (taken)")
        XCTAssertGreaterThan(totals.reordered, 300, "fixes taken after a later fix of their device")
        XCTAssertGreaterThan(totals.duplicates, 50, "duplicates")
        XCTAssertGreaterThan(totals.lateDuplicates, 20, "copies that came late")
        XCTAssertGreaterThan(totals.rejected, 30, "refused fixes")
        XCTAssertGreaterThan(midFlushes, 20, "flushes in mid-stream")
        for kind in [FenceEventKind.enter, .exit, .dwell] { XCTAssertGreaterThan(kinds[kind] ?? 0, 200, "\(kind)") }
        XCTAssertGreaterThan(initials, 30)
        print(
            "StreamLatenessOracleTests: \(seeds) seeds, \(runs) runs, \(events) events compared; fix by fix: "
                + "\(totals.taken.count) fixes taken, \(totals.late) late (\(totals.justLate) a quarter second before the horizon, "
                + "\(totals.lateDuplicates) late copies), \(totals.onHorizon) taken on the horizon, \(totals.reordered) reordered, "
                + "\(totals.duplicates) duplicates, \(totals.rejected) refused, \(midFlushes) flushes in mid-stream; "
                + "\(chunkedRuns) runs in chunks; events \(kinds)")
    }

    /// Hand-made cases at the edges, with the expected fates written out.
    func testEdgesByHand() {
        let fence = Fence.circle(id: "a", lon: 13.4, lat: 52.5, radius: 1000)
        var settings = EventSettings()
        settings.dwell = 1_000_000
        let inside = (13.4, 52.5), outside = (13.6, 52.5)
        func fix(_ d: String, _ t: Double, _ at: (Double, Double)) -> Position { Position(device: d, time: t, lon: at.0, lat: at.1) }
        func run(_ lateness: Double, _ arrivals: [Position]) -> (summary: [String], stream: EventStream, prediction: Prediction) {
            let s = Scenario(fences: [fence], settings: settings, lateness: lateness, arrivals: arrivals)
            var stream = EventStream(engine: Self.makeEngine(s), lateness: lateness)
            var events: [FenceEvent] = []
            for f in arrivals { events += stream.push(f) }
            events += stream.flush()
            let p = Self.predict(s, Self.plan(arrivals.count, maxChunk: 1, flushes: false, seed: 0))
            Self.compare(events, p, "by hand, lateness \(lateness)")
            Self.checkCounts(stream, p, s, "by hand, lateness \(lateness)")
            return (summary(events), stream, p)
        }
        // Lateness 10: 90 is exactly 10 behind 100, taken and put before 100; 89 is late.
        var r = run(10, [fix("x", 100, outside), fix("x", 90, inside), fix("x", 89, inside), fix("x", 95, inside)])
        XCTAssertEqual(r.summary, ["90 x a enter initial", "100 x a exit 10s"])
        XCTAssertEqual(r.prediction.fates, [.taken, .taken, .late, .taken])
        XCTAssertEqual(r.stream.late, 1)
        // Lateness 0: another device at the latest time is taken; the same device's copy is a
        // duplicate; anything earlier is late, also a device's first fix.
        r = run(0, [fix("x", 100, inside), fix("y", 100, inside), fix("x", 100, outside), fix("z", 99.75, inside), fix("y", 101, outside)])
        XCTAssertEqual(r.summary, ["100 x a enter initial", "100 y a enter initial", "101 y a exit 1s"])
        XCTAssertEqual([r.stream.late, r.stream.duplicates], [1, 1])
        // A copy arriving once its original is behind the horizon is late, not a duplicate.
        r = run(5, [fix("x", 100, inside), fix("x", 110, outside), fix("x", 100, inside), fix("x", 105, inside), fix("x", 105, outside)])
        XCTAssertEqual(r.prediction.fates, [.taken, .taken, .late, .taken, .duplicate])
        XCTAssertEqual(r.summary, ["100 x a enter initial", "110 x a exit 10s"])
        // A refused fix dated far ahead does not move the horizon.
        var bad = fix("x", 1_000_000, inside)
        bad.lat = 91
        r = run(5, [fix("x", 100, outside), bad, fix("x", 99, inside), fix("x", 101, inside)])
        XCTAssertEqual(r.prediction.fates, [.taken, .rejected, .taken, .taken])
        XCTAssertEqual(r.summary, ["99 x a enter initial", "100 x a exit 1s", "101 x a enter"])
        XCTAssertEqual(r.stream.rejected, 1)
        // One call with a fix 50 s behind the one before it (lateness 10): late, as when the
        // two are pushed one by one (it was applied, the call judged at its start).
        for together in [false, true] {
            var stream = EventStream(engine: Self.makeEngine(Scenario(fences: [fence], settings: settings, lateness: 10, arrivals: [])), lateness: 10)
            let arrivals = [fix("x", 100, outside), fix("x", 50, inside)]
            var events = together ? stream.push(contentsOf: arrivals) : arrivals.flatMap { stream.push($0) }
            events += stream.flush()
            XCTAssertEqual(events, [], "together: \(together)")
            XCTAssertEqual(stream.late, 1, "together: \(together)")
        }
    }

    /// A stream checkpointed without a flush (the engine's snapshot through its bytes, and
    /// `held`) and resumed at every few arrivals gives the events and late count of the stream
    /// never stopped (a library audit: resuming from a flushed stream applied held fixes early
    /// and then dropped a fix dated before them as late).
    func testResumedStreamsAreTheStreamNeverStopped() throws {
        // Before any fix: nothing held, no clock (and JSON can write it).
        let fresh = EventStream(engine: EventEngine(), lateness: 5).held
        XCTAssertEqual(fresh, EventStream.Held(fixes: [], latestSeen: nil, horizon: nil))
        XCTAssertEqual(try JSONDecoder().decode(EventStream.Held.self, from: JSONEncoder().encode(fresh)), fresh)
        var cuts = 0, heldAtCuts = 0, lateAfterCuts = 0
        for seed in UInt64(1)...24 {
            let s = Self.makeScenario(seed: seed)
            var whole = EventStream(engine: Self.makeEngine(s), lateness: s.lateness)
            var expected: [FenceEvent] = []
            for f in s.arrivals { expected += whole.push(f) }
            expected += whole.flush()
            let step = max(1, s.arrivals.count / 7)
            for cut in stride(from: 1, to: s.arrivals.count, by: step) {
                var first = EventStream(engine: Self.makeEngine(s), lateness: s.lateness)
                var events: [FenceEvent] = []
                for f in s.arrivals[..<cut] { events += first.push(f) }
                let bytes = first.engine.snapshot().encoded()
                var engine = Self.makeEngine(s)
                XCTAssertEqual(try engine.restore(TrackerSnapshot(decoding: bytes)), 0)
                // `held` kept as JSON, as a service would.
                let held = try JSONDecoder().decode(EventStream.Held.self, from: JSONEncoder().encode(first.held))
                XCTAssertEqual(held, first.held)
                var resumed = EventStream(engine: engine, lateness: s.lateness, threads: 2, resuming: held)
                for f in s.arrivals[cut...] { events += resumed.push(f) }
                events += resumed.flush()
                EventOracleTests.assertSame(events, expected, "seed \(seed), resumed after \(cut) of \(s.arrivals.count) arrivals")
                XCTAssertEqual(first.late + resumed.late, whole.late, "seed \(seed), cut \(cut)")
                cuts += 1
                heldAtCuts += first.pendingCount
                lateAfterCuts += resumed.late
            }
        }
        XCTAssertGreaterThan(heldAtCuts, 100, "fixes held at the cuts")
        XCTAssertGreaterThan(lateAfterCuts, 50, "late fixes judged by a resumed stream's clock")
        print("StreamLatenessOracleTests: \(cuts) resumed streams, \(heldAtCuts) fixes held at the cuts, \(lateAfterCuts) late after")

        // The audit's case: a circle, lateness 30; fixes at 0 and 20 outside, then one at 10
        // inside. Resumed from `held`, the fix at 10 is applied in order.
        let fence = Fence.circle(id: "a", lon: 0, lat: 0, radius: 1000)
        var store = FenceStore()
        _ = store.add([fence])
        let base = try EventEngine(store: store, settings: EventSettings())
        var first = EventStream(engine: base, lateness: 30)
        XCTAssertEqual(first.push(contentsOf: [Position(device: "d", time: 0, lon: 1, lat: 1), Position(device: "d", time: 20, lon: 1, lat: 1)]), [])
        var resumed = EventStream(engine: first.engine, lateness: 30, resuming: first.held)
        let out = resumed.push(Position(device: "d", time: 10, lon: 0, lat: 0)) + resumed.flush()
        XCTAssertEqual(out.map { "\($0.time) \($0.kind)" }, ["10.0 enter", "20.0 exit"])
        XCTAssertEqual(resumed.late, 0)
    }

    /// Fence edits through a stream's engine come between the fixes applied and those held.
    func testFenceEditsMidStream() throws {
        var store = FenceStore()
        _ = store.add([Fence.circle(id: "a", lon: 0, lat: 0, radius: 1000)])
        var stream = EventStream(engine: try EventEngine(store: store, settings: EventSettings()), lateness: 10)
        var events = stream.push(contentsOf: [Position(device: "d", time: 0, lon: 0, lat: 0), Position(device: "d", time: 20, lon: 0, lat: 0)])
        XCTAssertEqual(events.map { "\($0.time) \($0.kind)" }, ["0.0 enter"])
        // Removed with the fix at 20 still held: the exit is at the last fix applied, and the
        // held fix then finds no fence.
        events = stream.engine.remove(ids: ["a"])
        XCTAssertEqual(events.map { "\($0.time) \($0.kind) \($0.reason.map { "\($0)" } ?? "")" }, ["0.0 exit fenceRemoved"])
        XCTAssertEqual(stream.flush(), [])
    }

    /// The `AsyncSequence` form: the fixes one by one, a flush at their end.
    func testAsyncEventsMatchOracle() async throws {
        for seed in UInt64(61)...66 {
            let s = Self.makeScenario(seed: seed)
            let p = Self.predict(s, Self.plan(s.arrivals.count, maxChunk: 1, flushes: false, seed: 0))
            let fixes = AsyncStream<Position> { c in
                for f in s.arrivals { c.yield(f) }
                c.finish()
            }
            var events: [FenceEvent] = []
            for try await e in EventStream.events(from: fixes, engine: Self.makeEngine(s), lateness: s.lateness) { events.append(e) }
            Self.compare(events, p, "seed \(seed) async (lateness \(s.lateness))")
        }
    }
}
