import FenceEngine
import FenceIO
import Foundation
import Synchronization

/// A request to stop, set from a signal handler or a test, read by every partition loop.
public final class StopSignal: Sendable {
    private let flag = Atomic<Bool>(false)
    public init() {}
    public func request() { flag.store(true, ordering: .releasing) }
    public var isRequested: Bool { flag.load(ordering: .acquiring) }
}

/// What a partition did, for progress lines and the final summary.
public struct PartitionProgress: Sendable {
    public var partition: Int
    /// The partition's counts since it first ran, carried in its checkpoints (as `fence
    /// status` shows them), as of this process's latest checkpoint.
    public var counters = PartitionStream.Counters()
    /// `counters` as this process's first session found them (restored from the checkpoint,
    /// or zero): `counters.since(it)` is what this process added (a resume rewinds both to
    /// the checkpoint, so replays are not counted twice).
    public var countersAtStart: PartitionStream.Counters?
    /// What this process added to the counts (`counters` less `countersAtStart`).
    public var sessionCounters: PartitionStream.Counters { counters.since(countersAtStart ?? counters) }
    public var lastSequence: UInt64 = 0
    public var checkpoints = 0
    /// Sessions started after the first: reconnections and rewinds to the checkpoint.
    public var rewinds = 0
    /// Event messages the server acknowledged as duplicates (already stored: a replay).
    public var duplicateEventMessages = 0
    public var eventMessages = 0
    /// Wall time of the first and the latest applied fix message.
    public var firstApplied: Double?
    public var lastApplied: Double?
    /// A session has made the partition's consumer; until then nothing was consumed (the
    /// worker stopped, or failed, first) and `lastSequence` is at most its checkpoint's.
    public var started = false

    /// A partition that has done nothing yet.
    public init(partition: Int) { self.partition = partition }
}

/// Runs one partition: consumes its fix messages through a durable pull consumer, applies
/// fence changes at their stream position, publishes events, checkpoints, acknowledges.
///
/// The order of durable steps is what makes a restart exact:
/// 1. events of the fixes applied so far are published and acknowledged by the events stream;
/// 2. the checkpoint (state + positions) is written to the key-value bucket;
/// 3. only then is the fix stream acknowledged, and only below the checkpoint's `replayFrom`.
/// A crash between any two steps leaves the previous checkpoint in force and the messages
/// after it unacknowledged; the replay republishes the same events under the same ids, which
/// the events stream drops as duplicates.
///
/// Any failure of the connection, a fetch, a publish or a checkpoint write ends the session:
/// the partition reconnects, reads its checkpoint again, recreates its consumer at the
/// checkpoint's `replayFrom`, and goes on. Nothing beyond the checkpoint is ever acknowledged.
final class PartitionWorker: @unchecked Sendable {
    let partition: Int
    let config: WorkerConfiguration
    let base: EventEngine
    let stop: StopSignal
    let owner: String
    private let progressLock = Mutex(PartitionProgress(partition: 0))
    private var knownOwners: Set<String>
    /// The partition's lease once a session has taken it, kept across sessions (a reconnect
    /// renews it), and the latest session's bucket to renew and release it through. Read and
    /// written only on the partition's thread.
    private var lease: PartitionLease?
    private var leaseBucket: NATSKeyValue?
    /// A worker's partitions take their leases one after another, in partition order
    /// (`Worker.run`): signalled by the partition before this one once it holds its lease or
    /// has ended. So two workers started together on the same partitions do not split them
    /// (each then refused one and stopped both): the one that takes the first takes all.
    var turn: DispatchSemaphore?
    /// Signalled once (`passTurn`) for the partition after this one.
    let turnDone = DispatchSemaphore(value: 0)
    private var waitedTurn = false
    private var passedTurn = false

    /// Lets the partition after this one take its lease; once.
    func passTurn() {
        if passedTurn { return }
        passedTurn = true
        turnDone.signal()
    }

    init(partition: Int, config: WorkerConfiguration, base: EventEngine, stop: StopSignal, owner: String) {
        self.partition = partition
        self.config = config
        self.base = base
        self.stop = stop
        self.owner = owner
        knownOwners = [owner]
        progressLock.withLock { $0.partition = partition }
    }

    var progress: PartitionProgress { progressLock.withLock { $0 } }

    private func log(_ s: String) { config.log("partition \(partition): \(s)") }

    /// Runs sessions until stopped. - Throws: only what no retry can fix (another owner, other
    /// settings, a damaged checkpoint).
    func run() throws {
        // However the partition ends (a stop, or an error no retry fixes), its lease is
        // marked free, so the next worker takes it at once.
        defer {
            if let lease, let leaseBucket { lease.release(leaseBucket) }
            lease = nil
            leaseBucket = nil
        }
        var backoff = 0.25
        var first = true
        while !stop.isRequested {
            if !first { progressLock.withLock { $0.rewinds += 1 } }
            first = false
            let started = Date()
            do {
                try session()
                return
            } catch let e as CheckpointError {
                throw e
            } catch let e as FenceError {
                throw e
            } catch {
                if Date().timeIntervalSince(started) > 30 { backoff = 0.25 }  // a long session: a new incident
                log("\(error); reconnecting and resuming from the checkpoint in \(backoff) s")
                Thread.sleep(forTimeInterval: backoff)
                backoff = min(backoff * 2, 4)
            }
        }
    }

    /// Whether a process is consuming from `name` now: over about 1.2 s a pull request waits
    /// on it after the first 0.35 s (a worker's fetch expires in 100 ms and an idle worker
    /// sends the next at once; a killed one's are gone by then), or its deliveries advance (a
    /// busy one). False when the consumer does not exist.
    /// - Complexity: about 12 consumer-info requests.
    static func consumerIsLive(connection: NATSConnection, stream: String, name: String) throws -> Bool {
        guard let first = try connection.consumerState(stream: stream, name: name) else { return false }
        let start = Date()
        while Date().timeIntervalSince(start) < 1.2 {
            Thread.sleep(forTimeInterval: 0.1)
            guard let now = try connection.consumerState(stream: stream, name: name) else { return false }
            if now.deliveries > first.deliveries { return true }
            if now.waiting > 0 && Date().timeIntervalSince(start) > 0.35 { return true }
        }
        return false
    }

    /// One connection's worth of work, from reading the checkpoint to a stop or a failure.
    private func session() throws {
        let topology = config.topology
        let key = topology.checkpointKey(partition)
        let connection = try NATSConnection(servers: config.servers, name: "fence-worker-p\(partition)", connectWait: 5)
        let store = CheckpointStore(kv: try connection.keyValue(bucket: topology.stateBucket))
        // One worker at a time: the partition's lease, taken before anything is read (a first
        // session may wait for a holder that went away), renewed by every later session.
        leaseBucket = store.kv
        if lease == nil {
            // Read before the turn: a holder that has not renewed it by the turn has been
            // silent since this read, so the partitions of a worker gone elsewhere are taken
            // over after one timeout, not one each in turn.
            var silentSince: (revision: UInt64, at: Double)?
            if let turn, !waitedTurn {
                silentSince = try store.kv.get(topology.leaseKey(partition)).map { ($0.revision, PartitionLease.clock()) }
                while turn.wait(timeout: .now() + 0.25) == .timedOut { if stop.isRequested { return } }
                waitedTurn = true
            }
            // The partition before this one may have been refused its lease, and requested
            // the stop before passing the turn: then this one takes nothing.
            if stop.isRequested { return }
            let taken = try PartitionLease.acquire(
                store.kv, key: topology.leaseKey(partition), partition: partition, owner: owner, stop: { stop.isRequested },
                waiting: { holder in
                    self.log(
                        "its lease is held by \(holder); watching it up to \(Int(PartitionLease.timeout)) s for a renewal "
                            + "(none: that worker is gone, and this one takes the partition over)")
                }, silentSince: silentSince)
            guard let taken else { return }
            lease = taken
            passTurn()
        } else {
            try lease!.renew(store.kv, partition: partition)
        }
        let changes = ChangeLog(connection: connection, topology: topology)
        func learnChanges() throws {
            for (sequence, reason) in try changes.refresh() {
                log("message \(sequence) on \(topology.controlSubject) skipped: \(reason)")
            }
        }
        try learnChanges()

        var head = try store.head(key: key)
        var stream: PartitionStream
        if let (h, _) = head, !knownOwners.contains(h.owner) {
            if progress.checkpoints > 0 || progress.rewinds > 0 {
                throw CheckpointError.ownershipLost(key: key, detail: "now written by \(h.owner)")
            }
            knownOwners.insert(h.owner)
        }
        // The checkpoint the head read above names (its revision is the one a write must
        // replace: a head moved since fails that write as ownership lost).
        if let (h, _) = head {
            let cp = try store.read(key: key, head: h)
            guard cp.fingerprint == config.fingerprint else { throw CheckpointError.fingerprintMismatch(partition: partition) }
            guard changes.latest >= cp.lastChangeSequence else {
                throw NATSError(
                    "fence changes",
                    text: "the checkpoint has applied the change at \(cp.lastChangeSequence), but the last message read on "
                        + "\(topology.controlSubject) is \(changes.latest)")
            }
            var engine = base
            var errors: [String] = []
            for (_, change) in changes.changes(after: 0, before: cp.lastChangeSequence + 1) {
                _ = change.apply(to: &engine, errors: &errors)
            }
            let (restored, dropped) = try PartitionStream.restored(
                from: cp, engine: engine, lateness: config.lateness, step: config.step, maxLead: config.maxLead)
            stream = restored
            if dropped > 0 { log("\(dropped) inside pairs name fences that are not loaded; dropped") }
            log("resuming at \(cp.lastSequence) (re-reading from \(cp.replayFrom)), last fence change \(cp.lastChangeSequence)")
            // A resumed worker that finds nothing new has still applied through the checkpoint.
            progressLock.withLock { $0.lastSequence = max($0.lastSequence, cp.lastSequence) }
        } else {
            stream = PartitionStream(engine: base, lateness: config.lateness, step: config.step, maxLead: config.maxLead)
        }

        // The counts this process starts from: restored ones are earlier processes' work.
        let startCounts = stream.counters
        progressLock.withLock {
            if $0.countersAtStart == nil {
                $0.countersAtStart = startCounts
                $0.counters = startCounts
            }
        }

        let consumer = topology.consumerName(partition)
        // A second worker on a running partition is refused here, before it takes the
        // consumer: the two fought over it (each deleting the other's), and the one refused at
        // last was whichever next wrote a checkpoint, the first one when the second stopped (an
        // audit). Until a session of this process has made the consumer (a first session that
        // failed before this point is no reason to skip it: a review); after, it is this
        // worker's own.
        if !progress.started, try Self.consumerIsLive(connection: connection, stream: topology.fixStream, name: consumer) {
            throw CheckpointError.partitionInUse(partition: partition, consumer: consumer, checkpointOwner: head.map { $0.0.owner })
        }
        // Still this worker's partition after the restore and the look at the consumer (a
        // large checkpoint takes seconds): renewed before the consumer is taken, so a
        // newcomer that took the lease over meanwhile keeps its consumer (a review).
        if PartitionLease.clock() - lease!.renewed >= 1 { try lease!.renew(store.kv, partition: partition) }
        try connection.deleteConsumer(stream: topology.fixStream, name: consumer)
        // Messages before `replayFrom` are skipped below (at or before `lastReceived`) and
        // acknowledged as redeliveries are.
        let start = Self.consumerStart(
            replayFrom: stream.replayFrom, state: try connection.streamState(topology.fixStream), maxAckPending: config.maxAckPending)
        try connection.createPullConsumer(
            stream: topology.fixStream, name: consumer, filter: topology.partitionFilter(partition),
            startSequence: start, ackWait: config.ackWait, maxAckPending: config.maxAckPending)
        // From here the consumer the server shows is this session's (`SessionMarker`).
        let marked = config.writesSessionMarkers ? try store.kv.put(topology.sessionKey(partition), SessionMarker(.consuming, owner: owner).encoded()) : nil
        progressLock.withLock { $0.started = true }
        if start < stream.replayFrom {
            log("the consumer starts at \(start), \(stream.replayFrom - start) stream messages before \(stream.replayFrom), to be skipped")
        }
        let subscription = try connection.pullSubscription(stream: topology.fixStream, consumer: consumer)

        var outbox = EventOutbox()
        let eventSubject = topology.eventSubject(partition)
        var lastConsumerSequence: UInt64 = 0
        var unacknowledged: [(sequence: UInt64, reply: String)] = []
        // Everything below this is in a written checkpoint: the one this session resumed from
        // (`stream.replayFrom` here), then each one written.
        var durableBelow = stream.replayFrom
        // A delivery below `durableBelow` arrived (a redelivery) since the last acknowledgement.
        var redeliveredDurable = false
        // The latest acknowledgement, sent again while the partition is idle (`reacknowledge`).
        var lastAcknowledgement: String?
        var lastAcknowledged = Date.distantPast
        var reacknowledgements = 0
        var lastCheckpoint = Date()
        var dirty = false
        var fixes: [Position] = []
        var messagesOut = 0
        var failedFetches = 0
        // For the crash test's failpoint (`killAfterMessages`): fix messages received and
        // checkpoints written in this session.
        var received = 0
        var checkpointsWritten = 0
        // Lines logged about fixes refused under `maxLead` (at most 20 a session).
        var aheadLogged = 0
        var lateLogged = 0
        // When the consumer was first seen at its `maxAckPending` with messages waiting
        // (`checkAckLimit`).
        var atAckLimitSince: Date?

        func publish(_ events: [FenceEvent], cause: UInt64) throws {
            messagesOut += try outbox.publish(events, partition: partition, cause: cause, subject: eventSubject, via: connection)
        }

        /// Whether the failpoint wants a checkpoint now: the one to resume from (after half
        /// its messages), or the one it dies in.
        func failpointDue() -> Bool {
            guard let k = config.killAfterMessages else { return false }
            return received >= k || (checkpointsWritten == 0 && received >= k / 2)
        }

        /// Acknowledges (under `AckAll`, through the latest) every delivery below the last
        /// written checkpoint's `replayFrom`. Also for redeliveries: an acknowledgement lost on
        /// the way (the consumer's leader died with it) brings the messages back after the ack
        /// wait, already applied; acknowledged only at the next checkpoint, they would wait for
        /// one forever once the stream is quiet, and the partition would never drain.
        /// `lost`: the failpoint, the acknowledgement is not sent (as if lost) but forgotten.
        func acknowledgeDurable(lost: Bool = false) throws {
            var ackUpTo: (sequence: UInt64, reply: String)?
            for u in unacknowledged where u.sequence < durableBelow {
                if ackUpTo == nil || u.sequence > ackUpTo!.sequence { ackUpTo = u }
            }
            if let a = ackUpTo {
                if !lost { try subscription.acknowledge(reply: a.reply) }
                unacknowledged.removeAll { $0.sequence < durableBelow }
                lastAcknowledgement = a.reply
                lastAcknowledged = Date()
                reacknowledgements = 0
            }
            redeliveredDurable = false
        }

        /// While idle, sends the latest acknowledgement again, every 5 s, at most 6 times: one
        /// lost with a consumer leader that died is then made good by the new leader within
        /// seconds, not after the ack wait (by default 2 x lateness + 60 s) brings the messages
        /// back. Under `AckAll` a repeat changes nothing once the first one arrived.
        func reacknowledge() throws {
            guard let reply = lastAcknowledgement, reacknowledgements < 6, Date().timeIntervalSince(lastAcknowledged) >= 5
            else { return }
            if !config.dropReacknowledgements { try subscription.acknowledge(reply: reply) }
            lastAcknowledged = Date()
            reacknowledgements += 1
        }

        func checkpoint() throws {
            let outcome = try connection.waitForPublishes()
            // The crash test's failpoint: die at the worst moment, once events past the last
            // checkpoint are stored and before the checkpoint that covers them is written.
            if let k = config.killAfterMessages, received >= k, checkpointsWritten > 0, messagesOut > 0 {
                log("failpoint: SIGKILL after \(received) messages, \(messagesOut) event messages past the last checkpoint")
                kill(getpid(), SIGKILL)
            }
            if let file = config.stallFile, checkpointsWritten > 0, FileManager.default.fileExists(atPath: file) {
                log("failpoint: stalled before a checkpoint while \(file) exists")
                while FileManager.default.fileExists(atPath: file) { Thread.sleep(forTimeInterval: 0.05) }
            }
            // The lease first, when a renewal is due: a worker that went more than the lease's
            // timeout without one (a stalled process, in the fetch or the batch that led
            // here) may have lost the partition to a worker that has read the checkpoint and
            // not written one yet. Its write would then succeed and stop that worker
            // (ownership lost), and its own next renewal stop this one: both stopped.
            try lease!.renewIfDue(store.kv, partition: partition)
            let cp = stream.checkpoint(partition: partition, fingerprint: config.fingerprint, owner: owner)
            let written = try store.write(cp, key: key, previous: head?.0, revision: head?.1 ?? 0)
            head = written
            durableBelow = cp.replayFrom
            try acknowledgeDurable(lost: config.dropCheckpointAcknowledgements)
            lastCheckpoint = Date()
            dirty = false
            checkpointsWritten += 1
            let counters = stream.counters
            let sent = messagesOut
            messagesOut = 0
            progressLock.withLock {
                $0.counters = counters
                $0.lastSequence = cp.lastSequence
                $0.checkpoints += 1
                $0.eventMessages += sent
                $0.duplicateEventMessages += outcome.duplicates
            }
        }

        /// After an empty fetch: fails the partition when it can never move on because
        /// `maxAckPending` is too small. Its unacknowledged messages hold fixes within the
        /// lateness of the latest (or are being re-read to refill them); only later messages
        /// release those, and the server delivers none while the limit is reached, so the
        /// partition would wait for good. Judged from the consumer's own counts (deliveries
        /// not acknowledged at the limit, and messages still to deliver), seen twice at
        /// least a second apart so an acknowledgement on its way is not mistaken for it.
        /// - Complexity: nothing while fewer deliveries than the limit are unacknowledged
        ///   here (a count); else a consumer info request a second.
        func checkAckLimit() throws {
            guard unacknowledged.count >= config.maxAckPending else {
                atAckLimitSince = nil
                return
            }
            let now = Date()
            if let since = atAckLimitSince, now.timeIntervalSince(since) < 1 { return }
            guard let c = try connection.consumerState(stream: topology.fixStream, name: consumer),
                c.ackPending >= UInt64(config.maxAckPending), c.pending > 0
            else {
                atAckLimitSince = nil
                return
            }
            guard atAckLimitSince != nil else {
                atAckLimitSince = now
                return
            }
            throw FenceError(
                .invalidSetting,
                reason: "\(c.ackPending) messages delivered and not acknowledged, the limit "
                    + "maxAckPending (--max-ack-pending \(config.maxAckPending)), with \(c.pending) more to deliver: the "
                    + "unacknowledged ones hold fixes that only later messages release, so the server delivers no more. "
                    + "Raise --max-ack-pending above the messages of --lateness seconds of event time plus a checkpoint interval")
        }

        while true {
            try lease!.renewIfDue(store.kv, partition: partition)
            if stop.isRequested {
                // Drain: what was fetched is applied; checkpoint and acknowledge, then leave,
                // marked `stopped` rather than `consuming` by a process that is gone.
                if stream.isCaughtUp && dirty { try checkpoint() }
                if let marked { SessionMarker.markStopped(store.kv, key: topology.sessionKey(partition), owner: owner, revision: marked) }
                return
            }
            // A failed fetch loses nothing by itself (a delivery that went astray shows as a gap
            // in the consumer sequence below), so it is retried on the same consumer; only a
            // connection that stays down ends the session.
            let messages: [NATSMessage]
            do {
                messages = try subscription.fetch(batch: config.fetchBatch, timeoutMs: 100)
                failedFetches = 0
            } catch {
                failedFetches += 1
                log("\(error) (attempt \(failedFetches))")
                if failedFetches >= 20 || !connection.isConnected && failedFetches >= 8 { throw error }
                Thread.sleep(forTimeInterval: min(0.05 * Double(failedFetches), 0.5))
                continue
            }
            if messages.isEmpty {
                if dirty && stream.isCaughtUp { try checkpoint() } else if !dirty { try reacknowledge() }
                try checkAckLimit()
                continue
            }
            // Learning the changes needs the stream's leader; during an election, wait for it
            // here rather than start the session over.
            var refreshAttempts = 0
            while true {
                do {
                    try learnChanges()
                    break
                } catch {
                    // A lost connection ends the session at once (each request would only wait
                    // out its timeout); a live one waits out an election, within bounds.
                    refreshAttempts += 1
                    if refreshAttempts >= 20 || stop.isRequested || !connection.isConnected { throw error }
                    log("\(error) (learning fence changes, attempt \(refreshAttempts))")
                    // An election can last over the lease's timeout: kept renewed meanwhile.
                    try lease!.renewIfDue(store.kv, partition: partition)
                    Thread.sleep(forTimeInterval: min(0.1 * Double(refreshAttempts), 1))
                }
            }
            for m in messages {
                guard let (sequence, consumerSequence, _, stored) = m.sequences else {
                    throw NATSError("delivery", text: "a message without JetStream metadata")
                }
                guard consumerSequence == lastConsumerSequence + 1 else {
                    throw NATSError(
                        "delivery",
                        text: "consumer sequence \(consumerSequence) after \(lastConsumerSequence): a delivery was lost or the consumer was reset")
                }
                lastConsumerSequence = consumerSequence
                if let reply = m.reply {
                    unacknowledged.append((sequence, reply))
                    if sequence < durableBelow { redeliveredDurable = true }
                }
                let disposition = stream.disposition(of: sequence)
                if disposition == .skip { continue }
                if disposition == .apply {
                    for (g, change) in changes.changes(after: stream.lastChangeSequence, before: sequence) {
                        var errors: [String] = []
                        if let events = stream.apply(change, sequence: g, errors: &errors) {
                            try publish(events, cause: g)
                            dirty = true
                        }
                        for e in errors.prefix(20) { log("fence change \(g): \(e)") }
                        if errors.count > 20 { log("fence change \(g): and \(errors.count - 20) more problems") }
                    }
                    let now = Date().timeIntervalSince1970
                    progressLock.withLock {
                        if $0.firstApplied == nil { $0.firstApplied = now }
                        $0.lastApplied = now
                    }
                }
                fixes.removeAll(keepingCapacity: true)
                do {
                    try m.withBytes { raw throws(FixBatchError) in _ = try FixBatch.decode(raw, into: &fixes) }
                } catch {
                    if disposition == .apply { log("message \(sequence) on \(m.subject): \(error); skipped") }
                    stream.receiveUndecodable(sequence: sequence)
                    dirty = true
                    continue
                }
                received += 1
                let storedAt = stored.map { Double($0) / 1e9 }
                let aheadBefore = stream.aheadRefused
                let events = stream.receive(fixes, sequence: sequence, storedAt: storedAt)
                // Late fixes are dropped for good: said (the first 20 messages a session), or a
                // producer batching more event time than --lateness loses most fixes with
                // nothing but `fence status`'s count to show for it (an audit).
                if disposition == .apply, stream.arrivedLate > 0, lateLogged < 20 {
                    lateLogged += 1
                    log(
                        "message \(sequence): \(stream.arrivedLate) of \(fixes.count) fixes late, dropped (dated before the horizon, "
                            + "--lateness \(config.lateness) s behind the partition's latest fix): is a producer's --window longer "
                            + "than --lateness, or its input out of time order?"
                            + (lateLogged == 20 ? "; no more such lines this session" : ""))
                }
                if stream.aheadRefused > aheadBefore, let (fix, at) = stream.lastAhead, aheadLogged < 20 {
                    aheadLogged += 1
                    log(
                        "message \(sequence): \(stream.aheadRefused - aheadBefore) fixes dated more than --max-lead "
                            + "\(config.maxLead) s after the message was stored, refused (device \(fix.device) at "
                            + "\(ISO8601.format(fix.time)), stored \(ISO8601.format(at)))"
                            + (aheadLogged == 20 ? "; no more such lines this session" : ""))
                }
                if disposition == .apply { dirty = true }
                if !events.isEmpty { try publish(events, cause: sequence) }
            }
            // Redeliveries of what a checkpoint already holds (their acknowledgement was lost),
            // only when there are some: the list is not scanned on every fetch.
            if redeliveredDurable { try acknowledgeDurable() }
            // Busy: a checkpoint per interval. An empty fetch (above) checkpoints at once, so a
            // partition that has caught up is acknowledged within a fetch timeout.
            if dirty && stream.isCaughtUp
                && (Date().timeIntervalSince(lastCheckpoint) >= config.checkpointInterval || failpointDue())
            {
                try checkpoint()
            }
        }
    }

    /// Where a session's consumer starts: one and a quarter file-store blocks' worth of
    /// messages (8 MiB each, over the stream's mean stored message) before `replayFrom`, never
    /// before the stream's first message, and never more than half of `maxAckPending` before.
    ///
    /// nats-server 2.9 (Debian's 2.9.10) serves a consumer whose filter is a wildcard and whose
    /// start lies in the middle of the stream's last, still open block at about 100 messages a
    /// second until it reaches what the server still holds from writing; one created in an
    /// older block, or at the stream's first message, reads on through the last block at full
    /// speed (README, Limits of the worker). A checkpoint is usually recent, so a restart
    /// usually starts inside the last block: starting a block earlier costs that many more
    /// deliveries, skipped, and no crawl. The streams `fence setup` makes have no byte limit,
    /// so 2.9 writes them in 8 MiB blocks (seen in an audit). The skipped deliveries count
    /// against `maxAckPending` until the fetch that brought them is acknowledged: a start
    /// further back than half of it would make every fetch wait out its timeout (an audit: a
    /// resume 0.51 -> 7.53 s with 100).
    /// - Complexity: O(1).
    static func consumerStart(replayFrom: UInt64, state: StreamState?, maxAckPending: Int) -> UInt64 {
        guard let state, state.messages > 0, replayFrom > state.firstSequence else { return replayFrom }
        let meanBytes = max(1, state.bytes / state.messages)
        var back = (8 << 20) * 5 / 4 / meanBytes + 1
        if maxAckPending > 0 { back = min(back, UInt64(maxAckPending / 2)) }
        return replayFrom - min(back, replayFrom - state.firstSequence)
    }

}
