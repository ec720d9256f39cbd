import Foundation

/// Setting up and inspecting the NATS side of a fleet of workers.
public enum Deployment {
    /// Creates (or updates) the fix stream, the events stream and the checkpoint bucket, and
    /// records the topology in the bucket so every tool agrees on the partition count.
    /// - Parameters:
    ///   - replicas: copies of each stream and of the bucket (3 in a 3-node cluster).
    ///   - duplicateWindow: seconds the events stream remembers message ids. It must cover
    ///     the longest replay: from an event's first publish to its republish after a restart
    ///     (a checkpoint interval plus the time a partition is down).
    ///   - maxAge: seconds fixes are kept (0: no limit). Workers read fence changes back to
    ///     the first one, so the fix stream must keep them: limit by age only with care.
    public static func setup(
        connection: NATSConnection, topology: Topology, replicas: Int = 1, duplicateWindow: Double = 600, maxAge: Double = 0,
        memory: Bool = false
    ) throws {
        var fixes = StreamConfig(name: topology.fixStream, subjects: topology.fixStreamSubjects)
        fixes.replicas = replicas
        fixes.duplicateWindow = 120
        fixes.maxAge = maxAge
        fixes.memory = memory
        do throws(NATSError) {
            try connection.createStream(fixes)
        } catch {
            // Subjects overlap: another deployment on the server takes this prefix's subjects.
            guard error.jetStreamCode == 10065 else { throw error }
            var e = error
            e.text += "; another deployment takes the subjects \(topology.prefix).*: give this one its own --prefix (and put the "
                + "mapping setup then prints on every server)"
            throw e
        }
        var events = StreamConfig(name: topology.eventStream, subjects: topology.eventSubjects)
        events.replicas = replicas
        events.duplicateWindow = duplicateWindow
        events.memory = memory
        try connection.createStream(events)
        let kv = try connection.createKeyValue(
            bucket: topology.stateBucket, replicas: replicas, maxValueSize: CheckpointStore.chunkSize + 4096, memory: memory)
        let record = "prefix=\(topology.prefix)\npartitions=\(topology.partitions)\n"
        if let (existing, _) = try kv.get(Topology.topologyKey) {
            let old = String(decoding: existing, as: UTF8.self)
            guard old == record else {
                throw NATSError(
                    "setup", text: "\(topology.stateBucket) already records \(old.replacingOccurrences(of: "\n", with: " ")); "
                        + "a new partition count needs new streams (another --name)")
            }
        } else {
            try kv.put(Topology.topologyKey, Array(record.utf8))
        }
    }

    /// The topology `setup` recorded under a deployment name.
    ///
    /// A lookup that times out (a cluster electing a leader, or too busy to answer in time) is
    /// asked again for up to `patience` seconds; any other failure, or a timeout past that, is
    /// reported at once.
    public static func topology(connection: NATSConnection, name: String = "FENCE", patience: Double = 60) throws -> Topology {
        let bucket = name + "_STATE"
        let deadline = Date().addingTimeInterval(patience)
        var found: NATSKeyValue?
        while found == nil {
            do {
                found = try connection.keyValue(bucket: bucket)
            } catch where error.isTimeout && Date() < deadline {
                continue
            } catch {
                throw NATSError("topology", text: "no bucket \(bucket): run `fence setup` first (\(error.text))")
            }
        }
        let kv = found!
        guard let (bytes, _) = try kv.get(Topology.topologyKey) else {
            throw NATSError("topology", text: "\(bucket) has no topology record: run `fence setup` first")
        }
        var prefix = "fix"
        var partitions = 0
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let kv = line.split(separator: "=", maxSplits: 1).map(String.init)
            guard kv.count == 2 else { continue }
            if kv[0] == "prefix" { prefix = kv[1] }
            if kv[0] == "partitions" { partitions = Int(kv[1]) ?? 0 }
        }
        guard partitions > 0 else { throw NATSError("topology", text: "\(bucket): the topology record is damaged") }
        return Topology(prefix: prefix, partitions: partitions, name: name)
    }

    /// Where one partition stands.
    public struct PartitionStatus: Sendable {
        public var partition: Int
        /// The checkpoint's last applied fix message, replay start and last fence change.
        public var lastSequence: UInt64?
        public var replayFrom: UInt64?
        public var lastChangeSequence: UInt64?
        public var owner: String?
        /// Wall time of the checkpoint, epoch seconds.
        public var written: Double?
        /// The consumer's backlog (nil when no worker has created it).
        public var pending: UInt64?
        public var ackPending: UInt64?
        /// The partition's event time at the checkpoint (its latest fix time, epoch seconds;
        /// -infinity before any) and its late fixes so far (`CheckpointStore.Clock`); nil when
        /// the worker wrote no clock.
        public var eventTime: Double?
        public var late: UInt64?
        /// The latest worker's session marker and its revision (nil when none was written).
        public var session: SessionMarker?
        public var sessionRevision: UInt64?
        /// When the server stored the marker and made the consumer, nanoseconds since 1970.
        public var sessionWritten: Int64?
        /// The worker holding the partition's lease (`PartitionLease`), nil when none does (never
        /// taken, or marked free by a clean stop), and the server's time of its latest renewal
        /// (nanoseconds since 1970).
        public var leaseHolder: String?
        public var leaseRenewed: Int64?
        public var consumerCreated: Int64?
        /// A `starting` marker older than the partition's consumer: a session made its
        /// consumer since, without a marker of its own (a worker from before markers, after
        /// one killed while loading), so the marker no longer says who runs the partition.
        public var sessionIsStale: Bool {
            guard session?.phase == .starting, let written = sessionWritten, let created = consumerCreated else { return false }
            return created > written
        }
        /// The marker read again after the consumer (`readConsumers`) was the same revision:
        /// no worker started, and no session wrote its marker, in between.
        public var sessionSteady = false

        /// Everything stored for the partition is applied, checkpointed and acknowledged, and
        /// the fence change at `change` (e.g. the flush at the end of an input) is applied, by
        /// the latest worker's session: with a session marker, only once that session has its
        /// consumer (`consuming`, or `stopped` since), and the marker did not change around the
        /// consumer's read, so the backlog read is that session's and not the one before it; a
        /// `starting` marker older than the consumer (`sessionIsStale`) is as none.
        public func isDrained(throughChange change: UInt64) -> Bool {
            if sessionIsStale {
                guard sessionSteady else { return false }
            } else {
                guard session == nil || session?.phase != .starting && sessionSteady else { return false }
            }
            return (lastChangeSequence ?? 0) >= change && pending == 0 && ackPending == 0
        }
    }

    /// Every partition's checkpoint head, session marker and, with `consumers`, its consumer
    /// backlog.
    ///
    /// Cost: opening the state bucket, three or four key-value gets per partition (the state
    /// stream), and with `consumers` a consumer info request and a key-value get each. Poll the
    /// consumers sparingly. In nats-server 2.9's file store, counting a filtered consumer's
    /// pending messages can load the stream's message block and then force it out of the
    /// block cache, so the workers' next deliveries parse the block again: consumer info for
    /// 4 partitions 50 times a second (with the last change read as often) slowed the workers'
    /// deliveries about tenfold in 7 of 24 test runs; 4 times a second, in none of 24.
    public static func status(connection: NATSConnection, topology: Topology, consumers: Bool = true) throws
        -> [PartitionStatus]
    {
        let store = CheckpointStore(kv: try connection.keyValue(bucket: topology.stateBucket))
        var out: [PartitionStatus] = []
        for p in 0..<topology.partitions {
            var s = PartitionStatus(partition: p)
            if let (h, _) = try store.head(key: topology.checkpointKey(p)) {
                s.lastSequence = h.lastSequence
                s.replayFrom = h.replayFrom
                s.lastChangeSequence = h.lastChangeSequence
                s.owner = h.owner
                if let clock = try store.clock(key: topology.checkpointKey(p)) {
                    s.eventTime = clock.eventTime
                    s.late = clock.late
                }
                s.written = h.written
            }
            if let (bytes, revision, written) = try store.kv.entry(topology.sessionKey(p)) {
                s.session = SessionMarker(decoding: bytes)
                s.sessionRevision = revision
                s.sessionWritten = written
            }
            if let (bytes, _, written) = try store.kv.entry(topology.leaseKey(p)),
                let holder = PartitionLease.Record(decoding: bytes)?.holder
            {
                s.leaseHolder = holder
                s.leaseRenewed = written
            }
            out.append(s)
        }
        if consumers { try readConsumers(into: &out, connection: connection, topology: topology) }
        return out
    }

    /// Fills in each partition's consumer backlog (nil where no worker has created the
    /// consumer), for statuses read without it: a consumer info request each, on the fix
    /// stream (`status` says why sparingly), then the session marker again (a key-value get),
    /// to tell whether the backlog is that of the session the marker names.
    public static func readConsumers(into statuses: inout [PartitionStatus], connection: NATSConnection, topology: Topology) throws {
        for i in statuses.indices {
            let c = try connection.consumerState(stream: topology.fixStream, name: topology.consumerName(statuses[i].partition))
            statuses[i].pending = c?.pending
            statuses[i].ackPending = c?.ackPending
            statuses[i].consumerCreated = c?.created
        }
        let kv = try connection.keyValue(bucket: topology.stateBucket)
        for i in statuses.indices {
            let again = try kv.get(topology.sessionKey(statuses[i].partition))?.revision
            statuses[i].sessionSteady = again == statuses[i].sessionRevision
        }
    }

    /// Publishes a fence change on the change subject, chained to the last one, then a tick to
    /// every partition so each meets the change without waiting for its next fix.
    /// - Returns: the change's stream sequence.
    /// - Throws: when the stream refuses it; a concurrent change by another publisher is
    ///   retried on top of it.
    @discardableResult
    public static func publishChange(_ operation: FenceChange.Operation, connection: NATSConnection, topology: Topology) throws
        -> UInt64
    {
        var sequence: UInt64 = 0
        var attempt = 0
        while true {
            let previous = try connection.lastMessage(stream: topology.fixStream, subject: topology.controlSubject)?.sequences?.stream ?? 0
            do {
                sequence = try connection.publish(
                    topology.controlSubject, FenceChange(operation, previous: previous).encoded(), expectLastSubjectSeq: previous
                ).sequence
                break
            } catch {
                attempt += 1
                guard error.isWrongLastSequence, attempt < 20 else { throw error }
            }
        }
        try retrying {
            for p in 0..<topology.partitions {
                try connection.publishAsync(topology.tickSubject(p), [], msgId: "tick:\(sequence):\(p)")
            }
            _ = try connection.waitForPublishes()
        }
        return sequence
    }

    /// Runs `body` until it succeeds, up to `attempts` times, waiting longer after each failure
    /// (a cluster electing a new stream leader answers nothing for a few seconds).
    static func retrying(attempts: Int = 12, _ body: () throws -> Void) throws {
        var wait = 0.25
        for attempt in 1...attempts {
            do {
                try body()
                return
            } catch {
                if attempt == attempts { throw error }
                Thread.sleep(forTimeInterval: wait)
                wait = min(wait * 2, 4)
            }
        }
    }
}
