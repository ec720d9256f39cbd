import FenceEngine
import FenceIO
import FenceNATS
import Foundation

/// `fence publish`: loads a positions file into the fix stream, as producers would.
enum PublishCommand {
    static let help = """
        Usage: fence publish --nats URL[,URL...] [--positions POSITIONS|-] [options]

        Publishes each device's fixes to PREFIX.<device> (the server maps that subject to the
        device's partition), one device's fixes of one event-time window per message, and at
        the end a flush, so workers apply the fixes they still hold (omit with --no-flush when
        more input follows). Retries a failed batch under the same message ids, so nothing is
        doubled and each device's fixes stay in order.

        Options:
          --nats URLS           server URLs, comma-separated
          --positions FILE      CSV (a header line, or --columns) or NDJSON, plain, gzip or zstd;
                                "-" or none for standard input
          --input-format FMT    csv or ndjson (default: sniffed from the first line)
        \(PositionInput.help(column: 24))
          --coord SYSTEM        coordinate system of positions without a coord column
          --window SECONDS      event time per message (default 60); workers' --lateness must
                                be at least this
          --max-batch N         fixes per message at most (default 1000)
          --no-flush            do not publish the flush at the end
          --max-lead SECONDS    do not publish a fix dated more than this after this machine's
                                clock when its batch is read (default 3600, the workers'
                                default; "off" for no bound). Workers refuse such fixes anyway;
                                here each is named, and none makes the fixes after it look out
                                of time order
          --max-line-bytes N    refuse (and skip) position lines longer than N bytes
                                (default 1048576)
        \(MaxWait.help(column: 24, defaultText: "default 1; what is held is published then"))
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
            args, valued: PositionInput.options.union(["nats", "window", "max-batch", "max-lead", "name", BadLines.option, MaxWait.option]),
            flagNames: ["no-flush"])
        if a.flags.contains("help") {
            printLine(help)
            return 0
        }
        // A missing or empty --nats is named before any other option (`connectDeployment` connects).
        _ = try a.natsServers()
        let path = a.values["positions"] ?? "-"
        let window = try a.double("window", default: 60)!
        guard window >= 0 else { throw UsageError("--window must be >= 0") }
        let maxBatch = try a.int("max-batch", default: 1000, range: 1...100_000)
        let maxLead = try a.maxLead(default: 3600)
        let maxWait = try a.maxWait(default: 1)
        let started = Date()
        // Every option checked before connecting: a bad one is a usage error, not a server's.
        let positionInput = try a.positionInput()
        let (connection, topology) = try a.connectDeployment(client: "fence-publish")
        let reader = try positionInput.open(path)
        // A live pipe (`tail -f ais.csv | fence publish`) is published as it comes: a batch is
        // what arrived within --max-wait, and what the publisher holds of it goes out then (it
        // held every fix until 100,000 lines or the input's end: an audit).
        reader.maxWait = maxWait
        let batchLimit = 100_000
        let publisher = FixPublisher(connection: connection, topology: topology, window: window, maxFixesPerMessage: maxBatch)
        let stderr = StandardError()
        var batch: [Position] = []
        var errors: [PositionLineError] = []
        var badLines = try BadLines(a, path: path)
        // Fixes more than a window older than one read before them: a stream is consumed in
        // event time, and workers drop what is later than their --lateness (a file sorted by
        // device, say, would lose most of its fixes). Counted and reported, not refused.
        var latest = (time: -Double.infinity, line: 0)
        var backwards = 0
        var firstBackwards: (line: Int, time: Double, latest: (time: Double, line: Int))?
        // Fixes dated past --max-lead: not published, the first 20 named.
        var ahead = 0
        reader.recordsLines = true
        while true {
            batch.removeAll(keepingCapacity: true)
            errors.removeAll(keepingCapacity: true)
            reader.positionLines.removeAll(keepingCapacity: true)
            let more = try naming(path) { try reader.read(limit: batchLimit, into: &batch, errors: &errors) }
            // The read's limit counts positions (not bad lines): fewer means it stopped early.
            let cutShort = batch.count < batchLimit
            // A device id becomes a subject token (hex when it is more than letters, digits and
            // -): past a few KB the server drops the connection (its control line is 4 KB), and
            // with it the batch's other fixes. Such a line is a bad line, like any other.
            let tooLong = { (fix: Position) in fix.device.utf8.count > Self.maxDeviceBytes }
            let clock = Date().timeIntervalSince1970
            let bound = maxLead.map { clock + $0 } ?? .infinity
            var refused: [(line: Int, fix: Position)] = []
            if batch.contains(where: { tooLong($0) || $0.time > bound }) {
                var kept: [Position] = []
                var keptLines: [Int] = []
                for (k, fix) in batch.enumerated() {
                    let line = reader.positionLines[k]
                    if tooLong(fix) {
                        errors.append(
                            PositionLineError(
                                line: line,
                                reason: "device id of \(fix.device.utf8.count) bytes: a NATS subject carries at most \(Self.maxDeviceBytes)"))
                    } else if fix.time > bound {
                        refused.append((line, fix))
                    } else {
                        kept.append(fix)
                        keptLines.append(line)
                    }
                }
                batch = kept
                reader.positionLines = keptLines
                errors.sort { $0.line < $1.line }
            }
            badLines.take(good: batch.count, errors: errors, refused: refused.count, final: !more)
            for (line, fix) in refused.prefix(max(0, 20 - ahead)) {
                stderr.write(
                    "fence: \(path): line \(line): device \(fix.device) at \(ISO8601.format(fix.time)) is dated more than "
                        + "--max-lead \(maxLead!) s after the clock (\(ISO8601.format(clock))): not published\n")
            }
            ahead += refused.count
            for (k, fix) in batch.enumerated() {
                if fix.time < latest.time - window {
                    backwards += 1
                    if firstBackwards == nil { firstBackwards = (reader.positionLines[k], fix.time, latest) }
                }
                if fix.time > latest.time { latest = (fix.time, reader.positionLines[k]) }
            }
            try publisher.add(batch)
            // Over --max-bad: this batch's good lines are done, the rest is not read.
            if !more || badLines.exceeded { break }
            // A short batch with more to come: the input went quiet for --max-wait (a file
            // never does): its fixes go out now, each device's window in one more message.
            if maxWait != nil && cutShort { try publisher.finish() }
        }
        if let first = firstBackwards {
            stderr.write(
                "fence publish: warning: \(backwards) fixes are more than --window \(window) s older than a fix read before "
                    + "them (the first at line \(first.line): \(ISO8601.format(first.time)) after \(ISO8601.format(first.latest.time)) "
                    + "at line \(first.latest.line)); "
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
                + "(\(badLines.rejected - ahead) bad lines, \(ahead) dated ahead of the clock, \(publisher.retries) batches "
                + "retried)\(flush); "
                + String(format: "%.2f s, %.0f fixes/s\n", seconds, Double(publisher.fixes) / max(seconds, 1e-9)))
        return badLines.exceeded ? 1 : 0
    }
}
