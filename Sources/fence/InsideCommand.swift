import FenceEngine
import FenceIO
import Foundation

/// `fence inside`: who is inside each fence, as a state file of `fence eval --state` holds it.
enum InsideCommand {
    static let help = """
        Usage: fence inside [--state FILE|-] [--fence ID]... [--group NAME]... [--device ID]...
                            [--format ndjson|csv] [--output FILE]

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

        A name that matches no listed visit is said on standard error.
        Exit status: 0 (also when nothing is inside), 1 when the state file is missing or
        cannot be read (truncated, corrupted, another version), 2 on bad usage.
        """

    static func run(_ args: ArraySlice<String>) throws -> Int32 {
        let a = try Arguments(args, valued: ["state", "fence", "group", "device", "format", "output"], flagNames: [])
        if a.flags.contains("help") {
            printLine(help)
            return 0
        }
        let path = a.values["state"] ?? "-"
        let formatName = (a.values["format"] ?? "ndjson").lowercased()
        guard let format = EventWriter.Format(rawValue: formatName) else {
            throw UsageError("--format must be ndjson or csv, got \(a.values["format"]!)")
        }
        // Each value one name, as given: an empty one (a lost shell variable) names nothing.
        func names(_ option: String) throws(UsageError) -> [String]? {
            guard let list = a.lists[option] else { return nil }
            guard !list.contains("") else { throw UsageError("--\(option) takes a name, not an empty value") }
            return list
        }
        let filter = StateVisits.Filter(fences: try names("fence"), groups: try names("group"), devices: try names("device"))
        let outputPath = a.values["output"].flatMap { $0 == "-" ? nil : $0 }
        try refuseUnwrittenCompression(outputPath)
        try refuseSameFile(output: outputPath, others: [("state", path)])
        let source = path == "-" ? "standard input" : path
        let snapshot: TrackerSnapshot
        if path == "-" {
            snapshot = try CheckpointFile.decode([UInt8](FileHandle.standardInput.readDataToEndOfFile()), from: source)
        } else {
            guard let read = try CheckpointFile.read(path: path) else { throw FenceError(.malformedInput, reason: "no state file at \(path)") }
            snapshot = read
        }
        let visits = StateVisits.list(snapshot, filter: filter)
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
        if filter.groups != nil && snapshot.engineActions == nil {
            stderr.write("fence inside: \(source) is a version 1 state file, which records no groups: --group matches none\n")
        }
        for (option, unmatched) in StateVisits.unmatched(filter, in: visits) where !unmatched.isEmpty {
            let shown = unmatched.prefix(20).map { "'\(FenceError.printable($0))'" }.joined(separator: ", ")
            let more = unmatched.count > 20 ? " and \(unmatched.count - 20) more" : ""
            stderr.write("fence inside: no visit listed for --\(option) \(shown)\(more)\n")
        }
        func count(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }
        let devices = Set(visits.map { Array($0.device.utf8) }).count
        let fences = Set(visits.map { Array($0.fence.utf8) }).count
        let asOf = snapshot.watermark.isFinite ? ", as of \(ISO8601.format(snapshot.watermark))" : ""
        stderr.write(
            "fence inside: \(count(visits.count, "visit")) (\(count(devices, "device")), \(count(fences, "fence"))) "
                + "of \(count(snapshot.devices.count, "device")) in \(source)\(asOf)\n")
        return 0
    }
}
