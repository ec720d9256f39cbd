import FenceNATS

/// `fence setup`: creates the streams and the checkpoint bucket for a fleet of workers.
enum SetupCommand {
    static let help = """
        Usage: fence setup --nats URL[,URL...] --partitions N [options]

        Creates (or updates) on a NATS JetStream server or cluster:
          FENCE_FIXES    fixes, subjects PREFIX.<partition>.* for each partition (the mapping's
                         output) and PREFIX.ctl.fences
          FENCE_EVENTS   events, subjects fence.events.<partition>, deduplicated by Nats-Msg-Id
          FENCE_STATE    key-value bucket of partition checkpoints and the topology record
        and prints the subject mapping every server's configuration must hold, which spreads
        devices over the partitions (nats-server 2.8+):
          mappings = { "fix.*": "fix.{{partition(N,1)}}.{{wildcard(1)}}" }

        Options:
          --nats URLS           server URLs, comma-separated
          --partitions N        number of partitions (fixed for the life of the streams)
          --prefix P            subject prefix producers publish under (default fix)
          --name NAME           prefix of stream, bucket and consumer names (default FENCE)
          --replicas R          copies of each stream and the bucket (default 1; 3 in a cluster)
          --dedup-window S      seconds the events stream remembers message ids (default 600);
                                must cover a worker's longest downtime plus a checkpoint interval
          --max-age S           seconds fixes are kept (default 0: no limit; workers need every
                                fence change in the fix stream)
          --memory              keep everything in memory (tests)
          --timeout S           seconds each JetStream request may wait for its reply (default
                                5; a new or loaded cluster creating replicated streams is slower)
        """

    static func run(_ args: ArraySlice<String>) throws -> Int32 {
        let a = try Arguments(
            args, valued: ["nats", "partitions", "prefix", "name", "replicas", "dedup-window", "max-age", "timeout"], flagNames: ["memory"])
        if a.flags.contains("help") {
            printLine(help)
            return 0
        }
        let servers = try a.natsServers()
        guard a.values["partitions"] != nil else { throw UsageError("--partitions is required") }
        let partitions = try a.int("partitions", default: 1, range: 1...1024)
        let prefix = a.values["prefix"] ?? "fix"
        guard !prefix.isEmpty, !prefix.contains(where: { $0 == "*" || $0 == ">" || $0 == " " }) else {
            throw UsageError("--prefix must be a subject without wildcards or spaces")
        }
        let topology = Topology(prefix: prefix, partitions: partitions, name: try a.deploymentName())
        let replicas = try a.int("replicas", default: 1, range: 1...5)
        let window = try a.double("dedup-window", default: 600)!
        let maxAge = try a.double("max-age", default: 0)!
        let timeout = try a.double("timeout", default: 5)!
        guard window > 0, maxAge >= 0 else { throw UsageError("--dedup-window must be > 0 and --max-age >= 0") }
        guard window <= Arguments.maxSeconds, maxAge <= Arguments.maxSeconds else {
            throw UsageError("--dedup-window and --max-age take at most \(Int(Arguments.maxSeconds)) seconds")
        }
        guard timeout > 0, timeout <= 3600 else { throw UsageError("--timeout takes seconds, more than 0 and at most 3600") }
        let connection = try NATSConnection(servers: servers, name: "fence-setup", timeoutMs: Int64(timeout * 1000))
        try Deployment.setup(
            connection: connection, topology: topology, replicas: replicas, duplicateWindow: window, maxAge: maxAge,
            memory: a.flags.contains("memory"))
        printLine("mappings = { \(topology.mapping) }")
        StandardError().write(
            "fence setup: \(topology.fixStream), \(topology.eventStream), \(topology.stateBucket) ready (\(partitions) partitions, "
                + "\(replicas) replica\(replicas == 1 ? "" : "s")); every server needs the mapping above\n")
        return 0
    }
}
