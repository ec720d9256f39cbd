import FenceEngine
import FenceIO
import FenceNATS
import Foundation

/// `fence inside`: who is inside each fence, as a state file of `fence eval --state` holds it.
enum InsideCommand {
    static let help = """
        Usage: fence inside [--state FILE|-] [--fence ID]... [--group NAME]... [--device ID]...
                            [--format ndjson|csv] [--output FILE]
               fence inside --nats URL[,URL...] [--name NAME] [--fences SOURCE [fence options]]
                            [--fence ID]... [--group NAME]... [--device ID]... [--format F] [--output FILE]

        Lists the visits a state file holds: one line per device inside, or stayed in, a
        fence, as of the run that wrote the file (each device at its last fix), by fence id,
        then device id. A visit whose exit waits out an --exit-delay is listed (with
        exit_pending_since); a status hysteresis left unknown is not. The fences are not read:
        a fence removed or reshaped since is judged by the next `fence eval` on this state.

        Fields, in order: fence, group (as the state recorded it), device, status (inside or
        stayed), since (the visit's enter), time (the device's last fix), inside_s (from since
        to time), lon, lat (of that fix, WGS84) and exit_pending_since.

        Options:
          --state FILE          the state file (`fence eval --state FILE`); it must exist.
                                Without it, or with -, the state is read from standard input
          --fence ID            only this fence's visits; may repeat (each value one id, its
                                exact bytes: spaces and commas are part of it)
          --group NAME          only visits of fences in this group; may repeat
          --device ID           only this device's visits; may repeat
          --format F            ndjson (default) or csv (a header line, then rows)
          --output FILE         write here instead of standard output (.gz, .zst compressed)

        A cluster of workers (`fence worker`): --nats reads every partition's last
        checkpoint instead of a state file, so each partition's visits are as of its last
        checkpoint (`fence status` shows their ages), and a partition no worker has
        checkpointed yet lists none (said on standard error).
          --nats URLS           the servers, as for `fence worker`
          --name NAME           the deployment's name (default FENCE), as for `fence setup`
          --fences SOURCE       the workers' base fences (their --fences, read with the same
                                fence options): checkpoints record no groups, so a visit's
                                group is the one its worker held, from these fences and the
                                fence changes the checkpoint has applied. Without it visits
                                carry no group and --group is refused
          --threads N           threads for loading --fences (default: all cores)
          --repair              repair invalid base polygons, as the workers were told to

        \(Arguments.fenceHelp)

        A name that matches no listed visit is said on standard error.
        Exit status: 0 (also when nothing is inside), 1 when the state file is missing or
        cannot be read (truncated, corrupted, another version), a checkpoint is damaged, the
        servers cannot be read, or --fences refused a feature (the visits are still written),
        2 on bad usage.
        """

    static func run(_ args: ArraySlice<String>) throws -> Int32 {
        let a = try Arguments(
            args, valued: Arguments.fenceOptions.union(["state", "fence", "group", "device", "format", "output", "nats", "name", "threads"]),
            flagNames: ["repair"])
        if a.flags.contains("help") {
            printLine(help)
            return 0
        }
        let cluster = a.values["nats"] != nil
        // The options that load --fences (it among them), the first of `options` given.
        let loading = Arguments.fenceOptions.union(["threads", "repair"])
        func firstGiven(_ options: Set<String>) -> String? { options.sorted().first { a.values[$0] != nil || a.flags.contains($0) } }
        if cluster && a.values["state"] != nil { throw UsageError("--state and --nats are two sources: give one") }
        if !cluster, let option = firstGiven(loading.union(["name"])) {
            throw UsageError("--\(option) is for --nats: a state file records its fences' groups itself")
        }
        if cluster && a.values["fences"] == nil {
            if a.lists["group"] != nil {
                throw UsageError("--group with --nats needs --fences (the workers' base fences): checkpoints record no groups")
            }
            if let option = firstGiven(loading) { throw UsageError("--\(option) is for loading --fences, which is not given") }
        }
        // Checked before the fences load (seconds for a large source), not after.
        let threads = try a.int("threads", default: FenceStore.defaultThreads, range: 1...1024)
        let path = a.values["state"] ?? "-"
        let formatName = (a.values["format"] ?? "ndjson").lowercased()
        guard let format = EventWriter.Format(rawValue: formatName) else {
            throw UsageError("--format must be ndjson or csv, got \(a.values["format"]!)")
        }
        let filter = StateVisits.Filter(fences: try a.wholeNames("fence"), groups: try a.wholeNames("group"), devices: try a.wholeNames("device"))
        let outputPath = a.values["output"].flatMap { $0 == "-" ? nil : $0 }
        try refuseUnwrittenCompression(outputPath)
        // With --nats the state option is not read, and --fences is read before the output is opened.
        try refuseSameFile(output: outputPath, others: [("state", cluster ? nil : path), ("fences", a.values["fences"])])
        let read = cluster ? try clusterVisits(a, threads: threads, filter: filter) : try stateVisits(path, filter: filter)
        let visits = read.visits
        let sink = try outputPath.map { (p) throws(FenceError) in try OutputSink(path: p) } ?? OutputSink()
        // Written as it is formatted: the sink writes out past each MiB.
        var bytes = StateVisits.header(format)
        for v in visits {
            StateVisits.append(v, format: format, to: &bytes)
            if bytes.count >= 1 << 16 {
                sink.write(bytes)
                bytes.removeAll(keepingCapacity: true)
            }
        }
        sink.write(bytes)
        sink.finish()
        let stderr = StandardError()
        for note in read.notes { stderr.write("fence inside: \(note)\n") }
        let unmatched = StateVisits.unmatched(filter, matches: read.matches)
        for (option, names) in unmatched where !names.isEmpty {
            let shown = names.prefix(20).map { "'\(FenceError.printable($0))'" }.joined(separator: ", ")
            let more = names.count > 20 ? " and \(names.count - 20) more" : ""
            stderr.write("fence inside: no visit listed for --\(option) \(shown)\(more)\n")
        }
        // Names that each match, in kinds that together match nothing (`--fence yard
        // --device t3`, t3 being elsewhere): said, or the warnings above would blame nobody.
        let given = [("fence", filter.fences), ("group", filter.groups), ("device", filter.devices)].compactMap { k in k.1.map { (k.0, $0) } }
        let unmatchedCount = Dictionary(uniqueKeysWithValues: unmatched.map { ($0.option, $0.names.count) })
        let eachKindMatches = given.allSatisfy { kind in unmatchedCount[kind.0]! < Set(kind.1.map { Array($0.utf8) }).count }
        if visits.isEmpty && given.count > 1 && eachKindMatches {
            stderr.write("fence inside: no visit is named by \(given.map { "--\($0.0)" }.joined(separator: " and ")) together\n")
        }
        func count(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }
        let devices = Set(visits.map { Array($0.device.utf8) }).count
        let fences = Set(visits.map { Array($0.fence.utf8) }).count
        stderr.write(
            "fence inside: \(count(visits.count, "visit")) (\(count(devices, "device")), \(count(fences, "fence"))) "
                + "of \(count(read.deviceCount, "device")) in \(read.source)\(read.asOf)\n")
        return read.refused ? 1 : 0
    }

    /// What a source gave: its visits, how many devices it holds, how it is named, as of when,
    /// notes for standard error, and whether `--fences` refused a feature.
    struct Read {
        var visits: [StateVisits.Visit]
        var deviceCount: Int
        var source: String
        var asOf: String
        var notes: [String] = []
        var refused = false
        /// The filter's names that some visit carries, each kind alone.
        var matches = StateVisits.Matches()
    }

    /// The visits of a state file (or standard input: `path` "-").
    static func stateVisits(_ path: String, filter: StateVisits.Filter) throws -> Read {
        let source = path == "-" ? "standard input" : path
        let snapshot: TrackerSnapshot
        if path == "-" {
            snapshot = try CheckpointFile.decode([UInt8](FileHandle.standardInput.readDataToEndOfFile()), from: source)
        } else {
            guard let read = try CheckpointFile.read(path: path) else { throw FenceError(.malformedInput, reason: "no state file at \(path)") }
            snapshot = read
        }
        var matches = StateVisits.Matches()
        let visits = StateVisits.list(snapshot, filter: filter, matches: &matches)
        var out = Read(
            visits: visits, deviceCount: snapshot.devices.count, source: source,
            asOf: snapshot.watermark.isFinite ? ", as of \(ISO8601.format(snapshot.watermark))" : "", matches: matches)
        if filter.groups != nil && snapshot.engineActions == nil {
            out.notes.append("\(source) is a version 1 state file, which records no groups: --group matches none")
        }
        return out
    }

    /// The visits of every partition's last checkpoint in a cluster (`--nats`), with groups
    /// from `--fences` (loaded on `threads`) and the fence changes when it is given.
    static func clusterVisits(_ a: Arguments, threads: Int, filter: StateVisits.Filter) throws -> Read {
        // The fences first (the slow part), so the checkpoints read after are as fresh as can be.
        var base: EventEngine?
        var refused = false
        if a.values["fences"] != nil {
            let loading = try FenceLoading(a)
            var engine = EventEngine(store: loading.emptyStore())
            let results = engine.add(loading.read.fences, repair: a.flags.contains("repair"), threads: threads).results
            let rejected = loading.rejected(after: results)
            loading.report(rejected)
            refused = !rejected.isEmpty
            base = engine
        }
        let (connection, topology) = try a.connectDeployment(client: "fence-inside")
        let partitions = try ClusterVisits.checkpoints(connection: connection, topology: topology)
        let checkpoints = partitions.compactMap(\.checkpoint)
        let groups = try base.map { try ClusterVisits.groups(for: checkpoints, base: $0, connection: connection, topology: topology) }
        var visits: [StateVisits.Visit] = []
        var matches = StateVisits.Matches()
        for (i, cp) in checkpoints.enumerated() {
            visits += StateVisits.list(cp.snapshot, groups: groups?[i] ?? IDTable(), filter: filter, matches: &matches)
        }
        visits.sort(by: StateVisits.precedes)
        let times = checkpoints.map(\.snapshot.watermark).filter(\.isFinite)
        var asOf = ""
        if let first = times.min(), let last = times.max() {
            asOf = first == last ? ", as of \(ISO8601.format(first))" : ", as of \(ISO8601.format(first)) to \(ISO8601.format(last))"
        }
        var out = Read(
            visits: visits, deviceCount: checkpoints.reduce(0) { $0 + $1.snapshot.devices.count },
            source: "the checkpoints of \(checkpoints.count) of \(topology.partitions) partitions", asOf: asOf, refused: refused,
            matches: matches)
        for p in partitions where p.checkpoint == nil {
            out.notes.append("partition \(p.partition) has no checkpoint yet: none of its visits is listed")
        }
        return out
    }
}
