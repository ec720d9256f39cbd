import FenceEngine
import FenceIO
import Foundation

/// `fence eval`: fences + positions in, events out.
enum EvalCommand {
    static let help = """
        Usage: fence eval --fences SOURCE [--positions POSITIONS|-] [options]

        Applies each device's fixes in time order and writes enter / exit / dwell (and, with
        --cross, cross) events, ordered by (time, device, fence, event) within each batch
        (--batch): across batches too when the input is in time order.

        Input and output:
          --fences SOURCE       fences: GeoJSON or any OGR source (see below)
          --positions FILE      CSV (a header line, or --columns) or NDJSON, plain, gzip or zstd;
                                "-" or none for standard input
          --input-format FMT    csv or ndjson (default: sniffed from the first line)
        \(PositionInput.help(column: 24))
          --coord SYSTEM        coordinate system of positions without a coord column:
                                wgs84 (default), gcj02, bd09ll
          --format FMT          ndjson or csv (default: csv for an --output named .csv, .csv.gz
                                or .csv.zst, else ndjson)
          --output FILE         write events here instead of standard output; a name ending
                                .gz or .zst is written compressed (gzip, zstd)
          --properties LIST     fence properties to carry into each event, comma-separated
                                (NDJSON: a "properties" object; CSV: one column each)
          --state FILE          load the tracker state from FILE if it exists; save it at the end
                                (one run at a time: another run on FILE meanwhile is refused)
          --batch N             fixes per evaluation batch (default 1000000); each device's fixes
                                are ordered within a batch, a fix older than the device's last
                                applied fix is late and dropped
          --max-matches N       (fix, fence) matches to hold at once (default 16777216, about
                                280 MB): a batch expected to hold more is evaluated in pieces
                                in event time (after the latest fix already applied), each
                                piece's events written before the next; the events are the
                                same as in one pass
          --max-lead SECONDS    refuse fixes dated more than this after the clock when their
                                batch is read (default: no bound). For a live feed: one fix
                                from a wrong clock would otherwise stop its device until
                                then, and with --evict-idle or expiring fences end every
                                device's visits and expire those fences at once
        \(BadLines.help(column: 24))
          --max-wait SECONDS    on a live pipe, evaluate what arrived within this long as a
                                batch instead of waiting for a full one, and write the
                                events held back at a batch's last millisecond once the
                                input is idle that long (default off: then the output does
                                not depend on when lines arrive). Input in time order gives
                                the same events either way, but for ties across an idle gap
          --max-line-bytes N    refuse (and skip) position lines longer than N bytes
                                (default 1048576)
          --repair              repair invalid polygons with GEOS MakeValid instead of rejecting

        Engine settings:
          --dwell SECONDS       seconds inside before dwell (default 600; 0: on the entering fix)
          --actions LIST        events to report: enter,exit,dwell[,cross] (default enter,exit,dwell)
          --no-initial          no enter for devices already inside at their first fix
          --margin METRES       hysteresis margin (default 0: off, and accuracy unused); above
                                0 each fix's accuracy raises it
          --exit-delay SECONDS  exit only after staying outside this long (default 0)
          --evict-idle SECONDS  forget devices without a fix for this long (event time; at
                                least --exit-delay); their open visits end with exit, reason
                                device-idle (default 0: never)
          --cross               detect cross events between two outside fixes (also on
                                when cross is in --actions or in a fence's actions)
          --threads N           worker threads (default: all cores)
          --help                this text

        \(Arguments.fenceHelp)

        A summary goes to standard error at the end. Exit status: 0 success, 1 bad input (a
        rejected fence, too many bad lines, an unreadable state file), 2 bad usage.
        """

    static func run(_ args: ArraySlice<String>) throws -> Int32 {
        let a = try Arguments(
            args,
            valued: Arguments.fenceOptions.union(PositionInput.options).union([
                "format", "output", "properties", "state", "batch", "max-matches", "max-lead", "max-bad", MaxWait.option, "dwell",
                "actions", "margin", "exit-delay", "evict-idle", "threads",
            ]), flagNames: ["repair", "no-initial", "cross"])
        if a.flags.contains("help") {
            printLine(help)
            return 0
        }
        let started = Date()
        let positionsPath = try a.positionsPath()
        if a.values["state"] == "-" { throw UsageError("--state needs a file: it is read at the start and replaced at the end") }
        let outputPath = a.outputPath()
        try refuseSameFile(
            output: outputPath, others: [("positions", positionsPath), ("fences", a.values["fences"]), ("state", a.values["state"])])
        try refuseUnwrittenCompression(outputPath)
        // Without --format, the output file's name says it: events.csv, events.csv.gz.
        let namedCSV = outputPath.map { OutputEncoder.plainName($0).lowercased().hasSuffix(".csv") }
        guard let format = EventWriter.Format(rawValue: a.values["format"]?.lowercased() ?? (namedCSV == true ? "csv" : "ndjson")) else {
            throw UsageError("--format must be ndjson or csv")
        }
        let positionInput = try a.positionInput()
        let threads = try a.int("threads", default: FenceStore.defaultThreads, range: 1...1024)
        let batchSize = try a.int("batch", default: 1_000_000, range: 1...100_000_000)
        let matchBudget = try a.int("max-matches", default: EventEngine.defaultMatchBudget, range: 1...Int(Int32.max))
        let maxLead = try a.maxLead(default: nil)
        let maxWait = try a.maxWait(default: nil)
        var settings = try a.engineSettings()
        settings.idleEviction = try a.double("evict-idle", default: 0)!
        guard settings.idleEviction >= 0 else { throw UsageError("--evict-idle must be >= 0") }
        // An empty name (`a,,b`, a lost shell variable) is a usage error, as in `fence change`.
        let propertyNames = try a.names("properties") ?? []

        // Held to the end, from before the fences load (after the options are checked): a
        // second run on the same state is refused at once, not left to overwrite it.
        let stateLock = try a.values["state"].map { (path) throws(FenceError) in try CheckpointFile.lock(path: path) }
        defer { withExtendedLifetime(stateLock) {} }

        let stderr = StandardError()
        let loading = try FenceLoading(a)
        var fences = loading.read.fences
        if !settings.crossDetection && fences.contains(where: { $0.actions?.contains(.cross) == true }) {
            // Detection on for the fences whose own mask asks for cross; the others get the
            // engine's mask as their own, so that it stays without cross for them.
            settings.crossDetection = true
            for i in fences.indices where fences[i].actions == nil { fences[i].actions = settings.actions }
        }
        var engine = try EventEngine(store: loading.emptyStore(), settings: settings)
        let (results, _) = engine.add(fences, repair: a.flags.contains("repair"), threads: threads)
        let badFences = loading.rejected(after: results)
        loading.report(badFences)
        if let note = loading.silentFencesNote(command: "eval") { stderr.write(note + "\n") }
        let loadedCount = engine.store.count
        if loadedCount == 0 && !badFences.isEmpty {
            // Every fence refused is a wrong option (no --id-field for ogr2ogr's GeoJSON, say)
            // more often than an intended empty set, and with --state it would end every visit
            // the state holds (fence-removed). An empty source still runs.
            let state = a.values["state"].map { "; the state file \($0) was left as it was" } ?? ""
            stderr.write("fence eval: no fence loaded (all \(badFences.count) refused): nothing evaluated\(state)\n")
            return 1
        }

        // Fences removed, replaced or given another mask since the state was written: their
        // exits and re-triggers come first, at each device's last fix.
        var restoreEvents: [FenceEvent] = []
        if let statePath = a.values["state"], let snapshot = try CheckpointFile.read(path: statePath) {
            let (dropped, events) = try engine.restoreReportingChanges(snapshot)
            restoreEvents = events
            if dropped > 0 {
                stderr.write(
                    "fence: \(statePath): \(dropped) inside pairs name fences that are not loaded; "
                        + (snapshot.engineActions == nil ? "dropped (a version 1 state file cannot word their exits)\n" : "they exit, reason fence-removed\n"))
            }
        }

        let reader = try positionInput.open(positionsPath)
        reader.parseThreads = threads
        reader.maxWait = maxWait
        let out: OutputSink = try outputPath.map { try OutputSink(path: $0, deferOpening: true) } ?? OutputSink()
        if let statePath = a.values["state"] {
            // Checked now, not after the whole run.
            try refuseUnwritable(statePath, byRename: true)
            OutputFailure.unfinishedOnClose = "the state file \(statePath) was not written"
        }
        let writer = EventWriter(format: format, propertyNames: propertyNames, fences: loading.read.fences)
        // A misspelt name is an always-empty column: said, as `fence inside` says its names.
        if !propertyNames.isEmpty {
            var carried = Set(propertyNames)
            for f in loading.read.fences where !carried.isEmpty { for k in f.properties.keys { carried.remove(k) } }
            for name in propertyNames where carried.contains(name) {
                StandardError().write("fence eval: no fence has the property '\(FenceError.printable(name))' (--properties)\n")
                carried.remove(name)
            }
        }
        out.write(writer.header)
        var byKind: [FenceEventKind: Int] = [:]
        var eventCount = 0
        func write(_ events: ArraySlice<FenceEvent>) {
            var kinds = [Int](repeating: 0, count: FenceEventKind.allCases.count)
            for e in events { kinds[Int(e.kind.rawValue)] += 1 }
            for kind in FenceEventKind.allCases where kinds[Int(kind.rawValue)] > 0 { byKind[kind, default: 0] += kinds[Int(kind.rawValue)] }
            // Formatted on the workers, a chunk each, and written in order.
            let rows = events.withUnsafeBufferPointer { records in
                ChunkedRows.formatted(count: records.count, chunkSize: 16_384, threads: threads, bytesPerRow: 160) { i, bytes in
                    writer.append(records[i], to: &bytes)
                }
            }
            for piece in rows { out.write(piece) }
            eventCount += events.count
        }
        // Events in the last written millisecond of what was applied so far wait for the next
        // batch: with input in time order, its events start in that millisecond, and two
        // devices' events of one millisecond must go by device across the cut too (an
        // independent audit found B,100 then A,100 written B first with --batch 1). No event
        // is later than the watermark, so this holds one millisecond's events at most.
        var held = restoreEvents
        func release(upTo watermark: Double) {
            let cut = FenceEvent.outputMillisecond(watermark)
            // Sorted by written millisecond first: the first one at or past the cut, by bisection.
            var keep = 0
            var high = held.count
            while keep < high {
                let mid = (keep + high) / 2
                if FenceEvent.outputMillisecond(held[mid].time) < cut { keep = mid + 1 } else { high = mid }
            }
            write(held[..<keep])
            held.removeFirst(keep)
        }
        var bad = try BadLines(a, path: positionsPath)
        var late = 0
        var duplicates = 0
        var ahead = 0
        var stoppedForBadInput = false
        // A live progress line, on a terminal only and only when the input is a file (a pipe's
        // progress belongs to whatever feeds it).
        let progress = isatty(2) == 1 && positionsPath != "-"
        // Fixes refused by --max-lead are named with their line (it named device and time only:
        // a user audit), which costs an Int a position only then.
        reader.recordsLines = maxLead != nil
        let prefetch = PrefetchingReader(reader, limit: batchSize)
        var warnedAboutExpiry = false
        var batchNumber = 0
        while true {
            let next: (batch: [Position], errors: [PositionLineError], more: Bool)
            do {
                next = try naming(positionsPath) { try prefetch.next() }
            } catch {
                // A run that fails keeps the events of the batches it applied. One refused
                // before any (at the input's header) leaves the previous output as it was.
                if batchNumber > 0 {
                    write(held[...])
                    out.flush()
                }
                if let statePath = a.values["state"] {
                    stderr.write("fence eval: the state file \(statePath) was not written: the input could not be read to its end\n")
                }
                throw error
            }
            var (batch, errors, more) = next
            if batch.isEmpty && errors.isEmpty && more {
                // Nothing arrived within --max-wait: the input is idle, and the events held at
                // the last batch's final millisecond go out. (Before the first batch there are
                // none, and the output file is not opened yet: a run refused at the header
                // leaves it as it was.)
                if !held.isEmpty {
                    write(held[...])
                    held.removeAll()
                    out.flush()
                }
                continue
            }
            batchNumber += 1
            // Fixes past --max-lead count as rejected lines, judged with the batch's bad lines.
            var refused: [(line: Int, fix: Position)] = []
            if let maxLead {
                let clock = Date().timeIntervalSince1970
                refused = refuseAhead(&batch, lines: prefetch.lines, after: clock + maxLead)
                for (line, fix) in refused.prefix(max(0, 20 - ahead)) {
                    stderr.write(
                        "fence: \(positionsPath): line \(line): device \(fix.device) at \(ISO8601.format(fix.time)) is dated more than "
                            + "--max-lead \(maxLead) s after the clock (\(ISO8601.format(clock))): refused\n")
                }
                ahead += refused.count
            }
            guard bad.take(good: batch.count, errors: errors, refused: refused.count, final: !more) else {
                stoppedForBadInput = true
                break
            }
            // A batch with many matches (overlapping fences) goes in pieces in event time, each
            // piece's events written before the next is applied: memory follows the piece, and
            // the events are those of one pass (`EventEngine.pieces`).
            let removedBefore = engine.latestExpiredRemoval
            engine.evaluate(batch, threads: threads, matchBudget: matchBudget) { result in
                // A fence an earlier batch expired and removed was not there for this batch's
                // fixes from before its expiry: said once, not silently different from one
                // batch. (Only the first piece can hold such fixes: the others are after the
                // watermark, which no removal passed.)
                if !warnedAboutExpiry && result.earliest < removedBefore {
                    warnedAboutExpiry = true
                    stderr.write(
                        "fence eval: warning: batch \(batchNumber) holds fixes from \(ISO8601.format(result.earliest)), before fences that "
                            + "an earlier batch expired (the latest at \(ISO8601.format(removedBefore))); they no longer "
                            + "see those fences. The input is out of time order across batches: sort it by time, or raise --batch.\n")
                }
                bad.addRejected(result.rejected.count)
                late += result.late
                duplicates += result.duplicates
                held = FenceEvent.merged(held, result.events)
                release(upTo: result.watermark)
            }
            // Out after every batch: the file is opened (emptied) only once the first batch
            // was read, and a run that fails later keeps the events of the batches before.
            out.flush()
            if progress {
                stderr.write(
                    "\rfence eval: \(bad.read) positions, \(eventCount) events, "
                        + String(format: "%.1f s", Date().timeIntervalSince(started)) + "\u{1B}[K")
            }
            if !more { break }
        }
        if progress { stderr.write("\n") }
        write(held[...])
        // A compressed file's trailer goes out before the state is written.
        out.finish()
        if let statePath = a.values["state"] {
            if stoppedForBadInput {
                stderr.write("fence eval: the state file \(statePath) was not written: the run stopped on bad lines (--max-bad)\n")
            } else {
                try CheckpointFile.write(engine.snapshot(), path: statePath)
            }
        }
        let kinds = FenceEventKind.allCases.map { "\($0) \(byKind[$0] ?? 0)" }.joined(separator: ", ")
        let seconds = Date().timeIntervalSince(started)
        // eval removes fences only by expiry; the device count is of those still held, which
        // --evict-idle makes fewer than were seen.
        let expired = loadedCount - engine.store.count
        let fenceCounts = "\(loadedCount) fences (\(badFences.count) rejected" + (expired > 0 ? ", \(expired) expired)" : ")")
        let devices = settings.idleEviction > 0 ? "\(engine.deviceCount) devices held at the end (idle ones evicted)" : "\(engine.deviceCount) devices"
        stderr.write(
            "fence eval: \(fenceCounts); \(bad.read) positions read, \(bad.rejected) rejected"
                + (ahead > 0 ? " (\(ahead) dated ahead of the clock)" : "") + ", "
                + "\(late) late, \(duplicates) duplicate; events: \(kinds); \(devices); "
                + String(format: "%.2f s\n", seconds))
        return badFences.isEmpty && !stoppedForBadInput ? 0 : 1
    }
}

/// Removes from `batch` the fixes dated after `bound` (in order) and returns them with their
/// line numbers (from `lines`, one per position, when given; else 0); a NaN time stays for
/// the engine to refuse with its reason.
/// - Complexity: O(n).
func refuseAhead(_ batch: inout [Position], lines: [Int], after bound: Double) -> [(line: Int, fix: Position)] {
    guard batch.contains(where: { $0.time > bound }) else { return [] }
    var refused: [(line: Int, fix: Position)] = []
    var kept: [Position] = []
    kept.reserveCapacity(batch.count)
    for (k, fix) in batch.enumerated() {
        if fix.time > bound { refused.append((k < lines.count ? lines[k] : 0, fix)) } else { kept.append(fix) }
    }
    batch = kept
    return refused
}

/// Reads the next batch of positions on a background thread while the caller evaluates the
/// current one, so parsing overlaps evaluation. One read is in flight at a time and the reader
/// is only ever used by that one read: reads stay in input order.
final class PrefetchingReader: @unchecked Sendable {
    private let reader: PositionReader
    private let limit: Int
    private let queue = DispatchQueue(label: "fence.eval.read")
    private let group = DispatchGroup()
    private var result: Result<([Position], [PositionLineError], Bool), FenceError>?
    private var finished = false
    /// Each position's line number in the batch `next` returned last, when the reader
    /// `recordsLines` (taken from it on the reading thread, before the next read starts).
    private(set) var lines: [Int] = []
    private var pendingLines: [Int] = []

    init(_ reader: PositionReader, limit: Int) {
        self.reader = reader
        self.limit = limit
        start()
    }

    private func start() {
        queue.async(group: group) {
            var batch: [Position] = []
            batch.reserveCapacity(min(self.limit, 1 << 20))
            var errors: [PositionLineError] = []
            do throws(FenceError) {
                let more = try self.reader.read(limit: self.limit, into: &batch, errors: &errors)
                if self.reader.recordsLines {
                    self.pendingLines = self.reader.positionLines
                    self.reader.positionLines.removeAll(keepingCapacity: true)
                }
                self.result = .success((batch, errors, more))
            } catch {
                self.result = .failure(error)
            }
        }
    }

    /// The next batch, its bad lines, and whether more input follows.
    func next() throws(FenceError) -> ([Position], [PositionLineError], Bool) {
        guard !finished else { return ([], [], false) }
        group.wait()
        let r = result!
        result = nil
        lines = pendingLines
        pendingLines = []
        switch r {
        case .failure(let e):
            finished = true
            throw e
        case .success(let value):
            if value.2 { start() } else { finished = true }
            return value
        }
    }
}
