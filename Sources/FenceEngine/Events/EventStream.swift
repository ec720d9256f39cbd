/// Streaming evaluation: fixes in arrival order, events out as event time allows.
///
/// Fixes are held until the stream's horizon (the latest fix time seen minus `lateness`)
/// passes them, then applied in time order, so fixes that arrive out of order by up to
/// `lateness` seconds give the same events as sorted input. A fix older than the horizon when
/// it arrives is late: dropped and counted, never applied. The horizon moves with every fix,
/// also within one `push(contentsOf:)`, so which fixes are late, and the events, do not depend
/// on how the arrivals are cut into calls (only when the events come out does; with idle
/// eviction, an idle exit's time can still differ by the rounding slack `EventEngine` allows,
/// under 61 µs, as between batch sizes). A fix exactly
/// `lateness` behind the latest is taken; with a fractional `lateness` the subtraction is
/// rounded as a Double, so such a fix can fall an ulp before the horizon.
///
/// A checkpoint without a flush: `engine.snapshot()` and `held` (the fixes not yet applied,
/// and the stream's clock); `init(engine:lateness:threads:resuming:)` on the restored engine
/// goes on as the stream never stopped would (a flush first would apply held fixes early, and
/// a fix arriving later but dated before them would then be late).
public struct EventStream: Sendable {
    /// The engine the released fixes are applied to. Fence edits go through it
    /// (`stream.engine.add(...)`, `remove(ids:)`): an edit comes between the fixes applied so
    /// far and those still held, and returns its own events (`EventEngine`).
    public var engine: EventEngine
    public let lateness: Double
    /// Fixes dropped because they arrived later than `lateness`.
    public private(set) var late = 0
    /// Fixes refused as malformed (NaN, out of range).
    public private(set) var rejected = 0
    /// Fixes dropped as duplicates (same device and time).
    public private(set) var duplicates = 0
    var pending: [Position] = []
    var latestSeen = -Double.infinity
    var horizon = -Double.infinity

    /// Threads each release is evaluated on (`EventEngine.evaluate`): the events are the
    /// same on any number; more pay off when calls release thousands of fixes at once.
    public let threads: Int

    /// - Parameter lateness: seconds a fix may arrive behind the latest seen and still be
    ///   applied in order; a negative or NaN lateness is 0.
    public init(engine: EventEngine, lateness: Double, threads: Int = 1) {
        self.engine = engine
        self.lateness = max(0, lateness)
        self.threads = max(1, threads)
    }

    /// What a stream holds besides its engine's state: the fixes taken and not yet applied
    /// (in arrival order), the latest fix time seen and the horizon (a fix before it is
    /// late). Kept with the engine's snapshot, it resumes the stream exactly. `Codable`
    /// (`JSONEncoder` writes it as it is: every number in it is finite).
    public struct Held: Sendable, Hashable, Codable {
        public var fixes: [Position]
        /// nil before any fix.
        public var latestSeen: Double?
        /// nil before the first release.
        public var horizon: Double?
        public init(fixes: [Position], latestSeen: Double?, horizon: Double?) {
            self.fixes = fixes
            self.latestSeen = latestSeen
            self.horizon = horizon
        }
    }

    /// The held fixes and the clock (`Held`), for a checkpoint taken without a flush.
    /// - Complexity: O(1) (the array is shared, copied on the next change).
    public var held: Held {
        Held(fixes: pending, latestSeen: latestSeen.isFinite ? latestSeen : nil, horizon: horizon.isFinite ? horizon : nil)
    }

    /// A stream resumed from a checkpoint: `engine` restored from the snapshot taken with
    /// `held`, and the same `lateness` (another one judges the fixes held and to come by
    /// another horizon: not the stream never stopped). The counters (`late`, `rejected`,
    /// `duplicates`) start at 0. The held fixes are
    /// taken as they were (not checked again); a clock that is nil or not finite is none yet.
    public init(engine: EventEngine, lateness: Double, threads: Int = 1, resuming held: Held) {
        self.init(engine: engine, lateness: lateness, threads: threads)
        pending = held.fixes
        latestSeen = held.latestSeen.flatMap { $0.isFinite ? $0 : nil } ?? -.infinity
        horizon = held.horizon.flatMap { $0.isFinite ? $0 : nil } ?? -.infinity
    }

    /// Takes one fix; returns the events of the fixes this released.
    public mutating func push(_ fix: Position) -> [FenceEvent] {
        push(contentsOf: CollectionOfOne(fix))
    }

    /// Takes fixes in arrival order; returns the events of the fixes they released.
    /// - Complexity: O(fixes held) when the horizon moves (the held fixes are sorted out into
    ///   released and kept), plus `EventEngine.evaluate`'s cost for those released: one batch
    ///   per call that releases any, so one-fix calls pay its per-batch costs every time.
    public mutating func push(contentsOf fixes: some Sequence<Position>) -> [FenceEvent] {
        for fix in fixes {
            if !fix.isUsable || fix.device.isEmpty {
                rejected += 1
                continue
            }
            // The horizon as this fix arrives: the fixes before it in this call move it too, so
            // a fix's fate does not depend on how the caller cuts the stream into calls.
            if fix.time < max(horizon, latestSeen - lateness) {
                late += 1
                continue
            }
            pending.append(fix)
            latestSeen = max(latestSeen, fix.time)
        }
        let next = latestSeen - lateness
        guard next > horizon else { return [] }
        horizon = next
        return release { $0.time <= next }
    }

    /// Applies every held fix (end of input).
    public mutating func flush() -> [FenceEvent] {
        horizon = max(horizon, latestSeen)
        return release { _ in true }
    }

    /// Fixes held, not yet applied.
    public var pendingCount: Int { pending.count }

    mutating func release(_ due: (Position) -> Bool) -> [FenceEvent] {
        var now: [Position] = []
        var later: [Position] = []
        for p in pending {
            if due(p) { now.append(p) } else { later.append(p) }
        }
        pending = later
        guard !now.isEmpty else { return [] }
        let result = engine.evaluate(now, threads: threads)
        duplicates += result.duplicates
        late += result.late
        return result.events
    }

    /// Events for an asynchronous sequence of fixes, in Swift's idiom (as Core Location's
    /// `CLMonitor` hands out events): the stream ends when the fixes end, after a flush.
    /// For the engine's state at the end, or the counters, drive an `EventStream` yourself.
    public static func events<S: AsyncSequence & Sendable>(
        from fixes: S, engine: EventEngine, lateness: Double, threads: Int = 1
    ) -> AsyncThrowingStream<FenceEvent, Error> where S.Element == Position {
        AsyncThrowingStream { continuation in
            let task = Task {
                var stream = EventStream(engine: engine, lateness: lateness, threads: threads)
                do {
                    for try await fix in fixes {
                        for e in stream.push(fix) { continuation.yield(e) }
                    }
                    for e in stream.flush() { continuation.yield(e) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
