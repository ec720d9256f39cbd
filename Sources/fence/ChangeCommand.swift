import FenceEngine
import FenceIO
import FenceNATS
import Foundation

/// `fence change`: publishes a fence change that every worker applies at one stream position.
enum ChangeCommand {
    static let help = """
        Usage: fence change --nats URL[,URL...] (--add F.geojson | --remove IDS | --remove-id ID...
                                                | --remove-group GROUPS | --remove-group-name NAME...
                                                | --remove-all | --flush)

        Publishes one fence change to the fix stream. Every partition applies it at its stream
        position: first every fix stored before it (held fixes are released), then the change,
        then the fixes after it, so its events are those of one process reading the stream in
        order. Removals and replacements give exits (fence-removed, fence-replaced) at each
        device's last fix.

        Options:
          --add FILE            add fences from GeoJSON (same id replaces), in WGS84
                                longitude/latitude: a "crs" naming another CRS is refused
          --remove IDS          remove fences by id, comma-separated (each trimmed of spaces)
          --remove-id ID        remove the fence of this id, the value whole (its exact bytes:
                                commas and edge spaces are part of it); may repeat, and go
                                with --remove in one change
          --remove-group LIST   remove every fence of these groups, comma-separated
          --remove-group-name NAME
                                remove every fence of this group, the value whole; may
                                repeat, and go with --remove-group in one change
          --remove-all          remove every fence
          --flush               change no fence; release every held fix (end of input)
          --name NAME           deployment name given to `fence setup` (default FENCE)
        """

    static func run(_ args: ArraySlice<String>) throws -> Int32 {
        let a = try Arguments(
            args, valued: ["nats", "add", "remove", "remove-id", "remove-group", "remove-group-name", "name"],
            flagNames: ["remove-all", "flush"])
        if a.flags.contains("help") {
            printLine(help)
            return 0
        }
        // A missing or empty --nats is named before any other option (`connectDeployment` connects).
        _ = try a.natsServers()
        // The usage first: a command line naming two changes is refused before any file is read.
        // `--remove` and `--remove-id` name one change, as do the two group forms.
        let given = [["add"], ["remove", "remove-id"], ["remove-group", "remove-group-name"]].filter { $0.contains { a.values[$0] != nil } }.count
            + ["remove-all", "flush"].filter { a.flags.contains($0) }.count
        guard given == 1 else {
            throw UsageError("give exactly one of --add, --remove (or --remove-id), --remove-group (or --remove-group-name), --remove-all, --flush")
        }
        var operations: [FenceChange.Operation] = []
        if let path = a.values["add"] {
            // A file that cannot be read is bad input (status 1, the system's reason), as for
            // `publish` and `worker`; `-` reads standard input.
            let data = try GeoJSONFences.readDocument(path: path)
            // Checked as every worker will read it: a change in the stream stays there, so a
            // file with any fault is refused here, before it is published.
            let problems = FenceChange.problems(adding: [UInt8](data))
            guard problems.isEmpty else {
                let stderr = StandardError()
                for p in problems { stderr.write("fence: \(path): \(p)\n") }
                stderr.write("fence change: nothing published: \(problems.count) problems in \(path)\n")
                return 1
            }
            operations.append(.add(geoJSON: [UInt8](data)))
        }
        // A name given twice (in one form, or once in each) would be removed once and then
        // logged by every partition as unknown: refused here, before anything is published.
        func once(_ names: [String], _ what: String) throws(UsageError) -> [String] {
            var seen = Set<ExactID>()
            for n in names where !seen.insert(ExactID(n)).inserted {
                throw UsageError("\(what) '\(FenceError.printable(n))' is named twice")
            }
            return names
        }
        let ids = try once((try a.names("remove") ?? []) + (try a.wholeNames("remove-id") ?? []), "fence")
        if !ids.isEmpty { operations.append(.remove(ids: ids)) }
        let groups = try once((try a.names("remove-group") ?? []) + (try a.wholeNames("remove-group-name") ?? []), "group")
        if !groups.isEmpty { operations.append(.removeGroups(groups)) }
        if a.flags.contains("remove-all") { operations.append(.removeAll) }
        if a.flags.contains("flush") { operations.append(.flush) }
        let (connection, topology) = try a.connectDeployment(client: "fence-change")
        let seq = try Deployment.publishChange(operations[0], connection: connection, topology: topology)
        printLine("\(seq)")
        StandardError().write("fence change: published at stream sequence \(seq) of \(topology.fixStream)\n")
        return 0
    }
}
