import FenceEngine
import FenceIO
import FenceNATS
import Foundation

/// `fence worker`: runs partitions of the fix stream through the event engine.
enum WorkerCommand {
    static let help = """
        Usage: fence worker --nats URL[,URL...] --partitions 0,2,... --fences SOURCE [options]

        Consumes its partitions of the fix stream through durable pull consumers, runs the event
        engine in streaming mode (fixes held up to --lateness, then applied in time order per
        device), publishes events to the events stream with a Nats-Msg-Id derived from them,
        and checkpoints each partition's state with its stream position to the key-value
        bucket. A restart resumes from the checkpoint: it gives exactly the events an
        uninterrupted run gives (the events stream drops republished copies). Fence changes
        published with `fence change` apply at their stream position in every partition.

        SIGTERM or SIGINT: stop fetching, apply what was fetched, checkpoint, exit 0. While
        the fences are still loading: stop at once, exit 0, leaving consumers, checkpoints and
        session markers as they were.
        Once connected, before loading the fences, the worker marks each of its partitions
        "starting" (key p<N>.session of the state bucket), and each session "consuming" once it
        has made its consumer, so that `fence status --wait-drained` waits for this worker;
        a session that stops cleanly marks its partition "stopped".
        A lost connection: reconnect, resume from the checkpoint; nothing is acknowledged that
        is not applied, published and checkpointed.
        One worker a partition: each holds its partitions' leases (key p<N>.lease), renewed every
        2 s. A partition whose lease another worker renews is refused (exit status 1); one not
        renewed for 7 s is taken over (at once when its holder was a process of this host and
        process id namespace that has ended, or stopped cleanly).

        Options:
          --nats URLS             server URLs, comma-separated (all of a cluster's)
          --partitions LIST       partitions to run, comma-separated (each by one worker at a time)
          --fences SOURCE         base fences, read as `fence eval` reads them (below); every
                                  worker must load the same fences with the same options
          --lateness SECONDS      event time a fix may arrive late within its partition
                                  (default 60; at least the producers' --window)
          --step SECONDS          the horizon moves in steps of this much event time (default 1)
          --max-lead SECONDS      refuse a fix dated more than this after the server stored its
                                  message (default 3600; "off" for no bound): one fix from a
                                  wrong clock or time zone would otherwise make the partition's
                                  other fixes late until event time caught up
          --checkpoint-every S    wall seconds between checkpoints while busy (default 1)
          --fetch N               messages per fetch (default 256)
          --max-ack-pending N     messages a partition may have delivered and not yet
                                  acknowledged (default 1000000, 1 to 10000000). A message
                                  stays unacknowledged while it holds fixes and until the next
                                  checkpoint: N must exceed the messages of --lateness seconds
                                  of event time plus a checkpoint interval, or the partition
                                  cannot move on: the worker then stops, exit status 1
          --ack-wait SECONDS      redelivery timeout of unacknowledged messages (default: twice
                                  the lateness plus 60 s, at least 120 s; messages stay
                                  unacknowledged while they hold fixes)
          --progress SECONDS      a progress line on standard error this often (default 10; 0 off)
          --name NAME             deployment name given to `fence setup` (default FENCE)
          --threads N             threads for loading the base fences (default: all cores)
          --repair                repair invalid base polygons with GEOS MakeValid

        Engine settings, as for `fence eval` (they must not change across restarts):
          --dwell SECONDS  --actions LIST  --no-initial  --margin METRES  --exit-delay SECONDS  --cross

        \(Arguments.fenceHelp)
        For the worker a refused feature is reported and the worker runs with the others. The
        fences as read (not the source's bytes) and the limits are part of every checkpoint's
        fingerprint: a partition resumes only with the same base fences.

        Exit status: 0 after a requested stop, 1 when a partition cannot go on (another worker
        runs it or took it, its checkpoint was made with other settings, a damaged checkpoint), 2 bad usage.
        """

    static func run(_ args: ArraySlice<String>) throws -> Int32 {
        let a = try Arguments(
            args,
            valued: Arguments.fenceOptions.union([
                "nats", "partitions", "lateness", "step", "max-lead", "checkpoint-every", "fetch", "max-ack-pending", "ack-wait", "progress", "name", "threads",
                "dwell", "actions", "margin", "exit-delay",
            ]), flagNames: ["no-initial", "cross", "repair"])
        if a.flags.contains("help") {
            printLine(help)
            return 0
        }
        // Signals are taken from the start: a stop while the fences load (seconds for a
        // million) ends the run as one while consuming does, instead of killing the process
        // (status 143).
        let stop = StopSignal()
        var sources: [DispatchSourceSignal] = []
        for sig in [SIGTERM, SIGINT] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { stop.request() }
            source.resume()
            sources.append(source)
        }
        let servers = try a.natsServers()
        guard let list = a.values["partitions"] else { throw UsageError("--partitions is required (e.g. 0,1)") }
        var partitions: [Int] = []
        // Each partition once: "0,,1" or "0,0" is a typo, not a request.
        for item in list.split(separator: ",", omittingEmptySubsequences: false) {
            guard let p = Int(item.trimmingCharacters(in: .whitespaces)), p >= 0 else {
                throw UsageError("--partitions takes partition numbers, comma-separated, none empty; got '\(list)'")
            }
            guard !partitions.contains(p) else { throw UsageError("--partitions names partition \(p) twice") }
            partitions.append(p)
        }
        let settings = try a.engineSettings()
        let lateness = try a.double("lateness", default: 60)!
        let step = try a.double("step", default: 1)!
        let interval = try a.double("checkpoint-every", default: 1)!
        let ackWait = try a.double("ack-wait", default: max(120, 2 * lateness + 60))!
        let progressEvery = try a.double("progress", default: 10)!
        let maxLead = try a.maxLead(default: 3600) ?? .infinity
        guard lateness >= 0, step >= 0, interval >= 0, ackWait > 0, progressEvery >= 0 else {
            throw UsageError("--lateness, --step, --checkpoint-every and --progress must be >= 0, --ack-wait > 0")
        }
        guard [lateness, step, interval, ackWait, progressEvery].allSatisfy({ $0 <= Arguments.maxSeconds }) else {
            throw UsageError("--lateness, --step, --checkpoint-every, --ack-wait and --progress take at most \(Int(Arguments.maxSeconds)) seconds")
        }
        let fetch = try a.int("fetch", default: 256, range: 1...10_000)
        // The server keeps an entry per unacknowledged message: ten times the default bounds it.
        let maxAckPending = try a.int("max-ack-pending", default: WorkerConfiguration.defaultMaxAckPending, range: 1...10_000_000)
        let threads = try a.int("threads", default: FenceStore.defaultThreads, range: 1...1024)
        let stderr = StandardError()
        // A message stays unacknowledged while it holds fixes: on a live stream up to about
        // the lateness plus a checkpoint interval of wall time. A shorter ack wait is legal
        // but brings such messages back every ack wait (skipped by sequence, still traffic).
        if ackWait < lateness + interval {
            stderr.write(
                "fence worker: warning: --ack-wait \(ackWait) s\(a.values["ack-wait"] == nil ? " (the default)" : "") is shorter than "
                    + "--lateness plus --checkpoint-every (\(lateness + interval) s): "
                    + "on a live stream, messages holding fixes not yet released are delivered again every \(ackWait) s while they wait\n")
        }

        // The fence options are usage too, checked before the server is reached (the fences
        // themselves are read after it, below).
        guard a.values["fences"] != nil else { throw UsageError("--fences is required") }
        _ = try a.fenceInputOptions()
        // The failpoints, checked with the rest of the usage, before anything is written.
        var killAfterMessages: Int?
        if let k = ProcessInfo.processInfo.environment["FENCE_TEST_KILL_AFTER_MESSAGES"] {
            guard let k = Int(k), k >= 2 else { throw UsageError("FENCE_TEST_KILL_AFTER_MESSAGES takes a message count >= 2") }
            killAfterMessages = k
        }
        let dropAcknowledgements: (checkpoint: Bool, repeats: Bool)
        switch ProcessInfo.processInfo.environment["FENCE_TEST_DROP_CHECKPOINT_ACKS"] {
        case nil: dropAcknowledgements = (false, false)
        case "1": dropAcknowledgements = (true, false)
        case "all": dropAcknowledgements = (true, true)
        case let v?: throw UsageError("FENCE_TEST_DROP_CHECKPOINT_ACKS takes 1 or all, not \(v)")
        }

        let loadStarted = Date()
        // Connecting can take seconds (a server that does not answer, a cluster electing): a
        // stop then ends the run at once too, before anything is written (a review found it
        // held until the connection gave up, status 1).
        let deploymentName = try a.deploymentName()
        let (connection, topology) = try unlessStopped(
            stop, partitions: partitions, started: loadStarted, phase: "connecting to the server", withdraw: {}
        ) { () throws -> (NATSConnection, Topology) in
            let connection = try NATSConnection(servers: servers, name: "fence-worker")
            return (connection, try Deployment.topology(connection: connection, name: deploymentName))
        }
        if let p = partitions.first(where: { $0 >= topology.partitions }) {
            throw UsageError("partition \(p) does not exist: \(topology.fixStream) has \(topology.partitions) (0...\(topology.partitions - 1))")
        }
        // Before the fences load: from here `fence status --wait-drained` waits for this
        // worker's sessions (`SessionMarker`); put back should the worker end before them.
        let owner = Worker.newOwner()
        let kv = try connection.keyValue(bucket: topology.stateBucket)
        // For tests only: a worker from before session markers writes none.
        let writesMarkers = ProcessInfo.processInfo.environment["FENCE_TEST_NO_SESSION_MARKERS"] != "1"
        let announced = writesMarkers ? try SessionMarker.announce(kv, topology: topology, partitions: partitions, owner: owner) : []
        let withdraw = { SessionMarker.withdraw(kv, announced) }
        let loading = try unlessStopped(stop, partitions: partitions, started: loadStarted, phase: "loading the fences", withdraw: withdraw) {
            try FenceLoading(a)
        }
        let fences = loading.read.fences

        var config = WorkerConfiguration(servers: servers, topology: topology, partitions: partitions)
        config.settings = settings
        config.lateness = lateness
        config.step = step
        config.maxLead = maxLead
        config.checkpointInterval = interval
        config.fetchBatch = fetch
        config.maxAckPending = maxAckPending
        config.ackWait = ackWait
        config.baseFences = fences
        config.fenceLimits = loading.options.limits.geometry
        config.baseFencesDigest = WorkerConfiguration.digest(of: fences, limits: config.fenceLimits)
        config.repair = a.flags.contains("repair")
        config.killAfterMessages = killAfterMessages
        config.writesSessionMarkers = writesMarkers
        (config.dropCheckpointAcknowledgements, config.dropReacknowledgements) = dropAcknowledgements
        config.stallFile = ProcessInfo.processInfo.environment["FENCE_TEST_STALL_FILE"]
        // Log lines carry ids from the stream (a fence change's, a device's): control
        // characters are escaped and a line is cut at 2,000 characters, so a hostile id can
        // neither drive the terminal nor flood the log.
        config.log = { line in
            let shown = line.count > 2000 ? line.prefix(2000) + "... (\(line.utf8.count) bytes)" : line
            StandardError().write("fence worker: \(FenceError.printable(String(shown)))\n")
        }

        let started = Date()
        let finalConfig = config
        let worker = try unlessStopped(stop, partitions: partitions, started: loadStarted, phase: "loading the fences", withdraw: withdraw) {
            try Worker(config: finalConfig, stop: stop, threads: threads, owner: owner)
        }
        let rejected = loading.rejected(after: worker.baseResults)
        loading.report(rejected)
        if let note = loading.silentFencesNote(command: "worker") { stderr.write(note + "\n") }
        stderr.write(
            "fence worker: \(fences.count - (rejected.count - loading.read.rejected.count)) fences (\(rejected.count) rejected), partitions \(partitions.map(String.init).joined(separator: ",")) of "
                + "\(topology.partitions), lateness \(lateness) s, owner \(worker.owner)\n")
        var lastApplied = 0
        var lastTime = Date()
        let failures = worker.run(progressEvery: progressEvery) { progress in
            let applied = progress.reduce(0) { $0 + $1.sessionCounters.received }
            let events = progress.reduce(0) { $0 + $1.sessionCounters.events }
            let now = Date()
            let rate = Double(applied - lastApplied) / max(now.timeIntervalSince(lastTime), 1e-9)
            (lastApplied, lastTime) = (applied, now)
            StandardError().write(
                "fence worker: \(applied) fixes, \(events) events, " + String(format: "%.0f fixes/s", rate) + " (checkpointed)\n")
        }
        withExtendedLifetime(sources) {}
        // Partitions stopped before any session (a stop just after the load) get back the
        // markers they replaced; one a session has since marked is left alone.
        withdraw()
        for p in worker.progress { stderr.write("fence worker: " + summary(p) + "\n") }
        let total = worker.progress.reduce(0) { $0 + $1.sessionCounters.received }
        let first = worker.progress.compactMap(\.firstApplied).min()
        let last = worker.progress.compactMap(\.lastApplied).max()
        var rate = ""
        if let first, let last, last > first { rate = String(format: ", %.0f fixes/s while busy", Double(total) / (last - first)) }
        stderr.write(String(format: "fence worker: %d fixes in %.2f s%@\n", total, Date().timeIntervalSince(started), rate))
        for (p, e) in failures.sorted(by: { $0.key < $1.key }) { stderr.write("fence worker: partition \(p): \(Worker.describe(e, partition: p))\n") }
        return failures.isEmpty ? 0 : 1
    }

    /// Runs `load` (reading the fences, or adding them to the engine) on a thread of its own
    /// and returns what it returns, unless `stop` is requested first: then the run ends at once,
    /// as a stop while consuming ends it (each partition's summary, the total, exit status 0),
    /// without waiting for the load.
    ///
    /// Nothing is written while loading but the session markers (no consumer is created and
    /// no checkpoint written before `Worker.run`), and `withdraw` puts those back, on a stop
    /// and when `load` throws: so ending the process mid-load leaves the streams, consumers,
    /// checkpoints and markers as they were. It ends with `_exit`: `exit` would run GEOS's and
    /// GDAL's static destructors under a loader thread that may be inside them. The stop is
    /// looked at every 20 ms, while the caller waits.
    /// - Throws: what `load` throws.
    static func unlessStopped<T>(
        _ stop: StopSignal, partitions: [Int], started: Date, phase: String, withdraw: () -> Void, _ load: @escaping @Sendable () throws -> T
    ) throws -> T {
        let outcome = LoadOutcome<T>()
        let thread = Thread { outcome.finish(Result { try load() }) }
        thread.name = "fence-load"
        thread.stackSize = 8 << 20
        thread.start()
        while true {
            if let result = outcome.wait(seconds: 0.02) {
                do {
                    return try result.get()
                } catch {
                    withdraw()
                    throw error
                }
            }
            guard stop.isRequested else { continue }
            withdraw()
            let stderr = StandardError()
            stderr.write("fence worker: stopped while \(phase); nothing consumed\n")
            for p in partitions { stderr.write("fence worker: " + summary(PartitionProgress(partition: p)) + "\n") }
            stderr.write(String(format: "fence worker: %d fixes in %.2f s\n", 0, Date().timeIntervalSince(started)))
            _exit(0)
        }
    }

    /// A partition's line at the end of a run; one whose sessions never made a consumer (a
    /// stop while loading, or before its first session) says so, where it said "applied
    /// through 0" (or its checkpoint's) as if it had run. The counts are this process's
    /// (`sessionCounters`: they were the partition's since it first ran, restored from its
    /// checkpoint, beside this run's seconds: an audit); `fence status` shows those.
    static func summary(_ p: PartitionProgress) -> String {
        guard p.started else { return "partition \(p.partition): not started (no session made its consumer); nothing consumed" }
        let c = p.sessionCounters
        return "partition \(p.partition): applied through \(p.lastSequence); \(c.received) fixes (\(c.applied) applied, \(c.late) late, "
            + "\(c.duplicates) duplicate, \(c.rejected) rejected, \(c.badMessages) bad messages); \(c.events) events in "
            + "\(p.eventMessages) messages (\(p.duplicateEventMessages) dropped as duplicates); \(p.checkpoints) checkpoints, "
            + "\(p.rewinds) resumes"
    }
}

/// What a loader thread produced, handed to the thread that waits for it.
private final class LoadOutcome<T>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var result: Result<T, Error>?

    func finish(_ r: Result<T, Error>) {
        lock.withLock { result = r }
        done.signal()
    }

    /// The result once the loader has finished, or nil after `seconds` without it.
    func wait(seconds: Double) -> Result<T, Error>? {
        guard done.wait(timeout: .now() + seconds) == .success else { return nil }
        return lock.withLock { result }
    }
}
