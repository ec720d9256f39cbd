import Foundation
import FenceEngine
import FenceIO

/// The options of every command that reads positions (`eval`, `contains`, `nearest`,
/// `publish`), checked together before any fence is loaded or server reached, and the reader
/// they make.
struct PositionInput {
    /// The options' names, for `Arguments(valued:)`.
    static let options: Set<String> = [
        "positions", "input-format", "columns", "position-fields", "coord", "max-line-bytes", "time-format",
    ]

    let format: PositionReader.Format?
    let coord: CoordinateSystem
    let maxLineBytes: Int
    let columns: [String]?
    let fields: [PositionField: String]
    let timeFormat: TimeFormat?

    /// Opens `path` ("-" is standard input); a failure names it.
    func open(_ path: String) throws -> PositionReader {
        try naming(path) {
            try PositionReader(
                path: path, format: format, coord: coord, maxLineBytes: maxLineBytes, columns: columns, fields: fields,
                timeFormat: timeFormat)
        }
    }

    /// The lines of `--columns` and `--position-fields` for a command's `--help`,
    /// descriptions starting at `column`.
    static func help(column: Int) -> String {
        func option(_ name: String, _ lines: [String]) -> String {
            let pad = String(repeating: " ", count: column)
            let head = "  " + name
            let first = head.count < column ? head + String(repeating: " ", count: column - head.count) + lines[0] : head + "\n" + pad + lines[0]
            return ([first] + lines.dropFirst().map { pad + $0 }).joined(separator: "\n")
        }
        return option("--columns NAMES", ["a CSV without a header line: its column names, e.g.", "device,time,lon,lat (its first line is then data)"])
            + "\n" + option("--position-fields F=N", ["an input column or key for a field with another name,", "e.g. lon=pickup_longitude,lat=pickup_latitude"])
            + "\n" + option("--time-format PATTERN", ["times in this strptime layout instead of epoch seconds", "or ISO 8601, e.g. \"%m/%d/%Y %I:%M:%S %p\" (UTC unless %z);", "%s%3N: epoch milliseconds (%s%6N micro-, %s%9N nano-)"])
    }
}

/// `--max-wait`: how long a batch of positions may wait for more input on a live pipe
/// (`PositionReader.maxWait`).
enum MaxWait {
    static let option = "max-wait"

    /// The option's lines for a command's `--help`, descriptions starting at `column`;
    /// `defaultText` says what the command does without it.
    static func help(column: Int, defaultText: String) -> String {
        let name = "  --max-wait SECONDS"
        let pad = String(repeating: " ", count: column)
        return name + String(repeating: " ", count: max(1, column - name.count))
            + "on a live pipe, take what arrived within this long as a batch\n" + pad
            + "instead of waiting for a full one (\(defaultText))"
    }
}

extension Arguments {
    /// `--max-wait SECONDS` (0 takes whatever has arrived), `default` when absent; nil for
    /// "off" (a batch waits until it is full or the input ends).
    func maxWait(default d: Double?) throws(UsageError) -> Double? {
        try secondsOrOff(MaxWait.option, default: d)
    }

    /// The position options (`PositionInput`), every one checked.
    func positionInput() throws(UsageError) -> PositionInput {
        let fields = try positionFields()
        return PositionInput(
            format: try inputFormat(), coord: try coordinateSystem(), maxLineBytes: try maxLineBytes(),
            columns: try positionColumns(fields: fields), fields: fields, timeFormat: try timeFormat())
    }

    /// `--time-format PATTERN`: the position times' layout as a `strptime` pattern
    /// (`TimeFormat`); nil when absent.
    func timeFormat() throws(UsageError) -> TimeFormat? {
        guard let pattern = values["time-format"] else { return nil }
        do {
            return try TimeFormat(pattern)
        } catch {
            throw UsageError("--time-format: \(error.reason)")
        }
    }

    /// `--input-format csv|ndjson`; nil (sniff the first line) when absent.
    func inputFormat() throws(UsageError) -> PositionReader.Format? {
        guard let f = values["input-format"] else { return nil }
        guard let parsed = PositionReader.Format(rawValue: f.lowercased()) else { throw UsageError("--input-format must be csv or ndjson") }
        return parsed
    }

    /// `--columns NAMES`: the column names of a CSV without a header line, comma-separated
    /// (the names and aliases a header may use); nil when absent. Refused with NDJSON input and
    /// when a required field has no name (`fields`: those `--position-fields` gave).
    func positionColumns(fields: [PositionField: String]) throws(UsageError) -> [String]? {
        guard let list = values["columns"] else { return nil }
        if values["input-format"] == "ndjson" { throw UsageError("--columns names the columns of a CSV; the input is NDJSON") }
        // Trimmed as a header's names are: blanks and quotes.
        let names = list.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " \"\t")) }
        do {
            try PositionReader.checkColumns(names, fields: fields)
        } catch {
            throw UsageError("--columns: \(error.reason)")
        }
        return names
    }

    /// `--position-fields FIELD=NAME,...`: the input's column (CSV) or key (NDJSON) for a
    /// position field whose name is none of the known ones and their aliases, e.g.
    /// `lon=pickup_longitude`; empty when absent. Fields: device, time, lon, lat, accuracy,
    /// coord.
    func positionFields() throws(UsageError) -> [PositionField: String] {
        guard let list = values["position-fields"] else { return [:] }
        var fields: [PositionField: String] = [:]
        for pair in list.split(separator: ",", omittingEmptySubsequences: false) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = parts[0].trimmingCharacters(in: .whitespaces).lowercased()
            let name = parts.count == 2 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
            guard let field = PositionField.allCases.first(where: { $0.names[0] == key }), !name.isEmpty else {
                throw UsageError("--position-fields takes FIELD=NAME pairs, FIELD one of device, time, lon, lat, accuracy, coord (got \"\(pair)\")")
            }
            guard fields[field] == nil else { throw UsageError("--position-fields names the \(key) twice") }
            if let other = fields.first(where: { $0.value.lowercased() == name.lowercased() }) {
                throw UsageError("--position-fields gives \(name) for both \(other.key.names[0]) and \(key)")
            }
            fields[field] = name
        }
        return fields
    }

    /// `--max-line-bytes N`: the longest position line read (default 1 MiB, at most 1 GiB);
    /// a longer line is refused with its number and skipped in bounded memory.
    func maxLineBytes() throws(UsageError) -> Int {
        try int("max-line-bytes", default: 1 << 20, range: 64...(1 << 30))
    }

    /// `--positions FILE`, "-" (standard input) when absent. Standard input can feed one input
    /// only: `--fences -` with positions from standard input is refused.
    func positionsPath() throws(UsageError) -> String {
        let path = values["positions"] ?? "-"
        if path == "-" && values["fences"] == "-" {
            throw UsageError("--fences - and the positions cannot both come from standard input (name one with a file)")
        }
        return path
    }

    /// `--output FILE`; nil for standard output (absent, or `-`).
    func outputPath() -> String? {
        values["output"].flatMap { $0 == "-" ? nil : $0 }
    }

    /// `--coord wgs84|gcj02|bd09ll` for positions without a coord column; WGS84 when absent.
    func coordinateSystem() throws(UsageError) -> CoordinateSystem {
        guard let c = values["coord"] else { return .wgs84 }
        guard let parsed = CoordinateSystem(name: c) else { throw UsageError("--coord must be wgs84, gcj02 or bd09ll") }
        return parsed
    }
}
