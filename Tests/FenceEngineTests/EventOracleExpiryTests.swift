@testable import FenceEngine
import XCTest

/// Fence expiry (`Fence.expires`) and idle eviction (`EventSettings.idleEviction`, the CLI's
/// `--evict-idle`) against a slow tracker written from SPEC ("expires: removed, with exit for
/// devices inside") and the README's rules for them, not from the engine's code:
///
/// - A fence whose `expires` is at or before a fix's time is not there for that fix. A batch's
///   latest fix time (never going back) is the clock: at a batch's end the fences it passed
///   leave the store, and so do the visits of them; a device's own fix at or past the expiry
///   ends its visit too. Either way the `exit` (reason `fence-expired`) is timed at the expiry
///   (never before the device's last fix), at the device's last fix's position, `inside_s`
///   counting to the exit's time.
/// - With eviction after S seconds (W = max(S, exit delay)): a device without a fix for W of
///   event time is dropped, found by its next fix (a gap of W or more) or by a batch's end whose
///   clock is W past its last fix. Its visits end with `exit`, reason `device-idle`, at its last
///   fix + W (never later than the fix or clock that found it), `inside_s` counting to its last
///   fix; a visit whose fence expires at or before that idle time ends at the expiry instead
///   (`fence-expired`). Its next fix is a first fix (`initial`). A fix of a device not held that
///   is from before the last batch end's horizon (clock - W) is late.
/// - At one time, an exit timed by a clock goes before what the fix at that time causes; events
///   are in (time, device, fence) order, and in the order they happened within that.
/// - Edits: removal (`fence-removed`, at the time given but never before the last fix),
///   replacement (`fence-replaced` when the new shape misses the last fix; the new expiry holds
///   from then on).
///
/// Where SPEC and README leave a choice, the oracle takes the engine's (each found by a
/// difference, then checked against the engine's documentation):
/// - A fence added or replaced with an `expires` the clock already passed expires at once, as
///   at the end of the batch that passed it: a later batch's older fix does not enter it, and
///   a replaced fence's visits end `fence-expired`. (Until session 36 it stayed until the next
///   batch's end, which a state restore, dropping such fences at once, did not repeat: a NATS
///   worker resumed from a checkpoint taken in between lost that batch's events with it.)
/// - Replacing a fence by the same shape ends no visit, also not one waiting out an exit
///   delay whose last fix is outside (`EventEngine.add`); another shape missing it does.
/// - A fix of a device not held exactly at the horizon (last batch end's clock - W) is late,
///   as an evicted device's last fix repeated would be; W includes the exit delay there too.
final class EventOracleExpiryTests: XCTestCase {
    typealias Base = EventOracleTests
    typealias Outcome = EventOracleTests.Outcome

    // MARK: The oracle

    final class LifetimeOracle {
        struct Visit {
            var enterTime: Double
            var stayed = false
            var pendingSince: Double?
        }
        struct Held {
            var time: Double, lon: Double, lat: Double
            var visits: [String: Visit] = [:]
        }
        /// What the scenarios exercised, by rule (counted by the oracle).
        typealias Stats = RuleCounts
        static let tolerance = 1e-6

        var fences: [String: Fence] = [:]
        let cover = Oracle([])
        let settings: EventSettings
        var held: [String: Held] = [:]
        var everSeen: Set<String> = []
        var watermark = -Double.infinity
        /// The last batch end's clock less the eviction window: a device not held sending a fix
        /// from then or before is late.
        var horizon = -Double.infinity
        /// The same less S alone (not the exit delay): for the statistics.
        var horizonBySeconds = -Double.infinity
        var stats = Stats()
        private var produced: [(event: FenceEvent, seq: Int)] = []
        private var seq = 0

        init(fences: [Fence], settings: EventSettings) {
            self.settings = settings
            for f in fences {
                self.fences[f.id] = f
                cover.add(f)
            }
        }

        /// The eviction window: S, but at least the exit delay; nil without eviction.
        var window: Double? { settings.idleEviction > 0 ? max(settings.idleEviction, settings.exitDelay) : nil }

        func expired(_ fence: Fence, at t: Double) -> Bool { fence.expires.map { $0 <= t } ?? false }

        func emit(
            _ kind: FenceEventKind, _ fence: Fence, device: String, time: Double, lon: Double, lat: Double,
            initial: Bool = false, reason: FenceEventReason? = nil, inside: Double? = nil
        ) {
            guard (fence.actions ?? settings.actions).contains(kind.action) else { return }
            produced.append(
                (FenceEvent(
                    time: time, device: device, fence: fence.id, group: fence.group, kind: kind, lon: lon, lat: lat,
                    initial: initial, reason: reason, insideSeconds: inside), seq))
            seq += 1
        }

        /// The events so far, in (time, device, fence) order and the order they happened in.
        func take() -> [FenceEvent] {
            let out = produced.sorted { ($0.event.time, $0.event.device, $0.event.fence, $0.seq) < ($1.event.time, $1.event.device, $1.event.fence, $1.seq) }
            produced = []
            return out.map(\.event)
        }

        // Ending visits

        /// Visits of fences expired at `t` end at their expiry (never before the last fix).
        func expireVisits(_ device: String, _ h: inout Held, upTo t: Double, count: (inout Stats) -> Void) {
            for id in h.visits.keys.sorted() {
                let fence = fences[id]!
                guard let e = fence.expires, e <= t else { continue }
                let v = h.visits[id]!
                let time = max(e, h.time)
                emit(.exit, fence, device: device, time: time, lon: h.lon, lat: h.lat, reason: .fenceExpired, inside: time - v.enterTime)
                h.visits[id] = nil
                count(&stats)
                if e < h.time { stats["expiredBeforeLastFix"] += 1 }
                if e == t { stats["expiredExactlyAtClock"] += 1 }
            }
        }

        /// The device is idle: each visit ends at the idle time, or at its fence's expiry when that
        /// is not later.
        func evict(_ device: String, _ h: Held, idleAt i: Double) {
            for id in h.visits.keys.sorted() {
                let fence = fences[id]!
                let v = h.visits[id]!
                if v.pendingSince != nil { stats["evictedWithPending"] += 1 }
                if let e = fence.expires, e <= i {
                    if e == i { stats["expiryTiesIdle"] += 1 }
                    if e < h.time { stats["expiredBeforeLastFix"] += 1 }
                    let time = max(e, h.time)
                    emit(.exit, fence, device: device, time: time, lon: h.lon, lat: h.lat, reason: .fenceExpired, inside: time - v.enterTime)
                    stats["expiryBeforeIdle"] += 1
                } else {
                    emit(.exit, fence, device: device, time: i, lon: h.lon, lat: h.lat, reason: .deviceIdle, inside: h.time - v.enterTime)
                    stats["idleExits"] += 1
                }
            }
            held[device] = nil
        }

        // Batches

        func evaluate(_ fixes: [Position]) -> Outcome {
            var out = Outcome()
            var byDevice: [String: [(index: Int, fix: Position)]] = [:]
            var clock = watermark
            for (i, f) in fixes.enumerated() {
                if Base.OracleTracker.isValid(f) {
                    byDevice[f.device, default: []].append((i, f))
                    clock = max(clock, f.time)
                } else {
                    out.rejected.append(i)
                }
            }
            for device in byDevice.keys.sorted() {
                for (_, fix) in byDevice[device]!.sorted(by: { ($0.fix.time, $0.index) < ($1.fix.time, $1.index) }) {
                    if let h = held[device] {
                        if fix.time == h.time {
                            out.duplicates += 1
                            stats["duplicates"] += 1
                            continue
                        }
                        if fix.time < h.time {
                            out.late += 1
                            stats["lateHeld"] += 1
                            continue
                        }
                    } else if fix.time <= horizon {
                        // At the horizon too: a device whose last fix was there has been
                        // evicted, and its fix again would be a duplicate the engine cannot
                        // tell from a new device's (README: "cannot tell a device it evicted
                        // from one it never saw").
                        out.late += 1
                        stats["lateBeforeHorizon"] += 1
                        if fix.time == horizon { stats["lateAtHorizon"] += 1 }
                        continue
                    } else if fix.time <= horizonBySeconds {
                        stats["appliedWithinExitDelayOfHorizon"] += 1
                    }
                    apply(fix)
                    out.applied += 1
                }
            }
            endBatch(clock: clock)
            out.events = take()
            return out
        }

        func apply(_ fix: Position) {
            let device = fix.device, t = fix.time
            if let h = held[device], let w = window, t - h.time >= w - Self.tolerance {
                if t - h.time == w { stats["exactGap"] += 1 }
                evict(device, h, idleAt: min(h.time + w, t))
                stats["idleAtFix"] += 1
            }
            let first = held[device] == nil
            if first && everSeen.contains(device) { stats["firstAgain"] += 1 }
            everSeen.insert(device)
            var h = held[device] ?? Held(time: t, lon: fix.lon, lat: fix.lat)
            if !first {
                for id in h.visits.keys where fences[id]?.expires == t { stats["fixAtExpiry"] += 1 }
                expireVisits(device, &h, upTo: t) { $0["expiredAtFix"] += 1 }
            }
            let covering = Set(cover.ids(covering: LonLat(lon: fix.lon, lat: fix.lat)))
            func here(_ kind: FenceEventKind, _ fence: Fence, initial: Bool = false, inside: Double? = nil) {
                emit(kind, fence, device: device, time: t, lon: fix.lon, lat: fix.lat, initial: initial, inside: inside)
            }
            for id in fences.keys.sorted() {
                let fence = fences[id]!
                if expired(fence, at: t) { continue }  // not there for this fix
                if covering.contains(id) {
                    if h.visits[id] == nil {
                        h.visits[id] = Visit(enterTime: t)
                        if !first || settings.initialEvents { here(.enter, fence, initial: first) }
                    } else {
                        h.visits[id]!.pendingSince = nil
                    }
                    let v = h.visits[id]!
                    if !v.stayed && t - v.enterTime >= (fence.dwell ?? settings.dwell) - Self.tolerance {
                        here(.dwell, fence, inside: t - v.enterTime)
                        h.visits[id]!.stayed = true
                        stats["dwells"] += 1
                    }
                } else if let v = h.visits[id] {
                    let delay = settings.exitDelay
                    if delay <= 0 {
                        here(.exit, fence, inside: t - v.enterTime)
                        h.visits[id] = nil
                    } else if let since = v.pendingSince {
                        if t - since >= delay - Self.tolerance {
                            here(.exit, fence, inside: t - v.enterTime)
                            h.visits[id] = nil
                        }
                    } else {
                        h.visits[id]!.pendingSince = t
                    }
                }
            }
            h.time = t
            h.lon = fix.lon
            h.lat = fix.lat
            held[device] = h
        }

        func endBatch(clock: Double) {
            for device in held.keys.sorted() {
                var h = held[device]!
                if let w = window, clock - h.time >= w - Self.tolerance {
                    if clock - h.time == w { stats["idleExactlyAtClock"] += 1 }
                    evict(device, h, idleAt: min(h.time + w, clock))
                    stats["idleAtBatchEnd"] += 1
                } else {
                    expireVisits(device, &h, upTo: clock) { $0["expiredAtBatchEnd"] += 1 }
                    held[device] = h
                }
            }
            for id in fences.keys.sorted() where expired(fences[id]!, at: clock) {
                fences[id] = nil
                cover.remove(id)
            }
            if let w = window {
                horizon = max(horizon, clock - w)
                horizonBySeconds = max(horizonBySeconds, clock - settings.idleEviction)
            }
            watermark = clock
        }

        // Edits

        func remove(ids: [String], at time: Double?) -> [FenceEvent] {
            let gone = Set(ids.filter { fences[$0] != nil })
            for device in held.keys.sorted() {
                var h = held[device]!
                for id in h.visits.keys.sorted() where gone.contains(id) {
                    let t = time.map { $0.isFinite ? max($0, h.time) : h.time } ?? h.time
                    emit(.exit, fences[id]!, device: device, time: t, lon: h.lon, lat: h.lat, reason: .fenceRemoved, inside: t - h.visits[id]!.enterTime)
                    h.visits[id] = nil
                    stats["removed"] += 1
                }
                held[device] = h
            }
            for id in gone {
                fences[id] = nil
                cover.remove(id)
            }
            return take()
        }

        func remove(group: String, at time: Double?) -> [FenceEvent] {
            remove(ids: fences.values.filter { $0.group == group }.map(\.id), at: time)
        }

        /// Adds or replaces fences. A replaced fence's visits end (`fence-replaced`, at the last
        /// fix) where the new shape misses the last fix; the rest go on under the new expiry.
        /// A fence whose expiry the clock already passed expires at once (see the class
        /// comment).
        func add(_ new: [Fence]) -> (replaced: Set<String>, events: [FenceEvent]) {
            var replaced: Set<String> = []
            var oldShapes: [String: FenceShape] = [:]
            for f in new {
                if let old = fences[f.id] {
                    replaced.insert(f.id)
                    oldShapes[f.id] = old.shape
                }
                fences[f.id] = f
                cover.add(f)
            }
            // A fence the clock already passed expires at once, as at the end of the batch
            // that passed it, and first (`EventEngine.add`, as a restore does): its visits end
            // `fence-expired`, not `fence-replaced`. Before the first batch there is no clock.
            for f in new where expired(f, at: watermark) { stats["addedExpired"] += 1 }
            if watermark.isFinite && fences.values.contains(where: { expired($0, at: watermark) }) {
                for device in held.keys.sorted() {
                    var h = held[device]!
                    expireVisits(device, &h, upTo: watermark) { $0["expiredAtAdd"] += 1 }
                    held[device] = h
                }
                for id in fences.keys.sorted() where expired(fences[id]!, at: watermark) {
                    fences[id] = nil
                    cover.remove(id)
                }
            }
            for device in held.keys.sorted() {
                var h = held[device]!
                let covering = Set(cover.ids(covering: LonLat(lon: h.lon, lat: h.lat)))
                for id in h.visits.keys.sorted() where replaced.contains(id) && fences[id] != nil {
                    if covering.contains(id) {
                        stats["replacedKept"] += 1
                        continue
                    }
                    // SPEC leaves open whether a pair with an exit pending (its last fix already
                    // outside) ends when its fence is replaced. The engine's choice, in
                    // `EventEngine.add`'s doc comment: the same shape again ends no visit, not
                    // even a pending one; another shape missing the last fix ends it.
                    if h.visits[id]!.pendingSince != nil && oldShapes[id] == fences[id]!.shape {
                        stats["replacedSameShapePending"] += 1
                        continue
                    }
                    emit(.exit, fences[id]!, device: device, time: h.time, lon: h.lon, lat: h.lat, reason: .fenceReplaced, inside: h.time - h.visits[id]!.enterTime)
                    h.visits[id] = nil
                    stats["replacedExits"] += 1
                }
                held[device] = h
            }
            return (replaced, take())
        }

        /// The devices held and the fences, for failure messages.
        func describeState() -> String {
            var lines: [String] = []
            for d in held.keys.sorted() {
                let h = held[d]!
                let visits = h.visits.keys.sorted().map { id -> String in
                    let v = h.visits[id]!
                    return "\(id)(enter \(v.enterTime)\(v.stayed ? " stayed" : "")\(v.pendingSince.map { " pending since \($0)" } ?? ""))"
                }
                lines.append("  \(d) last \(h.time) (\(h.lon), \(h.lat)) \(visits.joined(separator: " "))")
            }
            for id in fences.keys.sorted() {
                lines.append("  \(id) expires \(fences[id]!.expires.map { "\($0)" } ?? "nil") \(fences[id]!.shape)")
            }
            return lines.joined(separator: "\n")
        }

        /// The status the engine should report for a device and fence.
        func status(device: String, fence: String) -> FenceStatus {
            guard let h = held[device] else { return .unknown }
            guard let v = h.visits[fence] else { return .outside }
            return v.stayed ? .stayed : .inside
        }
    }

    // MARK: Scenarios

    static let lon0 = 13.20, lat0 = 52.40, span = 0.08, t0 = 1_700_000_000.0
    /// Where the clock devices report: far from every fence.
    static let farAway = LonLat(lon: 12.5, lat: 52.0)

    struct Options {
        var expiry = false
        var idle = false
        var strays = false
        /// Duplicates that carry another position (which copy wins then depends on the order read).
        var movedDuplicates = true
        var edits = false
    }

    struct Scenario {
        var fences: [Fence]
        var settings: EventSettings
        /// Every valid fix, by time.
        var fixes: [Position]
        var batches: [[Position]]
        /// The expiry times and idle deadlines the batches were cut at.
        var cutsAtDeadlines = 0
    }

    static func int(_ rng: inout TestRandom, _ r: ClosedRange<Int>) -> Int { Base.int(&rng, r) }
    /// A time on the quarter-second grid: sums and differences of such times are exact.
    static func quarter(_ rng: inout TestRandom, _ lo: Double, _ hi: Double) -> Double { (rng.uniform(lo, hi) * 4).rounded() / 4 }

    static func randomFence(id: String, _ rng: inout TestRandom) -> Fence {
        let lon = lon0 + rng.uniform(0, span), lat = lat0 + rng.uniform(0, span)
        var f: Fence
        if rng.next() % 2 == 0 {
            f = .circle(id: id, lon: lon, lat: lat, radius: rng.uniform(300, 2500))
        } else {
            f = .polygon(id: id, exterior: Shapes.star(&rng, lon: lon, lat: lat, radius: rng.uniform(0.004, 0.02), vertices: int(&rng, 5...12)))
        }
        if rng.next() % 2 == 0 { f.group = "g\(rng.next() % 3)" }
        if rng.next() % 4 == 0 { f.dwell = rng.next() % 4 == 0 ? 0 : Double(int(&rng, 10...300)) }
        if rng.next() % 6 == 0 { f.actions = FenceActions(rawValue: UInt8(1 + rng.next() % 7)) }
        return f
    }

    /// The same fence moved (up to its size) or shrunk.
    static func reshaped(_ f: Fence, _ rng: inout TestRandom) -> Fence {
        var g = f
        switch f.shape {
        case .circle(let c, let r):
            if rng.next() % 2 == 0 {
                let p = Geodesic.destination(lon: c.lon, lat: c.lat, azimuth: rng.uniform(0, 360), distance: rng.uniform(0, r))
                g.shape = .circle(center: LonLat(lon: p.lon, lat: p.lat), radius: r)
            } else {
                g.shape = .circle(center: c, radius: r * rng.uniform(0.3, 0.9))
            }
        case .polygons(let polygons):
            let ring = polygons[0].exterior
            let open = ring.dropLast()
            let cx = open.map(\.lon).reduce(0, +) / Double(open.count), cy = open.map(\.lat).reduce(0, +) / Double(open.count)
            var moved: [LonLat]
            if rng.next() % 2 == 0 {
                let a = rng.uniform(0, 2 * .pi), d = rng.uniform(0, 0.015)
                moved = ring.map { LonLat(lon: $0.lon + d * cos(a), lat: $0.lat + d * sin(a)) }
            } else {
                let k = rng.uniform(0.3, 0.9)
                moved = ring.map { LonLat(lon: cx + k * ($0.lon - cx), lat: cy + k * ($0.lat - cy)) }
            }
            moved[moved.count - 1] = moved[0]
            g.shape = .polygons([Polygon(exterior: moved)])
        }
        return g
    }

    static func makeScenario(seed: UInt64, _ o: Options) -> Scenario {
        var rng = TestRandom(mixing: seed)
        var settings = EventSettings()
        settings.dwell = Double(int(&rng, 30...300))
        settings.initialEvents = rng.next() % 3 != 0
        settings.exitDelay = rng.next() % 3 == 0 ? Double(int(&rng, 10...150)) : 0
        if rng.next() % 5 == 0 { settings.actions = FenceActions(rawValue: UInt8(1 + rng.next() % 7)) }
        if o.idle { settings.idleEviction = rng.next() % 3 == 0 ? quarter(&rng, 15, 90) : Double(int(&rng, 30...400)) }
        let w = max(settings.idleEviction, settings.exitDelay)

        // Walks: steps of 1-30 s, and now and then a quiet spell, often exactly at, just short of
        // or just past the eviction window.
        var fixes: [Position] = []
        var deadlines: [Double] = []  // times worth a batch end: idle deadlines
        var quietFrom: Set<Double> = []  // fix times a quiet spell (or the end of a walk) follows
        for d in 0..<int(&rng, 3...7) {
            var walk = RandomWalk(
                lon: lon0 + rng.uniform(0, span), lat: lat0 + rng.uniform(0, span), heading: rng.uniform(0, 2 * .pi), lon0: lon0, lat0: lat0, span: span)
            var t = t0 + Double(int(&rng, 0...300))
            for _ in 0..<int(&rng, 40...110) {
                fixes.append(Position(device: "d\(d)", time: t, lon: walk.lon, lat: walk.lat))
                walk.step(&rng, metres: 20...400)
                var step = Double(int(&rng, 1...30)) + 0.25 * Double(rng.next() % 4)
                if rng.next() % 14 == 0 {
                    let base = o.idle ? w : Double(int(&rng, 60...600))
                    switch rng.next() % 8 {
                    case 0: step = base - 0.25
                    case 1, 2: step = base
                    case 3: step = base + 0.25
                    case 4: step = base - 1
                    case 5: step = 2 * base + 0.5
                    default: step = quarter(&rng, base * 0.5, base * 3)
                    }
                    step = max(step, 0.25)
                    if o.idle { deadlines += [t + w - 0.25, t + w, t + w + 0.25] }
                    quietFrom.insert(t)
                }
                t += step
            }
            quietFrom.insert(fixes.last!.time)
        }
        let first = fixes.map(\.time).min()!, last = fixes.map(\.time).max()!

        var fences = (0..<int(&rng, 6...14)).map { randomFence(id: "f\($0)", &rng) }
        var expiries: [Double] = []
        if o.expiry {
            // The times of the fixes inside each fence (a fix there at its expiry no longer sees it).
            let cover = Oracle(fences)
            var insideTimes: [String: [Double]] = [:]
            for f in fixes { for id in cover.ids(covering: LonLat(lon: f.lon, lat: f.lat)) { insideTimes[id, default: []].append(f.time) } }
            for i in fences.indices where rng.next() % 10 < 7 {
                var e: Double
                switch rng.next() % 9 {
                case 0: e = first - quarter(&rng, 0, 200)  // before the data
                case 1: e = first
                case 2: e = fixes[int(&rng, 0...(fixes.count - 1))].time  // exactly at some fix
                case 3, 4:  // exactly at a fix inside it
                    let times = insideTimes[fences[i].id] ?? fixes.map(\.time)
                    e = times[int(&rng, 0...(times.count - 1))]
                case 5: e = last + quarter(&rng, 1, 500)  // after the data
                default: e = quarter(&rng, first, last)
                }
                // With eviction, now and then at the idle deadline (or a quarter second off it)
                // of a device inside the fence when it went quiet.
                let quiet = (insideTimes[fences[i].id] ?? []).filter { quietFrom.contains($0) }
                if o.idle && !quiet.isEmpty && rng.next() % 3 == 0 {
                    e = quiet[int(&rng, 0...(quiet.count - 1))] + w + 0.25 * Double(int(&rng, -1...1))
                }
                fences[i].expires = e
                expiries.append(e)
            }
        }

        // Clock fixes: one-fix devices far from every fence, at the deadlines and the
        // expiries and a quarter second either side, so that batch ends fall there.
        var clockTimes: [Double] = []
        for e in expiries where rng.next() % 2 == 0 { clockTimes += [e - 0.25, e, e + 0.25].filter { $0 >= first } }
        for d in deadlines where rng.next() % 2 == 0 { clockTimes.append(d) }
        for (k, c) in clockTimes.enumerated() { fixes.append(Position(device: "k\(k)", time: c, lon: farAway.lon, lat: farAway.lat)) }
        fixes.sort { ($0.time, $0.device) < ($1.time, $1.device) }

        // Batches: cut after a random fix, or after a deadline or expiry, 3-40 of them.
        var cuts: Set<Double> = []
        var cutsAtDeadlines = 0
        for _ in 0..<int(&rng, 2...39) {
            if !clockTimes.isEmpty && rng.next() % 5 < 2 {
                cuts.insert(clockTimes[int(&rng, 0...(clockTimes.count - 1))])
                cutsAtDeadlines += 1
            } else {
                cuts.insert(fixes[int(&rng, 0...(fixes.count - 1))].time)
            }
        }
        let ends = cuts.sorted()
        var batches = [[Position]](repeating: [], count: ends.count + 1)
        func batchOf(_ t: Double) -> Int { ends.firstIndex { t <= $0 } ?? ends.count }
        for fix in fixes {
            // A stray goes up to two batches early or late: late fixes, and batch clocks ahead.
            func stray(_ b: Int) -> Int { min(max(b + int(&rng, -2...2), 0), batches.count - 1) }
            let b = o.strays && rng.next() % 40 == 0 ? stray(batchOf(fix.time)) : batchOf(fix.time)
            batches[b].append(fix)
            if rng.next() % 25 == 0 {
                var dup = fix
                if o.movedDuplicates && rng.next() % 2 == 0 { dup.lon += rng.uniform(-0.002, 0.002) }
                batches[o.strays && rng.next() % 4 == 0 ? stray(b) : b].append(dup)
            }
        }
        for _ in 0..<int(&rng, 1...4) {
            var bad = fixes[int(&rng, 0...(fixes.count - 1))]
            switch rng.next() % 4 {
            case 0: bad.lon = .nan
            case 1: bad.time = .nan
            case 2: bad.lat = 90.5
            default: bad.accuracy = -1
            }
            batches[int(&rng, 0...(batches.count - 1))].append(bad)
        }
        for b in batches.indices { batches[b].shuffle(using: &rng) }
        return Scenario(fences: fences, settings: settings, fixes: fixes, batches: batches, cutsAtDeadlines: cutsAtDeadlines)
    }

    static func makeEngine(_ s: Scenario) -> EventEngine {
        var store = FenceStore()
        let results = store.add(s.fences, threads: 1)
        precondition(results.allSatisfy { $0.error == nil }, "\(results.compactMap(\.error))")
        return try! EventEngine(store: store, settings: s.settings)
    }

    static func describe(_ s: EventSettings) -> String {
        "dwell \(s.dwell), initial \(s.initialEvents), exitDelay \(s.exitDelay), idle \(s.idleEviction), actions \(s.actions.rawValue)"
    }

    // MARK: Comparison

    struct Totals {
        var seeds = 0, batches = 0, edits = 0, events = 0, cutsAtDeadlines = 0
        var byKind: [String: Int] = [:]
        var stats = LifetimeOracle.Stats()

        mutating func tally(_ events: [FenceEvent]) {
            self.events += events.count
            for e in events { byKind["\(e.kind)" + (e.reason.map { " " + $0.rawValue } ?? ""), default: 0] += 1 }
        }

        var line: String {
            "\(seeds) seeds, \(batches) batches, \(edits) edits, \(events) events compared \(byKind.sorted { $0.key < $1.key }); "
                + "cuts at deadlines \(cutsAtDeadlines); rules: \(stats.description)"
        }
    }

    static func same(_ a: [FenceEvent], _ b: [FenceEvent]) -> Bool { a.count == b.count && zip(a, b).allSatisfy(Base.same) }

    /// Every device's status against every fence, and the devices held.
    static func compareStatus(_ engine: EventEngine, _ oracle: LifetimeOracle, _ ctx: String) -> Bool {
        var ok = engine.deviceCount == oracle.held.count
        XCTAssertEqual(engine.deviceCount, oracle.held.count, "\(ctx): devices held")
        for device in oracle.everSeen.sorted() {
            let inside = (oracle.held[device]?.visits.keys).map { $0.sorted() } ?? []
            if engine.fences(insideOf: device) != inside {
                XCTFail("\(ctx) \(device): inside \(engine.fences(insideOf: device)), expected \(inside)")
                ok = false
            }
            for fence in oracle.fences.keys.sorted() where engine.status(device: device, fence: fence) != oracle.status(device: device, fence: fence) {
                XCTFail("\(ctx) \(device) \(fence): \(engine.status(device: device, fence: fence)), expected \(oracle.status(device: device, fence: fence))")
                ok = false
            }
        }
        return ok
    }

    /// Runs one scenario through the engine and the oracle batch by batch, with edits between
    /// batches when asked; false at the first difference (reported when `report`).
    static func run(seed: UInt64, _ o: Options, totals: inout Totals, report: Bool) -> Bool {
        let s = makeScenario(seed: seed, o)
        var rng = TestRandom(mixing: seed ^ 0xE1_71_E5)
        var engine = makeEngine(s)
        let oracle = LifetimeOracle(fences: s.fences, settings: s.settings)
        defer { totals.stats.add(oracle.stats) }
        let threads = 1 + Int(seed % 2)
        totals.seeds += 1
        totals.cutsAtDeadlines += s.cutsAtDeadlines
        var added = 0
        func check(_ actual: [FenceEvent], _ expected: [FenceEvent], _ ctx: String) -> Bool {
            totals.tally(expected)
            if same(actual, expected) { return true }
            if report { Base.assertSame(actual, expected, ctx) }
            return false
        }
        for (b, batch) in s.batches.enumerated() {
            let ctx = "seed \(seed) batch \(b)/\(s.batches.count) (\(describe(s.settings)), threads \(threads))"
            let expected = oracle.evaluate(batch)
            let actual = engine.evaluate(batch, threads: threads)
            totals.batches += 1
            guard check(actual.events, expected.events, ctx) else { return false }
            let counts = [actual.duplicates, actual.late, actual.applied, actual.rejected.count]
            let wanted = [expected.duplicates, expected.late, expected.applied, expected.rejected.count]
            if counts != wanted {
                if report { XCTFail("\(ctx): duplicates, late, applied, rejected \(counts), expected \(wanted)") }
                return false
            }
            guard compareStatus(engine, oracle, ctx) else { return false }
            guard o.edits, b + 1 < s.batches.count, rng.next() % 3 == 0 else { continue }

            // Edits, mostly of fences some device is inside.
            for k in 0..<int(&rng, 1...3) {
                let ectx = "\(ctx) edit \(k)"
                let inside = Set(oracle.held.values.flatMap(\.visits.keys)).sorted()
                let all = oracle.fences.keys.sorted()
                func pick() -> String? {
                    if !inside.isEmpty && rng.next() % 4 != 0 { return inside[int(&rng, 0...(inside.count - 1))] }
                    return all.isEmpty ? nil : all[int(&rng, 0...(all.count - 1))]
                }
                let now = oracle.watermark
                let before = oracle.describeState()
                var expected: [FenceEvent] = [], actual: [FenceEvent] = []
                var what = ""
                switch rng.next() % 10 {
                case 0, 1:
                    let id = pick() ?? "missing"
                    let at: Double? = rng.next() % 2 == 0 ? nil : now + quarter(&rng, -100, 100)
                    what = "remove \(id) at \(at.map { "\($0)" } ?? "nil")"
                    expected = oracle.remove(ids: [id], at: at)
                    actual = engine.remove(id: id, at: at)
                case 2:
                    let group = "g\(rng.next() % 3)"
                    what = "remove group \(group)"
                    expected = oracle.remove(group: group, at: nil)
                    actual = engine.remove(group: group, at: nil)
                default:
                    var batch: [Fence] = []
                    for _ in 0..<int(&rng, 1...2) {
                        guard let id = pick(), !batch.contains(where: { $0.id == id }) else { continue }
                        let old = oracle.fences[id]!
                        var f = rng.next() % 2 == 0 ? old : reshaped(old, &rng)
                        switch rng.next() % 6 {
                        case 0: f.expires = nil
                        case 1: f.expires = (old.expires ?? now) + quarter(&rng, 1, 600)  // later
                        case 2:  // earlier, still to come
                            let e = old.expires ?? now + 600
                            f.expires = e > now + 0.5 ? quarter(&rng, now + 0.25, e - 0.25) : now + 0.25
                        case 3: f.expires = rng.next() % 2 == 0 ? now : now - quarter(&rng, 0.25, 300)  // already passed
                        default: break  // the same
                        }
                        batch.append(f)
                    }
                    if rng.next() % 3 == 0 {
                        // A new fence, or one that was removed or expired coming back.
                        let removed = s.fences.map(\.id).filter { oracle.fences[$0] == nil }
                        let id = !removed.isEmpty && rng.next() % 2 == 0 ? removed[int(&rng, 0...(removed.count - 1))] : "n\(added)"
                        added += 1
                        if !batch.contains(where: { $0.id == id }) {
                            var f = randomFence(id: id, &rng)
                            if o.expiry || rng.next() % 2 == 0 {
                                f.expires = rng.next() % 5 == 0 ? now - quarter(&rng, 0, 100) : now + quarter(&rng, 0.25, 900)
                            }
                            batch.append(f)
                        }
                    }
                    guard !batch.isEmpty else { continue }
                    what = "add " + batch.map { "\($0.id) expires \($0.expires.map { "\($0)" } ?? "nil")" }.joined(separator: ", ")
                    let (replaced, events) = oracle.add(batch)
                    let (results, engineEvents) = engine.add(batch, threads: 1)
                    expected = events
                    actual = engineEvents
                    for r in results where r.error != nil || r.outcome != (replaced.contains(r.id) ? .replaced : .added) {
                        if report { XCTFail("\(ectx) \(r.id): \(r.outcome) \(String(describing: r.error))") }
                        return false
                    }
                }
                totals.edits += 1
                guard check(actual, expected, "\(ectx) (\(what), clock \(now))\noracle before the edit:\n\(before)") else { return false }
                guard compareStatus(engine, oracle, "\(ectx) (\(what))") else { return false }
            }
        }
        return true
    }

    func check(_ name: String, seeds: ClosedRange<UInt64>, _ o: Options, require: (Totals) -> Void) {
        var totals = Totals(), failed: [UInt64] = []
        for seed in seeds where !Self.run(seed: seed, o, totals: &totals, report: failed.count < 2) { failed.append(seed) }
        print("\(name): \(totals.line); failed seeds \(failed)")
        XCTAssertEqual(failed, [], "\(name): seeds where the engine and the oracle differ")
        require(totals)
    }

    // MARK: Tests

    /// 1. Expiring fences (before, at, during and after the data), replaced with a later,
    /// earlier, passed or no expiry, removed and added between batches; no eviction.
    func testExpiryMatchesOracle() {
        check("expiry", seeds: 1...44, Options(expiry: true, strays: false, edits: true)) { t in
            XCTAssertGreaterThan(t.stats["expiredAtFix"], 20)
            XCTAssertGreaterThan(t.stats["expiredAtBatchEnd"], 20)
            XCTAssertGreaterThan(t.stats["fixAtExpiry"], 10, "a fix exactly at the expiry of a fence it was inside")
            XCTAssertGreaterThan(t.stats["expiredExactlyAtClock"], 10)
            XCTAssertGreaterThan(t.stats["expiredBeforeLastFix"], 2, "an expiry given since, before the last fix")
            XCTAssertGreaterThan(t.stats["addedExpired"], 20, "added or replaced with an expiry already passed")
            XCTAssertGreaterThan(t.stats["expiredAtAdd"], 10, "visits ended by such a replacement")
            XCTAssertGreaterThan(t.stats["replacedKept"], 10)
            XCTAssertGreaterThan(t.stats["replacedSameShapePending"], 0)
            XCTAssertGreaterThan(t.byKind["exit fence-expired"] ?? 0, 50)
        }
    }

    /// The same with fixes sent to other batches (late ones, early ones).
    func testExpiryWithStraysMatchesOracle() {
        check("expiry, strays", seeds: 51...70, Options(expiry: true, strays: true, edits: true)) { t in
            XCTAssertGreaterThan(t.byKind["exit fence-expired"] ?? 0, 20)
            XCTAssertGreaterThan(t.stats["lateHeld"], 10)
        }
    }

    /// 2. Idle eviction: random windows, quiet spells at, just short of and just past them,
    /// batch ends at the deadlines; with and without an exit delay.
    func testIdleEvictionMatchesOracle() {
        check("idle", seeds: 101...144, Options(idle: true)) { t in
            XCTAssertGreaterThan(t.stats["idleAtFix"], 20)
            XCTAssertGreaterThan(t.stats["idleAtBatchEnd"], 20)
            XCTAssertGreaterThan(t.stats["exactGap"], 50, "a fix exactly the window after the last")
            XCTAssertGreaterThan(t.stats["idleExactlyAtClock"], 20, "a batch ending exactly the window after a last fix")
            XCTAssertGreaterThan(t.stats["firstAgain"], 20)
            XCTAssertGreaterThan(t.stats["evictedWithPending"], 0)
            XCTAssertGreaterThan(t.byKind["exit device-idle"] ?? 0, 50)
        }
    }

    /// Idle eviction with fixes sent to other batches: late before the horizon.
    func testIdleEvictionWithStraysMatchesOracle() {
        check("idle, strays", seeds: 151...170, Options(idle: true, strays: true)) { t in
            XCTAssertGreaterThan(t.byKind["exit device-idle"] ?? 0, 20)
            XCTAssertGreaterThan(t.stats["lateBeforeHorizon"], 50)
            XCTAssertGreaterThan(t.stats["lateAtHorizon"], 0)
            XCTAssertGreaterThan(t.stats["appliedWithinExitDelayOfHorizon"], 0, "the horizon counts the exit delay")
        }
    }

    /// 3. Both, with dwell and edits (removals, replacements with new expiries, additions).
    func testExpiryAndIdleTogetherMatchOracle() {
        check("expiry and idle", seeds: 201...244, Options(expiry: true, idle: true, strays: false, edits: true)) { t in
            XCTAssertGreaterThan(t.stats["expiryBeforeIdle"], 10, "an idle device's visit ended at the earlier expiry")
            XCTAssertGreaterThan(t.stats["expiryTiesIdle"], 2, "an expiry exactly at the idle time")
            XCTAssertGreaterThan(t.byKind["exit device-idle"] ?? 0, 50)
            XCTAssertGreaterThan(t.byKind["exit fence-expired"] ?? 0, 50)
            XCTAssertGreaterThan(t.stats["dwells"], 50)
        }
    }

    /// 4. One batch or many, one thread or two: the same events, the oracle's.
    func testOneBatchOrManyAndThreadsGiveTheSameEvents() {
        var totals = Totals(), failed: [UInt64] = []
        for seed in UInt64(301)...340 {
            let s = Self.makeScenario(seed: seed, Options(expiry: true, idle: seed % 4 != 0, movedDuplicates: false))
            let ctx = "seed \(seed) (\(Self.describe(s.settings)))"
            let all = s.batches.flatMap { $0 }
            let oracleWhole = LifetimeOracle(fences: s.fences, settings: s.settings).evaluate(all).events
            let oracleBatches = LifetimeOracle(fences: s.fences, settings: s.settings)
            let oracleSplit = s.batches.flatMap { oracleBatches.evaluate($0).events }
            XCTAssertTrue(Self.same(oracleSplit, oracleWhole), "\(ctx): the oracle itself depends on the batches")
            var wholeEngine = Self.makeEngine(s)
            let whole = wholeEngine.evaluate(all, threads: 1).events
            totals.seeds += 1
            totals.batches += s.batches.count
            totals.tally(oracleWhole)
            var ok = Self.same(whole, oracleWhole)
            if !ok && failed.count < 2 { Base.assertSame(whole, oracleWhole, "\(ctx) one batch vs oracle") }
            for threads in [1, 2] {
                var engine = Self.makeEngine(s)
                let split = s.batches.flatMap { engine.evaluate($0, threads: threads).events }
                if split != whole {
                    ok = false
                    if failed.count < 2 { Base.assertSame(split, whole, "\(ctx) \(s.batches.count) batches on \(threads) threads vs one batch") }
                }
                if engine.deviceCount != wholeEngine.deviceCount { ok = false }
            }
            var twoThreads = Self.makeEngine(s)
            if twoThreads.evaluate(all, threads: 2).events != whole { ok = false }
            if !ok { failed.append(seed) }
        }
        print("one batch or many: \(totals.line); failed seeds \(failed)")
        XCTAssertEqual(failed, [])
        XCTAssertGreaterThan(totals.byKind["exit device-idle"] ?? 0, 30)
        XCTAssertGreaterThan(totals.byKind["exit fence-expired"] ?? 0, 30)
    }
}
