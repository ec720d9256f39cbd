import Foundation

/// A small argument parser: `--name value`, `--name=value`, `--flag`. Every input and output
/// is named by an option, so a bare argument is a usage error (a forgotten `--positions`
/// would otherwise read standard input instead). Usage errors exit with status 2.
struct Arguments {
    /// The last value of each valued option.
    var values: [String: String] = [:]
    /// Every value of each valued option, in order (for options that may repeat).
    var lists: [String: [String]] = [:]
    var flags: Set<String> = []

    /// - Parameters:
    ///   - valued: options that take a value.
    ///   - flagNames: options that take none.
    init(_ args: ArraySlice<String>, valued: Set<String>, flagNames: Set<String>) throws(UsageError) {
        var i = args.startIndex
        while i < args.endIndex {
            let a = args[i]
            i += 1
            if a == "-" || !a.hasPrefix("-") {
                throw UsageError("unexpected argument \(a): inputs and outputs are named by options (--fences, --positions, --output ...)")
            }
            // Split at the first `=` byte, not Character: a value starting with a combining
            // mark joins the `=` in one Character, and was read as an unknown option's name.
            let bytes = a.utf8.drop { $0 == UInt8(ascii: "-") }
            var name: String
            var value: String?
            if let eq = bytes.firstIndex(of: UInt8(ascii: "=")) {
                name = String(decoding: bytes[..<eq], as: UTF8.self)
                value = String(decoding: bytes[bytes.index(after: eq)...], as: UTF8.self)
            } else {
                name = String(decoding: bytes, as: UTF8.self)
            }
            if name == "h" { name = "help" }
            if flagNames.contains(name) || name == "help" {
                guard value == nil else { throw UsageError("--\(name) takes no value") }
                flags.insert(name)
            } else if valued.contains(name) {
                if value == nil {
                    guard i < args.endIndex else { throw UsageError("--\(name) needs a value") }
                    value = args[i]
                    i += 1
                }
                // Given twice, a single-valued option would silently keep the last value.
                guard values[name] == nil || Self.repeatable.contains(name) else {
                    throw UsageError("--\(name) is given twice")
                }
                values[name] = value
                lists[name, default: []].append(value!)
            } else {
                throw UsageError("unknown option --\(name)")
            }
        }
    }

    /// The longest duration an option takes, in seconds (about 31.7 years): NATS takes
    /// durations as Int64 nanoseconds, which end at 9.2e9 s, and a larger `--ack-wait` or
    /// `--dedup-window` trapped in the conversion (exit 132).
    static let maxSeconds = 1e9

    /// Options that may be given more than once, each value kept (`lists`).
    static let repeatable: Set<String> = ["open-option", "fence", "group", "device", "remove-id", "remove-group-name"]

    func int(_ name: String, default d: Int, range: ClosedRange<Int>) throws(UsageError) -> Int {
        guard let v = values[name] else { return d }
        guard let n = Int(v), range.contains(n) else {
            throw UsageError("--\(name) must be a whole number in \(range.lowerBound)...\(range.upperBound), got \(v)")
        }
        return n
    }

    func double(_ name: String, default d: Double?) throws(UsageError) -> Double? {
        guard let v = values[name] else { return d }
        // Decimal only: `Double("0x10")` is 16, and a hexadecimal dwell is more likely a slip.
        let decimal = v.utf8.allSatisfy { (48...57).contains($0) || $0 == 43 || $0 == 45 || $0 == 46 || $0 == 101 || $0 == 69 }
        guard decimal, let n = Double(v), n.isFinite else { throw UsageError("--\(name) must be a finite decimal number, got \(v)") }
        return n
    }

    /// Every value of a repeatable option, each one name as given, its exact bytes (commas and
    /// edge spaces are part of it); nil when not given. An empty value (a lost shell variable)
    /// names nothing: a usage error.
    func wholeNames(_ name: String) throws(UsageError) -> [String]? {
        guard let list = lists[name] else { return nil }
        guard !list.contains("") else { throw UsageError("--\(name) takes a name, not an empty value") }
        return list
    }

    /// A list option's names, comma-separated and trimmed (kept as written when not
    /// `trimming`: a layer's name may begin or end with a space), nil when the option is not
    /// given. An empty name (`--remove ''`, `a,,b`, a lost shell variable) is a usage error: it
    /// would name nothing, and the command would quietly do nothing (or publish a change that
    /// removes nothing, or read every layer).
    func names(_ name: String, trimming: Bool = true) throws(UsageError) -> [String]? {
        guard let s = values[name] else { return nil }
        let list = s.split(separator: ",", omittingEmptySubsequences: false).map { trimming ? String($0.trimmingCharacters(in: .whitespaces)) : String($0) }
        guard !list.contains("") else { throw UsageError("--\(name) takes names, comma-separated, none empty; got '\(s)'") }
        return list
    }

    /// A duration option that also takes "off": 0 to `maxSeconds` seconds, `default` when not
    /// given, nil for "off".
    func secondsOrOff(_ name: String, default d: Double?) throws(UsageError) -> Double? {
        if values[name] == "off" { return nil }
        guard let seconds = try double(name, default: d) else { return nil }
        guard seconds >= 0, seconds <= Arguments.maxSeconds else {
            throw UsageError("--\(name) takes 0 to \(Int(Arguments.maxSeconds)) seconds, or off")
        }
        return seconds
    }

    /// `--max-lead`: seconds a fix may be dated after a clock (the machine's, or the server's
    /// when it stored the message), `default` when not given; nil for "off" (no bound).
    func maxLead(default d: Double?) throws(UsageError) -> Double? {
        try secondsOrOff("max-lead", default: d)
    }
}

struct UsageError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}
