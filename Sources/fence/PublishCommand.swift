import FenceEngine
import FenceIO
import FenceNATS
import Foundation

/// `fence publish`: loads a positions file into the fix stream, as producers would.
enum PublishCommand {
    static let help = """
        Usage: fence publish --nats URL[,URL...] --positions POSITIONS|- [options]

        Publishes each device's fixes to PREFIX.<device> (the server maps that subject to the
        device's partition), one device's fixes of one event-time window per message, and at
        the end a flush, so workers apply the fixes they still hold (omit with --no-flush when
        more input follows). Retries a failed batch under the same message ids, so nothing is
        doubled and each device's fixes stay in order.

        Options:
          --nats URLS           server URLs, comma-separated
          --positions FILE      CSV (a header line, or --columns) or NDJSON; "-" for standard input
          --input-format FMT    csv or ndjson (default: sniffed from the first line)
        \(PositionInput.help(column: 24))
          --coord SYSTEM        coordinate system of positions without a coord column
          --window SECONDS      event time per message (default 60); workers' --lateness must
                                be at least this
          --max-batch N         fixes per message at most (default 1000)
          --no-flush            do not publish the flush at the end
          --max-line-bytes N    refuse (and skip) position lines longer than N bytes
                                (default 1048576)
          --name NAME           deployment name given to `fence setup` (default FENCE)
        \(BadLines.help(column: 24))

        Exit status: 0 success, 1 bad input (more bad lines than --max-bad: the good lines up
        to the end of the batch where that happened are published, no flush), 2 bad usage.
        """

    /// The longest device id published, in UTF-8 bytes: its subject token (up to twice as
    /// long, in hex) stays well inside the server's 4 KB control line.
    static let maxDeviceBytes = 1024

    static func run(_ args: ArraySlice<String>) throws -> Int32 {
        let a = try Arguments(
            args, valued: PositionInput.options.union(["nats", "window", "max-batch", "name", BadLines.option]),
            flagNames: ["no-flush"])
        if a.flags.contains("help") {
            printLine(help)
            return 0
        }
        let servers = try a.natsServers()
        let path = a.values["positions"] ?? "-"
        let window = try a.double("window", default: 60)!
        guard window >= 0 else { throw UsageError("--window must be >= 0") }
        let maxBatch = try a.int("max-batch", default: 1000, range: 1...100_000)
        let started = Date()
        // Every option checked before connecting: a bad one is a usage error, not a server's.
        let positionInput = try a.positionInput()
        let connection = try NATSConnection(servers: servers, name: "fence-publish")
        let topology = try Deployment.topology(connection: connection, name: try a.deploymentName())
        let reader = try positionInput.open(path)
        let publisher = FixPublisher(connection: connection, topology: topology, window: window, maxFixesPerMessage: maxBatch)
        let stderr = StandardError()
        var batch: [Position] = []
        var errors: [PositionLineError] = []
        var badLines = try BadLines(a, path: path)
        // Fixes more than a window older than one read before them: a stream is consumed in
        // event time, and workers drop what is later than their --lateness (a file sorted by
        // device, say, would lose most of its fixes). Counted and reported, not refused.
        var latest = -Double.infinity
        var backwards = 0
        var firstBackwards: (line: Int, time: Double, latest: Double)?
        reader.recordsLines = true
        while true {
            batch.removeAll(keepingCapacity: true)
            errors.removeAll(keepingCapacity: true)
            reader.positionLines.removeAll(keepingCapacity: true)
            let more = try naming(path) { try reader.read(limit: 100_000, into: &batch, errors: &errors) }
            // A device id becomes a subject token (hex when it is more than letters, digits and
            // -): past a few KB the server drops the connection (its control line is 4 KB), and
            // with it the batch's other fixes. Such a line is a bad line, like any other.
            if batch.contains(where: { $0.device.utf8.count > Self.maxDeviceBytes }) {
                var kept: [Position] = []
                var keptLines: [Int] = []
                for (k, fix) in batch.enumerated() {
                    let n = fix.device.utf8.count
                    if n > Self.maxDeviceBytes {
                        errors.append(
                            PositionLineError(
                                line: reader.positionLines[k],
                                reason: "device id of \(n) bytes: a NATS subject carries at most \(Self.maxDeviceBytes)"))
                    } else {
                        kept.append(fix)
                        keptLines.append(reader.positionLines[k])
                    }
                }
                batch = kept
                reader.positionLines = keptLines
                errors.sort { $0.line < $1.line }
            }
            badLines.take(good: batch.count, errors: errors)
            for (k, fix) in batch.enumerated() {
                if fix.time < latest - window {
                    backwards += 1
                    if firstBackwards == nil { firstBackwards = (reader.positionLines[k], fix.time, latest) }
                }
                latest = max(latest, fix.time)
            }
            try publisher.add(batch)
            // Over --max-bad: this batch's good lines are done, the rest is not read.
            if !more || badLines.exceeded { break }
        }
        if let first = firstBackwards {
            stderr.write(
                "fence publish: warning: \(backwards) fixes are more than --window \(window) s older than a fix read before "
                    + "them (the first at line \(first.line): \(ISO8601.format(first.time)) after \(ISO8601.format(first.latest))); "
                    + "workers drop fixes later than their --lateness: publish input in time order\n")
        }
        try publisher.finish()
        var flush = ""
        if badLines.exceeded {
            // Stopped mid-input: the end of input it would announce has not come.
            flush = "; stopped for bad input, no flush"
        } else if !a.flags.contains("no-flush") {
            let seq = try Deployment.publishChange(.flush, connection: connection, topology: topology)
            flush = "; flush at \(seq)"
        }
        let seconds = Date().timeIntervalSince(started)
        stderr.write(
            "fence publish: \(publisher.fixes) fixes in \(publisher.messages) messages to \(topology.fixStream) "
                + "(\(badLines.rejected) bad lines, \(publisher.retries) batches retried)\(flush); "
                + String(format: "%.2f s, %.0f fixes/s\n", seconds, Double(publisher.fixes) / max(seconds, 1e-9)))
        return badLines.exceeded ? 1 : 0
    }
}
