import FenceEngine

/// One partition's event engine in streaming mode, driven by stream sequences, and able to
/// resume from a checkpoint exactly: a restart from any checkpoint plus the messages after it
/// gives the state and the events an uninterrupted run gives.
///
/// Fixes are held until the partition's horizon passes them, then applied in time order per
/// device, so fixes that arrive out of order by up to `lateness` seconds give the events of
/// sorted input. The horizon is `latestSeen - lateness`, rounded down to a multiple of
/// `step` seconds: fixes are released in steps of event time, never per message, so the cost
/// of an evaluation is spread over many fixes. Fixes before the horizon are released; a fix
/// before the horizon when it arrives is late: dropped and counted, never applied. So a fix
/// exactly `lateness` seconds behind the latest seen is still taken (the README's "up to
/// `--lateness` seconds"; it was dropped when the horizon released and refused fixes at it,
/// found by an audit).
///
/// A fix dated more than `maxLead` seconds after the server stored its message is refused
/// (counted as rejected) before it can move the horizon: one fix from a device whose clock or
/// time zone is wrong, dated hours or years ahead, would otherwise make every other device's
/// fixes in the partition late until event time caught up.
///
/// Every decision depends only on the partition's messages in stream order and their stored
/// times (never on wall time, fetch sizes or thread timing), which is what makes replays exact.
///
/// The checkpoint holds no fixes. Held fixes are recovered by replaying: `replayFrom` is the
/// sequence of the oldest message with a held fix; after a restore, messages from
/// `replayFrom` to `lastSequence` are read again only to refill the held fixes (exactly those
/// with a time at or after the horizon), and produce no events.
public struct PartitionStream: Sendable {
    public private(set) var engine: EventEngine
    public let lateness: Double
    public let step: Double
    /// Seconds a fix may be dated after its message was stored (`receive`'s `storedAt`);
    /// infinity for no bound.
    public let maxLead: Double
    /// Fixes refused for being dated more than `maxLead` after their message was stored, in
    /// this process (counted in `counters.rejected` as well, which a checkpoint keeps), and
    /// the latest of them with its message's stored time: what a worker logs.
    public private(set) var aheadRefused = 0
    public private(set) var lastAhead: (fix: Position, storedAt: Double)?
    /// The last `receive`'s own fixes that arrived before the horizon (late, dropped): not the
    /// fixes of earlier messages its horizon move released and the engine found late.
    public private(set) var arrivedLate = 0

    /// Fixes waiting for the horizon, in buckets of `step` (at least 1) seconds of event time.
    var held: HeldFixes
    public private(set) var horizon = -Double.infinity
    public private(set) var latestSeen = -Double.infinity
    /// The last fix message applied (S).
    public private(set) var lastSequence: UInt64 = 0
    /// The last fence change applied.
    public private(set) var lastChangeSequence: UInt64 = 0
    /// The last message received, applied or replayed: anything at or below is a redelivery.
    public private(set) var lastReceived: UInt64 = 0
    public private(set) var counters = Counters()

    public struct Counters: Sendable, Hashable {
        /// Fixes in applied messages.
        public var received = 0
        /// Fixes the engine applied.
        public var applied = 0
        /// Fixes that arrived before the horizon, or older than their device's last fix.
        public var late = 0
        /// Fixes refused as malformed (NaN, out of range, empty device).
        public var rejected = 0
        /// Fixes with the time of another fix of the same device.
        public var duplicates = 0
        /// Events produced.
        public var events = 0
        /// Messages whose payload was not a fix batch.
        public var badMessages = 0
        public init() {}

        /// Each count less `base`'s: what a run added to the counts it restored.
        public func since(_ base: Counters) -> Counters {
            var c = self
            c.received -= base.received
            c.applied -= base.applied
            c.late -= base.late
            c.rejected -= base.rejected
            c.duplicates -= base.duplicates
            c.events -= base.events
            c.badMessages -= base.badMessages
            return c
        }
    }

    /// - Parameters:
    ///   - lateness: seconds of event time a fix may arrive after later fixes of its partition.
    ///   - step: the horizon moves in multiples of this many seconds (0: with every message).
    public init(engine: EventEngine, lateness: Double, step: Double = 1, maxLead: Double = .infinity) {
        self.engine = engine
        self.lateness = max(0, lateness)
        self.step = max(0, step)
        self.maxLead = maxLead.isNaN ? .infinity : max(0, maxLead)
        held = HeldFixes(width: self.step)
    }

    /// Where a restored partition's replay began; it stands until the replay is done.
    var restoredReplayFrom: UInt64 = 1

    /// The oldest message the partition must read again after a restart from this state:
    /// that of the oldest held fix, or the next message when none is held. While a restored
    /// partition is still replaying, the replay's own start.
    public var replayFrom: UInt64 {
        guard isCaughtUp else { return restoredReplayFrom }
        return held.oldestSequence ?? lastSequence + 1
    }

    /// Fixes held, waiting for the horizon.
    public var pendingCount: Int { held.count }

    /// False while a restored partition is still re-reading held fixes: no checkpoint then.
    public var isCaughtUp: Bool { lastReceived >= lastSequence }

    /// How a message at a given sequence is treated.
    public enum Disposition: Sendable { case apply, replay, skip }

    public func disposition(of sequence: UInt64) -> Disposition {
        if sequence <= lastReceived { return .skip }
        return sequence <= lastSequence ? .replay : .apply
    }

    /// Takes one fix message (a batch of one device's fixes, or none for a tick).
    /// - Parameter storedAt: when the server stored the message (seconds since 1970), which
    ///   bounds its fixes' times by `maxLead`; nil (or NaN) for no bound.
    /// - Returns: the events of the fixes this released, in output order.
    /// - Complexity: O(k) for k fixes; when the horizon moves, one `EventEngine.evaluate` over
    ///   the released fixes, plus O(buckets) to find them (`HeldFixes`).
    public mutating func receive(_ fixes: [Position], sequence: UInt64, storedAt: Double? = nil) -> [FenceEvent] {
        arrivedLate = 0
        // A message without a usable stored time bounds nothing.
        var latestAllowed = Double.infinity
        if let storedAt, !storedAt.isNaN { latestAllowed = storedAt + maxLead }
        switch disposition(of: sequence) {
        case .skip:
            return []
        case .replay:
            lastReceived = sequence
            for fix in fixes where Self.isValid(fix) && fix.time <= latestAllowed && fix.time >= horizon {
                held.append(fix, sequence: sequence)
            }
            return []
        case .apply:
            lastReceived = sequence
            lastSequence = sequence
        }
        counters.received += fixes.count
        for fix in fixes {
            guard Self.isValid(fix) else {
                counters.rejected += 1
                continue
            }
            guard fix.time <= latestAllowed else {
                counters.rejected += 1
                aheadRefused += 1
                lastAhead = (fix, storedAt!)
                continue
            }
            if fix.time < horizon {
                counters.late += 1
                arrivedLate += 1
                continue
            }
            held.append(fix, sequence: sequence)
            if fix.time > latestSeen { latestSeen = fix.time }
        }
        let next = Self.horizon(latest: latestSeen, lateness: lateness, step: step)
        guard next > horizon else { return [] }
        horizon = next
        return release(before: next)
    }

    /// `latest - lateness` (a Double's rounding of it), rounded down to a multiple of `step`
    /// (0: not rounded): the greatest `k * step`, as a Double multiplies it, that is not after
    /// `latest - lateness`. k is the quotient's floor, or one either side of it: with a step a
    /// Double does not hold exactly (0.01, 0.3) the product can land an ulp after `latest -
    /// lateness` (10 s and 0.01 s from 1700000000.1: 1699999990.1000001), which would make a
    /// fix exactly `lateness` behind late (k - 1 is taken then), and the rounded quotient can
    /// fall just short of a whole number the product reaches (k + 1 then; it held fixes a step
    /// longer until session 37). A step so small that the multiples are not whole numbers a
    /// Double holds (quotients of 2^52 or more: a step under about 4e-7 s at today's epoch
    /// times, or 1e-320, whose quotient is infinite) does not round at all, as `step` 0.
    static func horizon(latest: Double, lateness: Double, step: Double) -> Double {
        let exact = latest - lateness
        guard step > 0, (exact / step).magnitude < 0x1p52 else { return exact }
        var k = (exact / step).rounded(.down)
        if k * step > exact {
            k -= 1
        } else if (k + 1) * step <= exact {
            k += 1
        }
        return k * step
    }

    /// Counts a message that could not be decoded, so the position still advances.
    public mutating func receiveUndecodable(sequence: UInt64) {
        if disposition(of: sequence) == .apply {
            counters.badMessages += 1
            lastSequence = sequence
        }
        if sequence > lastReceived { lastReceived = sequence }
    }

    /// Applies a fence change at its stream position: first every held fix, then the change.
    /// The horizon does not move, so what counts as late does not depend on the change.
    /// - Returns: the events of the released fixes, then those of the change; nil when the
    ///   change is at or before the last one applied (already in the state).
    public mutating func apply(_ change: FenceChange, sequence: UInt64, errors: inout [String]) -> [FenceEvent]? {
        guard sequence > lastChangeSequence else { return nil }
        lastChangeSequence = sequence
        var events = release(before: .infinity)
        let edits = change.apply(to: &engine, errors: &errors)
        counters.events += edits.count
        events += edits
        return events
    }

    static func isValid(_ fix: Position) -> Bool { fix.problem == nil && !fix.device.isEmpty }

    /// Applies every held fix before `limit`.
    mutating func release(before limit: Double) -> [FenceEvent] {
        let now = held.take(before: limit)
        guard !now.isEmpty else { return [] }
        let result = engine.evaluate(now, threads: 1)
        counters.applied += result.applied
        counters.late += result.late
        counters.duplicates += result.duplicates
        counters.rejected += result.rejected.count
        counters.events += result.events.count
        return result.events
    }
}

extension PartitionStream {
    /// The partition's position and tracker state, for a checkpoint. Without fence records:
    /// a partition restores with `restore`, against the fences rebuilt to the checkpoint's
    /// last change, so there is no change to report.
    public func checkpoint(partition: Int, fingerprint: UInt64, owner: String) -> PartitionCheckpoint {
        PartitionCheckpoint(
            partition: partition, lastSequence: lastSequence, replayFrom: replayFrom, lastChangeSequence: lastChangeSequence,
            horizon: horizon, latestSeen: latestSeen, counters: counters, fingerprint: fingerprint, owner: owner,
            snapshot: engine.snapshot(fenceRecords: false))
    }

    /// A partition resumed from a checkpoint.
    /// - Parameter engine: the settings and the fences as of the checkpoint's last change
    ///   (base fences plus every change up to `lastChangeSequence`); its tracker state is
    ///   replaced by the checkpoint's.
    ///   Fences whose `expires` the checkpoint's watermark passed are removed, as the batch
    ///   that passed it removed them in the run that wrote the checkpoint.
    /// - Returns: the stream and the number of inside pairs whose fence is not loaded or had
    ///   expired (dropped; none for a checkpoint this engine wrote).
    /// - Throws: `FenceError` when the checkpoint's snapshot holds values no engine writes.
    public static func restored(
        from c: PartitionCheckpoint, engine: EventEngine, lateness: Double, step: Double, maxLead: Double = .infinity
    ) throws(FenceError) -> (PartitionStream, droppedPairs: Int) {
        var e = engine
        let dropped = try e.restore(c.snapshot) + e.expireAsOfWatermark().count
        var s = PartitionStream(engine: e, lateness: lateness, step: step, maxLead: maxLead)
        s.lastSequence = c.lastSequence
        s.lastReceived = c.replayFrom - 1
        s.restoredReplayFrom = c.replayFrom
        s.lastChangeSequence = c.lastChangeSequence
        s.horizon = c.horizon
        s.latestSeen = c.latestSeen
        s.counters = c.counters
        return (s, dropped)
    }
}
