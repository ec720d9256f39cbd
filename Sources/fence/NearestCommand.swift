import FenceEngine
import FenceIO
import Foundation

/// `fence nearest`: adaptive reporting for positions.
enum NearestCommand {
    static let help = """
        Usage: fence nearest --fences SOURCE [--positions POSITIONS|-] [options]

        For each position, in input order: the nearest fence boundary (its id), the distance to
        it in metres (negative inside that fence) and a suggested delay before the device's next
        report: the time to reach that boundary at --max-speed, within --min-delay...--max-delay.

          --max-speed M/S     fastest the devices move (default 30)
          --min-delay S       shortest suggested delay (default 1)
          --max-delay S       longest suggested delay (default 3600)
          --format FMT        csv (default): device,time,fence,distance_m,delay_s  or ndjson
          --input-format FMT  csv or ndjson (default: sniffed)
        \(PositionInput.help(column: 22))
          --coord SYSTEM      coordinate system of positions without a coord column
          --max-line-bytes N  refuse (and skip) position lines longer than N bytes (default 1048576)
          --threads N         worker threads (default: all cores)
        \(BadLines.help(column: 22))
        \(MaxWait.help(column: 22, defaultText: "default 1; the output is the same"))

        \(Arguments.fenceHelp)

        Exit status: 0 success, 1 bad input, 2 bad usage.
        """

    static func run(_ args: ArraySlice<String>) throws -> Int32 {
        let a = try Arguments(
            args, valued: Arguments.fenceOptions.union(PositionInput.options).union(["max-speed", "min-delay", "max-delay", "format", "threads", BadLines.option, MaxWait.option]),
            flagNames: [])
        if a.flags.contains("help") {
            printLine(help)
            return 0
        }
        let speed = try a.double("max-speed", default: 30)!
        let minDelay = try a.double("min-delay", default: 1)!
        let maxDelay = try a.double("max-delay", default: 3600)!
        guard speed > 0, minDelay >= 0, maxDelay >= minDelay else {
            throw UsageError("--max-speed must be > 0, and 0 <= --min-delay <= --max-delay")
        }
        let format = a.values["format"]?.lowercased() ?? "csv"
        guard format == "csv" || format == "ndjson" else { throw UsageError("--format must be csv or ndjson") }
        let positionInput = try a.positionInput()
        let maxWait = try a.maxWait(default: 1)
        let threads = try a.int("threads", default: FenceStore.defaultThreads, range: 1...1024)
        let positionsPath = try a.positionsPath()
        let loading = try FenceLoading(a)
        var store = loading.emptyStore()
        let bad = loading.rejected(after: store.add(loading.read.fences))
        loading.report(bad)
        let reader = try positionInput.open(positionsPath)
        reader.parseThreads = threads
        reader.maxWait = maxWait
        let out = OutputSink()
        if format == "csv" { out.write(Array("device,time,fence,distance_m,delay_s\n".utf8)) }
        var badLines = try BadLines(a, path: positionsPath)
        while true {
            var batch: [Position] = []
            var errors: [PositionLineError] = []
            let more = try naming(positionsPath) { try reader.read(limit: 65_536, into: &batch, errors: &errors) }
            badLines.take(good: batch.count, errors: errors, final: !more)
            // The searches on every core; the lines in input order.
            // Fences past their `expires` at a position's time are not there, as in `eval`.
            let times = store.expiringCount > 0 ? batch.map(\.time) : nil
            let nearest = batch.map(\.wgs84).withUnsafeBufferPointer { store.nearestBoundaries($0, times: times, threads: threads) }
            var bytes: [UInt8] = []
            for (p, n) in zip(batch, nearest) {
                let id = n.fence.map { store.id(of: $0) } ?? ""
                let delay = n.reportDelay(maxSpeed: speed, minimum: minDelay, maximum: maxDelay)
                if format == "csv" {
                    bytes.append(contentsOf: OutputEscaping.csvField(p.device).utf8)
                    bytes.append(44)
                    ISO8601.append(p.time, to: &bytes)
                    bytes.append(44)
                    bytes.append(contentsOf: OutputEscaping.csvField(id).utf8)
                    bytes.append(44)
                    if n.distance.isFinite { FixedDecimal.append(n.distance, digits: 2, to: &bytes) }
                    bytes.append(44)
                    FixedDecimal.append(delay, digits: 1, to: &bytes)
                    bytes.append(10)
                } else {
                    bytes.append(contentsOf: "{\"device\":".utf8)
                    OutputEscaping.appendJSONString(p.device, to: &bytes)
                    bytes.append(contentsOf: ",\"time\":\"".utf8)
                    ISO8601.append(p.time, to: &bytes)
                    bytes.append(contentsOf: "\",\"fence\":".utf8)
                    // No fence (none loaded, or the position is bad for distances): null, as
                    // its distance is.
                    if n.fence == nil { bytes.append(contentsOf: "null".utf8) } else { OutputEscaping.appendJSONString(id, to: &bytes) }
                    bytes.append(contentsOf: ",\"distance_m\":".utf8)
                    if n.distance.isFinite { FixedDecimal.append(n.distance, digits: 2, to: &bytes) } else { bytes.append(contentsOf: "null".utf8) }
                    bytes.append(contentsOf: ",\"delay_s\":".utf8)
                    FixedDecimal.append(delay, digits: 1, to: &bytes)
                    bytes.append(contentsOf: "}\n".utf8)
                }
            }
            out.write(bytes)
            // Out after every batch: on a live pipe (`--max-wait`) the answers go as they come.
            out.flush()
            // Over --max-bad: this batch's good lines are done, the rest is not read.
            if !more || badLines.exceeded { break }
        }
        out.flush()
        StandardError().write(
            "fence nearest: \(store.count) fences (\(bad.count) rejected), \(badLines.read) positions (\(badLines.rejected) rejected)\n")
        return bad.isEmpty && !badLines.exceeded ? 0 : 1
    }
}
