@testable import FenceEngine
import XCTest

/// A batch with many (fix, fence) matches is applied in pieces in event time
/// (`EventEngine.pieces`): the oracle is the same batch applied in one pass (`evaluateWhole`,
/// itself checked against slow trackers in `EventOracleTests`): the same events, counts,
/// refusals and state, over many seeds and every setting that keeps state across fixes.
final class BatchPiecesTests: XCTestCase {
    typealias Base = EventOracleTests

    struct Scenario {
        var fences: [Fence]
        var settings: EventSettings
        var batches: [[Position]]
    }

    /// Heavily overlapping fences (circles, stars, corridors, some expiring) over a small
    /// area, and a fleet walking through it, in two batches of 8,800-18,000 fixes,
    /// shuffled within each batch, with duplicates, bad fixes and a few fixes sent a batch late.
    /// Times on a quarter-second grid, so every sum is exact.
    static func makeScenario(seed: UInt64) -> Scenario {
        var rng = TestRandom(mixing: seed ^ 0x9_1EC_E5)
        func int(_ r: ClosedRange<Int>) -> Int { Base.int(&rng, r) }
        let lon0 = 13.3, lat0 = 52.45, span = 0.06
        let t0 = 1_700_000_000.0
        var fences: [Fence] = []
        for i in 0..<int(30...60) {
            let lon = lon0 + rng.uniform(0, span), lat = lat0 + rng.uniform(0, span)
            var fence: Fence
            switch rng.next() % 3 {
            case 0: fence = .circle(id: "c\(i)", lon: lon, lat: lat, radius: rng.uniform(800, 4_000))
            case 1:
                fence = .polygon(
                    id: "p\(i)", exterior: Shapes.star(&rng, lon: lon, lat: lat, radius: rng.uniform(0.01, 0.04), vertices: 6 + int(0...20)))
            default:
                fence = .polygon(
                    id: "r\(i)",
                    exterior: Shapes.corridor(lon: lon, lat: lat, length: rng.uniform(0.03, 0.1), width: rng.uniform(0.002, 0.01), angle: rng.uniform(0, .pi)))
            }
            if rng.next() % 5 == 0 { fence.expires = t0 + Double(int(60...3_000)) }
            if rng.next() % 4 == 0 { fence.dwell = Double(int(10...200)) }
            fences.append(fence)
        }
        var settings = EventSettings()
        settings.dwell = Double(int(30...300))
        settings.initialEvents = rng.next() % 2 == 0
        settings.exitDelay = rng.next() % 2 == 0 ? 0 : Double(int(5...60))
        if rng.next() % 2 == 0 { settings.idleEviction = Double(int(60...400)) }
        if rng.next() % 3 == 0 { settings.hysteresisMargin = Double(int(5...60)) }
        if rng.next() % 3 == 0 { settings.crossDetection = true; settings.actions = .all }

        var track: [Position] = []
        for d in 0..<int(220...300) {
            let startLon = lon0 + rng.uniform(0, span), startLat = lat0 + rng.uniform(0, span)
            var walk = RandomWalk(lon: startLon, lat: startLat, heading: rng.uniform(0, 2 * .pi), lon0: lon0, lat0: lat0, span: span)
            var t = t0 + Double(int(0...1_200))
            for _ in 0..<int(80...120) {
                var fix = Position(device: "dev\(d)", time: t, lon: walk.lon, lat: walk.lat)
                if rng.next() % 10 == 0 { fix.accuracy = rng.uniform(0, 40) }
                track.append(fix)
                walk.step(&rng, metres: 10...400)
                // Now and then a silence long enough for idle eviction.
                t += rng.next() % 40 == 0 ? Double(int(300...900)) : Double(int(1...30)) + 0.25 * Double(rng.next() % 4)
            }
        }
        let batchCount = 2
        let times = track.map(\.time).sorted()
        let cuts = (1..<batchCount).map { times[times.count * $0 / batchCount] }
        var batches = [[Position]](repeating: [], count: batchCount)
        for fix in track {
            var b = cuts.filter { fix.time >= $0 }.count
            // Early (within a minute of the cut, as a feed's jitter sends them): fine. The
            // first batch's latest fix is the watermark, and the second is cut only after it.
            if b > 0 && fix.time < cuts[b - 1] + 60 && rng.next() % 10 == 0 { b -= 1 }
            if b < batchCount - 1 && rng.next() % 200 == 0 { b += 1 }  // late: dropped, in both
            batches[b].append(fix)
            if rng.next() % 40 == 0 {  // a duplicate: same device and time, maybe elsewhere
                var dup = fix
                if rng.next() % 2 == 0 { dup.lon += rng.uniform(-0.01, 0.01) }
                batches[b].append(dup)
            }
        }
        for b in batches.indices {
            for _ in 0..<int(3...10) {
                var bad = track[int(0...(track.count - 1))]
                switch rng.next() % 4 {
                case 0: bad.time = .nan
                case 1: bad.lat = 91
                case 2: bad.device = ""
                default: bad.accuracy = -1
                }
                batches[b].append(bad)
            }
            batches[b].shuffle(using: &rng)
        }
        return Scenario(fences: fences, settings: settings, batches: batches)
    }

    static func makeEngine(_ s: Scenario) -> EventEngine {
        var store = FenceStore()
        let results = store.add(s.fences, threads: 1)
        precondition(results.allSatisfy { $0.error == nil }, "\(results.compactMap(\.error))")
        return try! EventEngine(store: store, settings: s.settings)
    }

    /// Matches the sample puts in a batch: what the budget is set against below.
    static func matchesPerFix(_ engine: EventEngine, _ batch: [Position]) -> Double {
        let good = batch.filter { $0.isUsable && !$0.device.isEmpty }
        return Double(good.reduce(0) { $0 + engine.store.fences(covering: $1.wgs84).count }) / Double(good.count)
    }

    func testPiecesGiveTheEventsOfOnePass() {
        var cutBatches = 0, events = 0, reasons = Set<FenceEventReason>(), kinds = Set<FenceEventKind>()
        var late = 0, duplicates = 0
        for seed in UInt64(1)...8 {
            let s = Self.makeScenario(seed: seed)
            var whole = Self.makeEngine(s)
            var cut = Self.makeEngine(s)
            let threads = 1 + Int(seed % 3)
            for (b, batch) in s.batches.enumerated() {
                let ctx = "seed \(seed) batch \(b) (\(batch.count) fixes, margin \(s.settings.hysteresisMargin), exit delay "
                    + "\(s.settings.exitDelay), idle \(s.settings.idleEviction), cross \(s.settings.crossDetection))"
                // A budget of a fifth of the batch's matches: about five pieces.
                let budget = max(1, Int(Self.matchesPerFix(cut, batch) * Double(batch.count) / 5))
                let pieces = cut.pieces(of: batch, matchBudget: budget)
                XCTAssertGreaterThanOrEqual(pieces?.count ?? 0, 3, ctx)
                if pieces != nil { cutBatches += 1 }
                let expected = whole.evaluateWhole(batch, threads: threads)
                let actual = cut.evaluate(batch, threads: threads, matchBudget: budget)
                guard Base.assertSame(actual.events, expected.events, ctx) else { return }
                XCTAssertEqual(actual.events, expected.events, ctx)
                XCTAssertEqual(actual.rejected.map(\.index), expected.rejected.map(\.index), ctx)
                XCTAssertEqual(actual.rejected.map(\.reason), expected.rejected.map(\.reason), ctx)
                XCTAssertEqual(actual.late, expected.late, ctx)
                XCTAssertEqual(actual.duplicates, expected.duplicates, ctx)
                XCTAssertEqual(actual.applied, expected.applied, ctx)
                XCTAssertEqual(actual.earliest, expected.earliest, ctx)
                XCTAssertEqual(cut.snapshot(), whole.snapshot(), ctx)
                XCTAssertEqual(cut.deviceCount, whole.deviceCount, ctx)
                events += expected.events.count
                late += expected.late
                duplicates += expected.duplicates
                for e in expected.events {
                    kinds.insert(e.kind)
                    if let r = e.reason { reasons.insert(r) }
                }
            }
        }
        XCTAssertEqual(cutBatches, 16)
        XCTAssertGreaterThan(events, 10_000)
        XCTAssertEqual(kinds, [.enter, .exit, .dwell, .cross])
        XCTAssertTrue(reasons.isSuperset(of: [.deviceIdle, .fenceExpired]), "\(reasons)")
        XCTAssertGreaterThan(late, 10)
        XCTAssertGreaterThan(duplicates, 100)
    }

    /// The pieces applied by the caller one after another (as `fence eval` does, writing each
    /// one's events before the next) give one pass's events, in order once merged.
    func testPiecesAppliedOneByOneGiveOnePass() {
        for seed in UInt64(21)...23 {
            let s = Self.makeScenario(seed: seed)
            var whole = Self.makeEngine(s)
            var cut = Self.makeEngine(s)
            for (b, batch) in s.batches.enumerated() {
                let budget = max(1, Int(Self.matchesPerFix(cut, batch) * Double(batch.count) / 8))
                let expected = whole.evaluateWhole(batch, threads: 2).events
                var events: [FenceEvent] = []
                guard let pieces = cut.pieces(of: batch, matchBudget: budget) else { return XCTFail("seed \(seed) batch \(b): not cut") }
                for indices in pieces {
                    events = FenceEvent.merged(events, cut.evaluate(indices.map { batch[$0] }, threads: 2, matchBudget: .max).events)
                }
                Base.assertSame(events, expected, "seed \(seed) batch \(b)")
            }
        }
    }

    // MARK: Around the watermark, and eviction's rounding (an independent review's cases)

    static let t0 = 1_700_000_000.0

    static func nestedCircles() -> FenceStore {
        var store = FenceStore()
        let results = store.add((0..<3).map { Fence.circle(id: "c\($0)", lon: 13.4, lat: 52.5, radius: 5_000 + Double($0) * 100) }, threads: 1)
        precondition(results.allSatisfy { $0.error == nil })
        return store
    }

    static func fix(_ device: String, _ t: Double) -> Position { Position(device: device, time: t, lon: 13.4, lat: 52.5) }

    /// Two copies of `engine` given `batch`, one in a pass and one in pieces: the same.
    func assertPiecesMatchOnePass(
        _ engine: EventEngine, _ batch: [Position], budget: Int, cut: Bool, _ context: String, line: UInt = #line
    ) {
        var whole = engine
        var pieced = engine
        XCTAssertEqual(pieced.pieces(of: batch, matchBudget: budget) != nil, cut, "\(context): cut or not", line: line)
        let expected = whole.evaluateWhole(batch, threads: 2)
        let actual = pieced.evaluate(batch, threads: 2, matchBudget: budget)
        Base.assertSame(actual.events, expected.events, context, line: line)
        XCTAssertEqual(actual.late, expected.late, context, line: line)
        XCTAssertEqual(actual.applied, expected.applied, context, line: line)
        XCTAssertEqual(pieced.snapshot(), whole.snapshot(), context, line: line)
        XCTAssertEqual(pieced.latestExpiredRemoval, whole.latestExpiredRemoval, context, line: line)
    }

    /// A batch from before the watermark is not cut there: a fence added since with an expiry
    /// the watermark passed, or idle eviction turned on since, would otherwise be judged at
    /// the first piece's end by the watermark, against fixes of later pieces that one pass
    /// judges by their own time (the review: later pieces' fixes went late, or lost the fence).
    /// A batch across the watermark is cut only after it.
    func testBatchesBeforeTheWatermarkAreNotCutThere() throws {
        for (label, straddle) in [("before the watermark", false), ("across it", true)] {
            var engine = try EventEngine(store: Self.nestedCircles(), settings: EventSettings())
            _ = engine.evaluate([Self.fix("z", Self.t0 + (straddle ? 2_000 : 10_000))], threads: 1)
            var late = Fence.circle(id: "late", lon: 13.4, lat: 52.5, radius: 1_000)
            late.expires = Self.t0 + 1_500
            XCTAssertNil(engine.add([late], threads: 1).results[0].error)
            // Eviction on from now; the fixes are half a second apart, each device a second apart
            // between two fixes of its own, and every 100th device sends again 150 s later.
            _ = try engine.updateSettings { $0.idleEviction = 100 }
            var batch = (0..<16_384).map { Self.fix("n\($0 / 2)", Self.t0 + Double($0) / 2) }
            batch += stride(from: 0, to: 8_192, by: 100).map { Self.fix("n\($0)", Self.t0 + Double($0) + 150) }
            assertPiecesMatchOnePass(engine, batch, budget: 8_192, cut: straddle, label)
        }
    }

    /// At a piece's end only devices idle by the exact sum of last fix and eviction time are
    /// evicted, so no idle exit is timed at a piece's end where one pass times it at the sum
    /// (the review: a device idle within `hasPassed`'s rounding of a piece's end went out at
    /// that end, in another written millisecond and before another device's enter).
    func testIdleExitsAtAPiecesEndKeepTheirTime() throws {
        var settings = EventSettings()
        settings.idleEviction = 100
        let engine = try EventEngine(store: Self.nestedCircles(), settings: settings)
        let last = Self.t0 + 0.000_500_2
        let beforeSum = last + 100 - 0.000_000_5  // within `hasPassed`'s slack of the sum
        let next = last + 100 + 0.000_3
        var batch = [Self.fix("d", last), Self.fix("y", beforeSum), Self.fix("d", next)]
        batch += (0..<4_096).map { Self.fix("a\($0)", Self.t0 + 50) }
        batch += (0..<4_096).map { Self.fix("b\($0)", next + 0.000_2) }
        XCTAssertTrue(EventEngine.hasPassed(from: last, to: beforeSum, 100), "the case needs the slack")
        assertPiecesMatchOnePass(engine, batch, budget: 8_192, cut: true, "rounding edge")
    }

    /// How a batch is cut: every fix once, input order within a piece, whole written
    /// milliseconds in time order, refused fixes first; no cut when not worth it.
    func testPiecesAreWholeMillisecondsInTimeOrder() {
        let s = Self.makeScenario(seed: 31)
        let engine = Self.makeEngine(s)
        let batch = s.batches[0]
        let perFix = Self.matchesPerFix(engine, batch)
        XCTAssertGreaterThan(perFix, 1, "the scenario's fences overlap")
        let total = perFix * Double(batch.count)
        guard let pieces = engine.pieces(of: batch, matchBudget: Int(total / 6)) else { return XCTFail("not cut") }
        XCTAssertTrue((5...7).contains(pieces.count), "\(pieces.count) pieces")
        XCTAssertEqual(pieces.flatMap { $0 }.sorted(), Array(batch.indices))
        var previousLast = -Double.infinity
        for (p, piece) in pieces.enumerated() {
            XCTAssertEqual(piece, piece.sorted(), "piece \(p) in input order")
            let good = piece.map { batch[$0] }.filter { $0.isUsable && !$0.device.isEmpty }
            XCTAssertEqual(good.count == piece.count, p > 0, "refused fixes go with the first piece only")
            let ms = good.map { FenceEvent.outputMillisecond($0.time) }
            XCTAssertGreaterThan(ms.min()!, previousLast, "piece \(p) starts after the last millisecond before it")
            previousLast = ms.max()!
            // Each piece's share of the matches is near the budget's (the sample's quantiles).
            XCTAssertLessThan(Double(good.count), 2.5 * Double(batch.count) / Double(pieces.count), "piece \(p)")
        }
        // Not worth a cut: the budget above the batch's matches, a small batch, one millisecond.
        XCTAssertNil(engine.pieces(of: batch, matchBudget: Int(total * 2)))
        XCTAssertNil(engine.pieces(of: Array(batch.prefix(EventEngine.minimumCutFixes - 1)), matchBudget: 1))
        let oneTime = batch.map { var f = $0; f.time = 1_700_000_000.25; return f }
        XCTAssertNil(engine.pieces(of: oneTime, matchBudget: 1))
        XCTAssertNil(engine.pieces(of: batch, matchBudget: EventEngine.defaultMatchBudget))
        // Nothing to apply: every fix refused, so no sample to estimate from (coverage audit:
        // never run; without the guard the estimate divided by zero and Int(nan) trapped).
        // The batch is one piece, every fix refused with its reason.
        let refused = batch.map { var f = $0; f.device = ""; return f }
        XCTAssertNil(engine.pieces(of: refused, matchBudget: 1))
        var copy = engine
        let r = copy.evaluate(refused, threads: 2, matchBudget: 1)
        XCTAssertEqual(r.rejected.count, refused.count)
        XCTAssertTrue(r.rejected.map(\.reason).contains("empty device id"))
        XCTAssertEqual(r.events.count, 0)
        XCTAssertEqual(r.applied, 0)
    }

    /// A fix whose written millisecond is a cut's starts the piece after the cut (README: a
    /// fix goes to the piece after the last cut at or before its millisecond), and cuts are
    /// sampled fixes' milliseconds: so every piece but the first starts at a sampled
    /// millisecond. (A mutation audit found a cut that sent its own millisecond before it
    /// unnoticed: the pieces were still whole milliseconds in time order.)
    func testAFixAtACutsMillisecondStartsThePieceAfterIt() {
        let s = Self.makeScenario(seed: 31)
        let engine = Self.makeEngine(s)
        let batch = s.batches[0]
        let total = Self.matchesPerFix(engine, batch) * Double(batch.count)
        guard let pieces = engine.pieces(of: batch, matchBudget: Int(total / 6)) else { return XCTFail("not cut") }
        let m = batch.count
        let samples = min(m, EventEngine.matchSampleSize)
        let sampled = Set((0..<samples).map { FenceEvent.outputMillisecond(batch[$0 * m / samples].time) })
        for (p, piece) in pieces.enumerated().dropFirst() {
            let first = piece.map { FenceEvent.outputMillisecond(batch[$0].time) }.min()!
            XCTAssertTrue(sampled.contains(first), "piece \(p) starts at \(first), no cut")
        }
    }
}
