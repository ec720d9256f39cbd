import FenceEngine
import FenceIO
import Foundation

/// `fence contains`: the plain spatial join.
enum ContainsCommand {
    static let help = """
        Usage: fence contains --fences SOURCE [--positions POSITIONS|-] [options]

        For each position, in input order, the ids of the fences covering it (boundary included).

        Options:
          --fences SOURCE      fences: GeoJSON or any OGR source (see below)
          --positions FILE     CSV (a header line, or --columns) or NDJSON positions, plain,
                               gzip or zstd; "-" or none for standard input
          --format FORMAT      csv (default): device,time,id;id;...  or ndjson
          --input-format FMT   csv or ndjson (default: sniffed from the first line)
        \(PositionInput.help(column: 23))
          --coord SYSTEM       coordinate system of positions without a coord column:
                               wgs84 (default), gcj02, bd09ll
          --max-line-bytes N   refuse (and skip) position lines longer than N bytes
                               (default 1048576)
          --repair             repair invalid polygons with GEOS MakeValid instead of rejecting
        \(BadLines.help(column: 23))
        \(MaxWait.help(column: 23, defaultText: "default 1; the output is the same"))
          --threads N          worker threads (default: all cores)
          --help               this text

        \(Arguments.fenceHelp)

        Exit status: 0 success, 1 bad input, 2 bad usage.
        """

    static func run(_ args: ArraySlice<String>) throws -> Int32 {
        let a = try Arguments(
            args, valued: Arguments.fenceOptions.union(PositionInput.options).union(["format", "threads", BadLines.option, MaxWait.option]),
            flagNames: ["repair"])
        if a.flags.contains("help") {
            printLine(help)
            return 0
        }
        let positionsPath = try a.positionsPath()
        let format = a.values["format"]?.lowercased() ?? "csv"
        guard format == "csv" || format == "ndjson" else { throw UsageError("--format must be csv or ndjson") }
        let positionInput = try a.positionInput()
        let maxWait = try a.maxWait(default: 1)
        let threads = try a.int("threads", default: FenceStore.defaultThreads, range: 1...1024)

        let stderr = StandardError()
        let loading = try FenceLoading(a)
        var store = loading.emptyStore()
        let bad = loading.rejected(after: store.add(loading.read.fences, repair: a.flags.contains("repair"), threads: threads))
        loading.report(bad)

        let reader = try positionInput.open(positionsPath)
        reader.parseThreads = threads
        reader.maxWait = maxWait
        let out = StandardOutput()
        var badLines = try BadLines(a, path: positionsPath)
        while true {
            var batch: [Position] = []
            var errors: [PositionLineError] = []
            let more = try naming(positionsPath) { try reader.read(limit: 1 << 16, into: &batch, errors: &errors) }
            badLines.take(good: batch.count, errors: errors, final: !more)
            // Positions of one batch may mix coordinate systems: each converted on its own.
            let points = batch.map(\.wgs84)
            store.prepareIndex(forQueries: points.count)
            let coverage = store.covering(points, threads: threads)
            // The rows are formatted on the workers, a chunk each, and written in order.
            let expiring = store.expiringCount > 0
            // A constant for the workers: the `var` itself, captured, was copied for every row
            // (a retain and a release of each of its arrays: a fifth of the run's instructions).
            let fences = store
            let csv = format == "csv"
            let rows = batch.withUnsafeBufferPointer { positions in
                ChunkedRows.formatted(count: positions.count, chunkSize: 8_192, threads: threads, bytesPerRow: 48) { i, bytes in
                    Self.appendRow(positions.baseAddress! + i, coverage[i], store: fences, expiring: expiring, csv: csv, to: &bytes)
                }
            }
            for piece in rows { out.write(piece) }
            // Over --max-bad: this batch's good lines are done, the rest is not read.
            if !more || badLines.exceeded { break }
        }
        stderr.write(
            "fence contains: \(store.count) fences (\(bad.count) rejected), \(badLines.read) positions (\(badLines.rejected) rejected)\n")
        return bad.isEmpty && !badLines.exceeded ? 0 : 1
    }

    /// One output row: the position's device and time and the ids of the fences covering it
    /// (`covering`, less those past their `expires` at its time, as in `eval`), in UTF-8 order.
    /// Read through a pointer: a copy of the position would retain and release its device id.
    /// The usual rows (no fence, one or two, none expiring) make no array and no string.
    static func appendRow(
        _ p: UnsafePointer<Position>, _ covering: ArraySlice<FenceHandle>, store: FenceStore, expiring: Bool, csv: Bool,
        to bytes: inout [UInt8]
    ) {
        let time = p.pointee.time
        let ids: [String]
        if !expiring && covering.count <= 2 {
            // Two ids are put in order by one compare (`UTF8Order.sorted` cost about 2,000
            // instructions for them).
            if covering.count == 2 {
                let (a, b) = (store.id(of: covering[covering.startIndex]), store.id(of: covering[covering.startIndex + 1]))
                ids = UTF8Order.compare(a, b) <= 0 ? [a, b] : [b, a]
            } else {
                ids = []
            }
        } else {
            let live = expiring ? covering.filter { !store.hasExpired($0, at: time) } : Array(covering)
            ids = UTF8Order.sorted(live.map { store.id(of: $0) })
        }
        // One id without expiry, the usual row with a fence, without the array.
        let single = !expiring && covering.count == 1 ? store.id(of: covering[covering.startIndex]) : nil
        if csv {
            OutputEscaping.appendCSVField(p.pointee.device, to: &bytes)
            bytes.append(44)
            ISO8601.append(time, to: &bytes)
            bytes.append(44)
            if let single {
                appendIDList(CollectionOfOne(single), to: &bytes)
            } else if !ids.isEmpty {
                appendIDList(ids, to: &bytes)
            }
        } else {
            bytes.appendUTF8("{\"device\":")
            OutputEscaping.appendJSONString(p.pointee.device, to: &bytes)
            bytes.appendUTF8(",\"time\":\"")
            ISO8601.append(time, to: &bytes)
            bytes.appendUTF8("\",\"fences\":[")
            if let single {
                OutputEscaping.appendJSONString(single, to: &bytes)
            } else {
                for (k, id) in ids.enumerated() {
                    if k > 0 { bytes.append(44) }
                    OutputEscaping.appendJSONString(id, to: &bytes)
                }
            }
            bytes.appendUTF8("]}")
        }
        bytes.append(10)
    }

    /// Appends the CSV cell of `ids` (not empty) as a list, `id;id;...`: the bytes of
    /// `csvField(ids.map(listItem).joined(separator: ";"))`, copied id by id when no id needs
    /// an escape (no `;` or `\`, nothing `csvField` quotes, the first not starting a formula),
    /// else made as that string.
    static func appendIDList(_ ids: some Collection<String>, to bytes: inout [UInt8]) {
        var plain = true
        var leading = true
        for id in ids where plain {
            var s = id
            plain = s.withUTF8 { b in
                OutputEscaping.isPlainCSV(b, leading: leading)
                    && (b.isEmpty || memchr(b.baseAddress!, 59, b.count) == nil && memchr(b.baseAddress!, 92, b.count) == nil)
            }
            // A field starts at its first byte: after an empty first id it starts with `;`.
            leading = false
        }
        guard plain else {
            bytes.appendUTF8(OutputEscaping.csvField(ids.map(listItem).joined(separator: ";")))
            return
        }
        var first = true
        for id in ids {
            if !first { bytes.append(59) }
            first = false
            bytes.appendUTF8(id)
        }
    }
}

/// A fence id as an item of the CSV list `id;id;...`: a `;` or `\` in it is written `\;` or
/// `\\`, so that one fence `a;b` is not read as fences `a` and `b`. Other ids as they are.
func listItem(_ id: String) -> String {
    guard id.utf8.contains(where: { $0 == 59 || $0 == 92 }) else { return id }
    var out = ""
    for c in id.unicodeScalars {
        if c == ";" || c == "\\" { out.unicodeScalars.append("\\") }
        out.unicodeScalars.append(c)
    }
    return out
}
