import FenceEngine
import Foundation

/// What reading one data line of a position input takes once its layout is known (a CSV's
/// header or `--columns`, or NDJSON): an immutable value, so workers parsing lines side by
/// side share it (`PositionReader.read` on `parseThreads`), each with its own field ranges.
///
/// A line's result depends on its bytes and number only, never on the lines before it: that
/// is what makes parsing in parallel give the same positions and errors as one thread.
struct PositionLineParser: Sendable {
    var format: PositionReader.Format
    var delimiter: UInt8 = 44
    var columnCount = 0
    /// By `PositionField` raw value, the CSV column of that field (-1: absent).
    var columnIndex = [Int](repeating: -1, count: PositionField.allCases.count)
    /// The columns were named by `--columns` (for messages).
    var headerless = false
    var defaultCoord: CoordinateSystem
    var timeFormat: TimeFormat?
    /// Input names given for fields, by lowercased name (`PositionReader.fieldsByName`).
    var namedFields: [String: PositionField]

    /// The position on a line with content (not blank, no NUL byte: the reader's checks), or
    /// why the line is refused. `fields` is scratch for a CSV line's field ranges
    /// (`columnCount` of them), reused from line to line.
    @inline(__always)
    func parse(_ line: UnsafeBufferPointer<UInt8>, lineNumber: Int, fields: inout [Range<Int>]) -> Result<Position?, PositionLineError> {
        switch format {
        case .csv: return parseCSV(line, lineNumber: lineNumber, fields: &fields)
        case .ndjson: return parseJSON(line, lineNumber: lineNumber)
        }
    }

    /// `parse`, for a CSV line `usablePosition` gave nil: not tried again.
    func parseAny(_ line: UnsafeBufferPointer<UInt8>, lineNumber: Int, fields: inout [Range<Int>]) -> Result<Position?, PositionLineError> {
        switch format {
        case .csv: return parseAnyCSV(line, lineNumber: lineNumber, fields: &fields)
        case .ndjson: return parseJSON(line, lineNumber: lineNumber)
        }
    }

    /// The field an input name stands for, and its rank (`PositionReader.match`).
    func match(_ name: some StringProtocol) -> (field: PositionField, rank: Int)? {
        namedFields.isEmpty ? PositionField.match(name) : PositionReader.match(name, given: namedFields)
    }

    /// A field's value in an NDJSON line and the rank of the key it came under.
    struct Ranked {
        var value: JSONLineScanner.Value
        var rank: Int
    }

    /// `match` of an NDJSON key, from its bytes when it has no escape and is ASCII.
    @inline(__always)
    func match(_ key: JSONLineScanner.Key) -> (field: PositionField, rank: Int)? {
        if namedFields.isEmpty, case .raw(let bytes) = key, let found = PositionField.match(ascii: bytes) { return found }
        guard let text = key.text else { return nil }
        return match(text)
    }

    func parseCSV(_ line: UnsafeBufferPointer<UInt8>, lineNumber: Int, fields: inout [Range<Int>]) -> Result<Position?, PositionLineError> {
        if let p = usablePosition(csv: line, fields: &fields) { return .success(p) }
        return parseAnyCSV(line, lineNumber: lineNumber, fields: &fields)
    }

    /// The position a CSV line holds when it is a plain good one, else nil (then
    /// `parseAnyCSV` reads the line again and says what it is): as many fields as columns,
    /// each unquoted or quoted without a doubled quote (its bytes then lie between the
    /// quotes), a device id that starts with neither a blank nor a CR, every value read, and
    /// the position usable. No coord column (`parseAnyCSV` reads those lines).
    ///
    /// Nil never changes a result, it only costs the second reading, so this gives exactly
    /// the position `parseAnyCSV` would. It is the path of nearly every line: the general
    /// one's optional values, closures and field lookups cost about 500 instructions a line.
    /// - Complexity: O(bytes), no allocation but the device id's when it has over 15 bytes.
    @inline(__always)
    func usablePosition(csv line: UnsafeBufferPointer<UInt8>, fields: inout [Range<Int>]) -> Position? {
        guard columnIndex[PositionField.coord.rawValue] < 0, let p = line.baseAddress, columnCount > 0 else { return nil }
        let n = line.count
        let delimiter = delimiter
        let count = columnCount
        let hasQuote = memchr(p, 34, n) != nil
        let delimiters = UInt64(delimiter) &* 0x0101_0101_0101_0101
        let split = fields.withUnsafeMutableBufferPointer { ranges -> Bool in
            var index = 0
            var i = 0
            while true {
                if i < n && p[i] == 34 {
                    // Quoted: its bytes run to the next quote, which has to close it.
                    let s = i &+ 1
                    guard let q = memchr(p + s, 34, n &- s) else { return false }
                    let e = UnsafeRawPointer(q) - UnsafeRawPointer(p)
                    i = e &+ 1
                    guard i == n || p[i] == delimiter else { return false }
                    ranges[index] = s..<e
                } else {
                    let s = i
                    i = Self.delimiter(in: p, from: i, to: n, matching: delimiters)
                    if hasQuote && memchr(p + s, 34, i &- s) != nil { return false }
                    ranges[index] = s..<i
                }
                index &+= 1
                if i >= n { return index == count }
                if index == count { return false }
                i &+= 1  // delimiter
            }
        }
        guard split else { return nil }
        @inline(__always)
        func bytes(_ f: PositionField) -> UnsafeBufferPointer<UInt8>? {
            let c = columnIndex[f.rawValue]
            guard c >= 0 else { return nil }
            let r = fields[c]
            return UnsafeBufferPointer(start: p + r.lowerBound, count: r.count)
        }
        guard let deviceBytes = bytes(.device), let first = deviceBytes.first, first != 32 && first != 9 && first != 13,
            let timeBytes = bytes(.time), let time = readTime(timeBytes),
            let lonBytes = bytes(.lon), let lon = NumberParser.parseDouble(lonBytes),
            let latBytes = bytes(.lat), let lat = NumberParser.parseDouble(latBytes)
        else { return nil }
        var accuracy: Double?
        if let b = bytes(.accuracy), !b.allSatisfy({ $0 == 32 || $0 == 9 }) {
            guard let a = NumberParser.parseDouble(b) else { return nil }
            accuracy = a
        }
        guard let device = String.validUTF8(deviceBytes) else { return nil }
        let position = Position(device: device, time: time, lon: lon, lat: lat, accuracy: accuracy, coord: defaultCoord)
        return position.isUsable ? position : nil
    }

    /// The index of the first byte at or after `i`, before `n`, that is the delimiter
    /// (`delimiters`: the delimiter in each byte of a word), else `n`: eight bytes a step (a
    /// word with that byte has a zero byte after the xor), then byte by byte.
    /// - Complexity: O(bytes / 8), a few operations a word.
    @inline(__always)
    static func delimiter(in p: UnsafePointer<UInt8>, from i: Int, to n: Int, matching delimiters: UInt64) -> Int {
        var i = i
        while i &+ 8 <= n {
            let x = UInt64(littleEndian: UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self)) ^ delimiters
            let found = (x &- 0x0101_0101_0101_0101) & ~x & 0x8080_8080_8080_8080
            if found != 0 { return i &+ found.trailingZeroBitCount &>> 3 }
            i &+= 8
        }
        let d = UInt8(truncatingIfNeeded: delimiters)
        while i < n && p[i] != d { i &+= 1 }
        return i
    }

    /// Any CSV line: the position, nil for a record of nothing, or why the line is refused.
    func parseAnyCSV(_ line: UnsafeBufferPointer<UInt8>, lineNumber: Int, fields: inout [Range<Int>]) -> Result<Position?, PositionLineError> {
        // Made only when a line has a quoted field (a dictionary per line cost a tenth of the
        // parse).
        var quotedFields: [Int: [UInt8]]?
        // Most lines hold no quote at all: one memchr spares the unquoted fields' byte loop a
        // second compare (64 instructions a line).
        let hasQuote = line.count > 0 && memchr(line.baseAddress!, 34, line.count) != nil
        var index = 0
        var i = 0
        let n = line.count
        while true {
            if index >= columnCount {
                if isEmptyRecord(line) { return .success(nil) }
                return .failure(PositionLineError(line: lineNumber, reason: "more than the \(headerless ? "--columns'" : "header's") \(columnCount) fields"))
            }
            if i < n && line[i] == 34 {
                // Quoted field: "" is a quote.
                var value: [UInt8] = []
                i += 1
                var closed = false
                while i < n {
                    if line[i] == 34 {
                        if i + 1 < n && line[i + 1] == 34 {
                            value.append(34)
                            i += 2
                            continue
                        }
                        closed = true
                        i += 1
                        break
                    }
                    value.append(line[i])
                    i += 1
                }
                if !closed { return .failure(PositionLineError(line: lineNumber, reason: "unclosed quote in field \(index + 1)")) }
                if quotedFields == nil { quotedFields = [:] }
                quotedFields![index] = value
                fields[index] = i..<i
                if i < n && line[i] != delimiter {
                    return .failure(PositionLineError(line: lineNumber, reason: "text after a closing quote in field \(index + 1)"))
                }
            } else {
                let s = i
                while i < n && line[i] != delimiter { i += 1 }
                fields[index] = s..<i
                // RFC 4180: a field with a quote is quoted whole. This also refuses the second
                // line of a quoted field that held a line break (it has an odd number of
                // quotes), which is not supported: lines are split first.
                if hasQuote && memchr(line.baseAddress! + s, 34, i - s) != nil {
                    return .failure(PositionLineError(line: lineNumber, reason: "a quote inside unquoted field \(index + 1)"))
                }
            }
            index += 1
            if i >= n { break }
            i += 1  // delimiter
        }
        if index < columnCount {
            if isEmptyRecord(line) { return .success(nil) }
            return .failure(PositionLineError(line: lineNumber, reason: "\(index) fields where the \(headerless ? "columns named are" : "header has") \(columnCount)"))
        }
        func withField<R>(_ f: PositionField, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R? {
            let c = columnIndex[f.rawValue]
            guard c >= 0 else { return nil }
            if let q = quotedFields?[c] { return q.withUnsafeBufferPointer(body) }
            return body(UnsafeBufferPointer(rebasing: line[fields[c]]))
        }
        // nil: no such column; .some(nil): not UTF-8.
        let device = withField(.device) { String.validUTF8($0) }
        if case .some(.some(let d)) = device, d.utf8.allSatisfy({ $0 == 32 || $0 == 9 || $0 == 13 }), isEmptyRecord(line) {
            return .success(nil)
        }
        if case .some(nil) = device {
            return .failure(PositionLineError(line: lineNumber, reason: "device id \(TextProblem.notUTF8.reason)"))
        }
        let coordText = withField(.coord) { String.validUTF8($0) }
        if case .some(nil) = coordText {
            return .failure(PositionLineError(line: lineNumber, reason: "coord \(TextProblem.notUTF8.reason)"))
        }
        return build(
            lineNumber: lineNumber, device: (device ?? "") ?? "",
            time: withField(.time) { self.readTime($0) } ?? nil,
            timeText: { self.withFieldText(.time, withField) },
            lon: withField(.lon) { NumberParser.parseDouble($0) } ?? nil,
            lat: withField(.lat) { NumberParser.parseDouble($0) } ?? nil,
            lonText: { self.withFieldText(.lon, withField).map { "\"\($0)\"" } },
            latText: { self.withFieldText(.lat, withField).map { "\"\($0)\"" } },
            accuracy: withField(.accuracy) { b -> Double?? in
                b.allSatisfy { $0 == 32 || $0 == 9 } ? .some(nil) : NumberParser.parseDouble(b).map { .some($0) }
            } ?? .some(nil),
            coordText: coordText ?? nil)
    }

    /// Whether a CSV line holds delimiters and blanks only (`,,,`, as a spreadsheet's "save
    /// as CSV" writes after the data): a record of nothing, skipped as a blank line is, not a
    /// bad line. Asked only of a line already failing (no device, a wrong field count).
    func isEmptyRecord(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
        line.allSatisfy { $0 == delimiter || $0 == 32 || $0 == 9 || $0 == 13 }
    }

    /// A field's text for a message, at most 40 characters; nil when it is not valid UTF-8.
    func withFieldText(
        _ f: PositionField, _ get: (PositionField, (UnsafeBufferPointer<UInt8>) -> String?) -> String??
    ) -> String? {
        guard let text = get(f, { String.validUTF8($0) }) ?? "" else { return nil }
        return String(text.prefix(40))
    }

    /// Epoch seconds from a time field: in `timeFormat` when there is one, else `parseTime`.
    func readTime(_ b: UnsafeBufferPointer<UInt8>) -> Double? {
        if let timeFormat { return timeFormat.parse(b) }
        return PositionReader.parseTime(b)
    }

    func build(
        lineNumber: Int, device: String, time: Double?, timeText: () -> String?, lon: Double?, lat: Double?, lonText: () -> String?,
        latText: () -> String?, accuracy: Double??, coordText: String?
    ) -> Result<Position?, PositionLineError> {
        // The *Text closures give a value as the message shows it, nil when it is not UTF-8;
        // they run only for a bad line.
        func fail(_ reason: String) -> Result<Position?, PositionLineError> {
            .failure(PositionLineError(line: lineNumber, reason: reason))
        }
        if device.isEmpty { return fail("empty device") }
        // Blanks alone are a cell left empty (as a fence's blank id is none), not an id: one
        // compare for an id that starts with anything else.
        if device.utf8.allSatisfy({ $0 == 32 || $0 == 9 }) { return fail("blank device") }
        guard let time else {
            guard let text = timeText() else { return fail("time \(TextProblem.notUTF8.reason)") }
            if let timeFormat { return fail("time \"\(text)\" does not match the time format \(timeFormat.pattern)") }
            return fail("time \"\(text)\" is neither epoch seconds nor ISO 8601")
        }
        guard let lon else { return fail(lonText().map { PositionReader.notANumber("lon", $0) } ?? "lon \(TextProblem.notUTF8.reason)") }
        guard let lat else { return fail(latText().map { PositionReader.notANumber("lat", $0) } ?? "lat \(TextProblem.notUTF8.reason)") }
        guard let accuracy else { return fail("accuracy is not a number") }
        var coord = defaultCoord
        if let coordText, !coordText.trimmingCharacters(in: .whitespaces).isEmpty {
            guard let c = CoordinateSystem(name: coordText.trimmingCharacters(in: .whitespaces)) else {
                return fail("unknown coord \"\(coordText.prefix(40))\" (wgs84, gcj02 or bd09ll)")
            }
            coord = c
        }
        let p = Position(device: device, time: time, lon: lon, lat: lat, accuracy: accuracy, coord: coord)
        if !p.isUsable, var problem = p.problem(countDigits: timeFormat?.epochDigits ?? 0) {
            // A time written as a date (ISO 8601, a layout) is named as written, not as the
            // epoch seconds it reads as (`time -62135600400.0 is outside ...` for 0001-01-01
            // in a zone east of UTC: a user audit).
            let asNumber = "time \(time) "
            if problem.hasPrefix(asNumber), let text = timeText(), Double(text.trimmingCharacters(in: .whitespacesAndNewlines)) == nil {
                problem = "time \"\(text.prefix(40))\" " + problem.dropFirst(asNumber.count)
            }
            return fail(problem)
        }
        return .success(p)
    }

    // MARK: - NDJSON

    func parseJSON(_ line: UnsafeBufferPointer<UInt8>, lineNumber: Int) -> Result<Position?, PositionLineError> {
        var scanner = JSONLineScanner(line)
        // By field (`rawValue`): the value of its best-ranked key (`PositionField`) and that
        // rank. Inline, not a dictionary: hashing each key's field was a third of the parse.
        var best = InlineArray<6, Ranked?>(repeating: nil)  // one per PositionField case
        // The key that counts given twice (names match without case): JSON readers disagree
        // on which one wins (the first, the last), so the line is refused rather than read
        // either way. A repeated name another one outranks does not matter.
        var repeated: [(field: PositionField, rank: Int, key: String)] = []
        do {
            try scanner.object(select: { match($0) }) { (found: (field: PositionField, rank: Int), key, value) in
                let (f, rank) = found
                if rank == best[f.rawValue]?.rank { repeated.append((f, rank, key.text ?? "")) }
                guard rank < best[f.rawValue]?.rank ?? .max else { return }
                best[f.rawValue] = Ranked(value: value, rank: rank)
            }
        } catch {
            return .failure(PositionLineError(line: lineNumber, reason: error.reason))
        }
        func fail(_ reason: String) -> Result<Position?, PositionLineError> {
            .failure(PositionLineError(line: lineNumber, reason: reason))
        }
        func ranked(_ f: PositionField) -> Ranked? { best[f.rawValue] }
        for r in repeated where ranked(r.field)?.rank == r.rank { return fail("key \"\(r.key.prefix(40))\" appears twice") }
        func text(_ f: PositionField) -> String? {
            switch ranked(f)?.value {
            case .string(let s)?: return s
            case .number(let r)?: return String(decoding: UnsafeBufferPointer(rebasing: line[r]), as: UTF8.self)
            default: return nil
            }
        }
        /// `body` of the bytes `text` would give, without making a string of a number.
        func withText<R>(_ f: PositionField, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R? {
            switch ranked(f)?.value {
            case .string(var s)?: return s.withUTF8(body)
            case .number(let r)?: return body(UnsafeBufferPointer(rebasing: line[r]))
            default: return nil
            }
        }
        /// The value as a message names it: its text in quotes, else what JSON value it is.
        func shown(_ f: PositionField) -> String {
            switch ranked(f)?.value {
            case .bool(let b)?: return b ? "true" : "false"
            case .null?: return "null"
            case .nested?: return "an object or array"
            default: return "\"\(String((text(f) ?? "").prefix(40)))\""
            }
        }
        func number(_ f: PositionField) -> Double? {
            withText(f) { NumberParser.parseDouble($0) } ?? nil
        }
        if ranked(.device) == nil { return fail("no device") }
        for f in [PositionField.time, .lon, .lat] where ranked(f) == nil {
            return fail("no \(f.names[0])")
        }
        for f in PositionField.allCases {
            if case .badText(let problem)? = ranked(f)?.value { return fail("\(f == .device ? "device id" : f.names[0]) \(problem.reason)") }
        }
        // A value of the wrong JSON type is named as such (it was "empty device", or a time "").
        switch ranked(.device)!.value {
        case .string, .number: break
        default: return fail("device has the wrong type: \(shown(.device)) (a string or a number expected)")
        }
        switch ranked(.time)!.value {
        case .string, .number: break
        default: return fail("time has the wrong type: \(shown(.time)) (epoch seconds or an ISO 8601 string expected)")
        }
        switch ranked(.coord)?.value {
        case .bool?, .nested?: return fail("coord has the wrong type: \(shown(.coord)) (wgs84, gcj02 or bd09ll expected)")
        default: break
        }
        let time = withText(.time) { self.readTime($0) } ?? nil
        let accuracy: Double??
        switch ranked(.accuracy)?.value {
        case nil, .null?: accuracy = .some(nil)
        default: accuracy = number(.accuracy).map { .some($0) }
        }
        return build(
            lineNumber: lineNumber, device: text(.device) ?? "", time: time, timeText: { String((text(.time) ?? "").prefix(40)) },
            lon: number(.lon), lat: number(.lat), lonText: { shown(.lon) }, latText: { shown(.lat) }, accuracy: accuracy,
            coordText: text(.coord))
    }
}
