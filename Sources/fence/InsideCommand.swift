import FenceEngine
import FenceIO
import Foundation

/// `fence inside`: who is inside each fence, as a state file of `fence eval --state` holds it.
enum InsideCommand {
    static let help = """
        Usage: fence inside --state FILE [--fence IDS] [--group GROUPS] [--device IDS]
                            [--format ndjson|csv] [--output FILE]

        Lists the visits the state file holds: one line per device inside, or stayed in, a
        fence, as of the run that wrote the file (each device at its last fix), by fence id,
        then device id. A visit whose exit waits out an --exit-delay is listed (with
        exit_pending_since); a status hysteresis left unknown is not. The fences are not read:
        a fence removed or reshaped since is seen by the next `fence eval` on this state.

        Fields: fence, group (as the state recorded it), device, status (inside or stayed),
        since (the visit's enter), time, lon, lat (the device's last fix, WGS84), inside_s
        (from since to time) and exit_pending_since.

        Options:
          --state FILE          the state file (`fence eval --state FILE`); it must exist
          --fence IDS           only these fences, comma-separated
          --group GROUPS        only fences of these groups, comma-separated
          --device IDS          only these devices, comma-separated
          --format F            ndjson (default) or csv
          --output FILE         write here instead of standard output (.gz, .zst compressed)

        Exit status: 0 (also when nothing is inside), 1 when the state file is missing or
        cannot be read (truncated, corrupted, another version), 2 on bad usage.
        """

    static func run(_ args: ArraySlice<String>) throws -> Int32 {
        let a = try Arguments(args, valued: ["state", "fence", "group", "device", "format", "output"], flagNames: [])
        if a.flags.contains("help") {
            printLine(help)
            return 0
        }
        guard let path = a.values["state"], path != "-" else {
            throw UsageError("--state FILE is required: the state file a `fence eval --state FILE` run wrote")
        }
        let formatName = (a.values["format"] ?? "ndjson").lowercased()
        guard let format = EventWriter.Format(rawValue: formatName) else {
            throw UsageError("--format must be ndjson or csv, got \(a.values["format"]!)")
        }
        let filter = StateVisits.Filter(
            fences: try a.names("fence").map(Set.init), groups: try a.names("group").map(Set.init), devices: try a.names("device").map(Set.init))
        let outputPath = a.values["output"].flatMap { $0 == "-" ? nil : $0 }
        try refuseUnwrittenCompression(outputPath)
        try refuseSameFile(output: outputPath, others: [("state", path)])
        guard let snapshot = try CheckpointFile.read(path: path) else {
            throw FenceError(.malformedInput, reason: "no state file at \(path)")
        }
        let visits = StateVisits.list(snapshot, filter: filter)
        let sink = try outputPath.map { (p) throws(FenceError) in try OutputSink(path: p) } ?? OutputSink()
        var bytes = StateVisits.header(format)
        for v in visits { StateVisits.append(v, format: format, to: &bytes) }
        sink.write(bytes)
        sink.finish()
        let stderr = StandardError()
        if filter.groups != nil && snapshot.engineActions == nil {
            stderr.write("fence inside: \(path) is a version 1 state file, which records no groups: --group matches none\n")
        }
        let devices = Set(visits.map { Array($0.device.utf8) }).count
        let fences = Set(visits.map { Array($0.fence.utf8) }).count
        let asOf = snapshot.watermark.isFinite ? ", as of \(ISO8601.format(snapshot.watermark))" : ""
        stderr.write(
            "fence inside: \(visits.count) visit\(visits.count == 1 ? "" : "s") (\(devices) device\(devices == 1 ? "" : "s"), "
                + "\(fences) fence\(fences == 1 ? "" : "s")) of \(snapshot.devices.count) devices in \(path)\(asOf)\n")
        return 0
    }
}
