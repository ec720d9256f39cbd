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
        // A bad --name is a usage error (status 2) whether or not a server answers.
        let deploymentName = try a.deploymentName()
        let connection = try NATSConnection(servers: try a.natsServers(), name: "fence-events")
        let topology = try Deployment.topology(connection: connection, name: deploymentName)
        try refuseUnwrittenCompression(a.outputPath())
        let out: OutputSink = try a.outputPath().map { try OutputSink(path: $0) } ?? OutputSink()
        let n = try EventReader.read(connection: connection, topology: topology) { raw in out.write([UInt8](raw)) }
        out.flush()
        StandardError().write("fence events: \(n) messages from \(topology.eventStream)\n")
        return 0
    }
}
