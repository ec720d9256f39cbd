import FenceNATS
import Foundation

/// `fence events`: reads the events stream back as NDJSON.
enum EventsCommand {
    static let help = """
        Usage: fence events --nats URL[,URL...] [--output FILE] [--name NAME]

        Writes every event stored in the events stream, as the NDJSON records `fence eval`
        writes, in stream order (per partition, the order the workers released them).
        """

    static func run(_ args: ArraySlice<String>) throws -> Int32 {
        let a = try Arguments(args, valued: ["nats", "output", "name"], flagNames: [])
        if a.flags.contains("help") {
            printLine(help)
            return 0
        }
        let (connection, topology) = try a.connectDeployment(client: "fence-events")
        try refuseUnwrittenCompression(a.outputPath())
        let out: OutputSink = try a.outputPath().map { try OutputSink(path: $0) } ?? OutputSink()
        let n = try EventReader.read(connection: connection, topology: topology) { raw in out.write([UInt8](raw)) }
        out.flush()
        StandardError().write("fence events: \(n) messages from \(topology.eventStream)\n")
        return 0
    }
}
