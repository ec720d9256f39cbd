import FenceEngine
import Foundation

/// A bad input line: where and why. The line is skipped and counted; it never changes state.
public struct PositionLineError: Error, Sendable, Hashable, CustomStringConvertible {
    public var line: Int
    public var reason: String
    public init(line: Int, reason: String) {
        self.line = line
        self.reason = reason
    }
    /// One line; text from the input echoed in the reason has its control characters escaped.
    public var description: String { FenceError.printable("line \(line): \(reason)") }
}

/// Streams positions from CSV (a header line, or `columns` naming the columns of a CSV that has
/// none) or NDJSON, from a file descriptor, in bounded
/// memory: it holds one read block plus at most one line of `maxLineBytes` (its buffer is at
/// most max(2 MiB, maxLineBytes + 2) bytes). A longer line is refused with its number and
/// skipped without being held, however long it is.
///
/// The parser works on bytes (no `String` per field except the device id, no Foundation JSON):
/// this is the product's input hot path.
public final class PositionReader {
    public enum Format: String, Sendable { case csv, ndjson }

    public private(set) var format: Format?
    /// 1-based number of the last line read.
    public private(set) var lineNumber = 0
    /// Lines rejected so far.
    public private(set) var rejected = 0
    /// When set, `read` appends the line number of each position it returns to
    /// `positionLines`, which the caller empties as it likes (off by default: one branch per
    /// line when off).
    public var recordsLines = false
    public var positionLines: [Int] = []
    public let defaultCoord: CoordinateSystem
    public let maxLineBytes: Int

    /// The input's bytes, decoded when compressed (`PositionInput`).
    private let input: PositionInput
    private var buffer: [UInt8]
    private var start = 0
    private var end = 0
    private var eof = false
    private var fieldColumn: [PositionField: Int] = [:]
    /// Field ranges of the current line, reused from line to line.
    private var fieldRanges: [Range<Int>] = []
    private var headerSeen = false
    /// How data lines are read, once the header (CSV) or the format (NDJSON) is known.
    private var lineParser: PositionLineParser?
    private var skippingLongLine = false
    /// The column names of a CSV without a header line (its first line is data); nil when the
    /// first line is the header.
    public let columns: [String]?
    /// Input names (CSV columns, NDJSON keys; matched without case) given for fields, over
    /// the names and aliases of `PositionField`: a name here outranks every alias.
    public let fieldNames: [PositionField: String]
    /// `fieldNames` by lowercased name.
    private let namedFields: [String: PositionField]
    /// The layout of the time field when it is neither epoch seconds nor ISO 8601
    /// (`%m/%d/%Y %I:%M:%S %p`); nil reads those two. When set, only it is read.
    public let timeFormat: TimeFormat?

    /// Reads from an open descriptor (standard input is 0). `format` nil sniffs the first line:
    /// `{` means NDJSON, anything else CSV.
    /// `columns`, for a CSV without a header line, names its columns as a header would (the
    /// same names and aliases, `PositionField`); the input is then CSV whatever `format` says,
    /// and its delimiter the one that splits its first line into that many fields
    /// (`delimiter(of:fields:)`). Check the names first with `checkColumns`.
    ///
    /// `fields` names the input's column (CSV) or key (NDJSON) of a field whose name is none
    /// of `PositionField`'s (`[.lon: "pickup_longitude"]`); it outranks the aliases.
    /// `timeFormat` reads times in that layout instead of epoch seconds or ISO 8601.
    public init(
        fileDescriptor: Int32, format: Format? = nil, coord: CoordinateSystem = .wgs84, maxLineBytes: Int = 1 << 20,
        columns: [String]? = nil, fields: [PositionField: String] = [:], timeFormat: TimeFormat? = nil
    ) {
        self.timeFormat = timeFormat
        input = PositionInput(fileDescriptor: fileDescriptor)
        self.format = columns == nil ? format : .csv
        defaultCoord = coord
        self.maxLineBytes = maxLineBytes
        self.columns = columns
        fieldNames = fields
        namedFields = Self.fieldsByName(fields)
        buffer = [UInt8](repeating: 0, count: max(1 << 16, min(maxLineBytes, 1 << 20)) * 2)
    }

    /// Opens a file; "-" is standard input.
    public convenience init(
        path: String, format: Format? = nil, coord: CoordinateSystem = .wgs84, maxLineBytes: Int = 1 << 20,
        columns: [String]? = nil, fields: [PositionField: String] = [:], timeFormat: TimeFormat? = nil
    ) throws(FenceError) {
        if path == "-" {
            self.init(
                fileDescriptor: 0, format: format, coord: coord, maxLineBytes: maxLineBytes, columns: columns, fields: fields,
                timeFormat: timeFormat)
            return
        }
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else {
            throw FenceError(.malformedInput, reason: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        self.init(
            fileDescriptor: fd, format: format, coord: coord, maxLineBytes: maxLineBytes, columns: columns, fields: fields,
            timeFormat: timeFormat)
        input.ownsDescriptor = true
    }

    /// Refuses column names for a headerless CSV that lack a required field (device, time, lon,
    /// lat, by any of their names, or by the name `fields` gives it). As in a header, the
    /// best-ranked name of a field wins when several name it.
    public static func checkColumns(_ names: [String], fields: [PositionField: String] = [:]) throws(FenceError) {
        let given = fieldsByName(fields)
        let named = Set(names.compactMap { match($0, given: given)?.field })
        let missing = [PositionField.device, .time, .lon, .lat].filter { !named.contains($0) }
        guard missing.isEmpty else {
            throw FenceError(.malformedInput, reason: "the columns \"\(names.joined(separator: ","))\" lack " + describe(missing, fields: fields))
        }
    }

    /// Missing required fields for a message: each with the name `fields` gave it, else its
    /// aliases.
    static func describe(_ missing: [PositionField], fields: [PositionField: String]) -> String {
        let text = missing.map { field in
            if let given = fields[field] { return "\(field.names[0]) (the column \"\(given)\" given for it)" }
            return "\(field.names[0]) (or \(field.names.dropFirst().joined(separator: ", ")))"
        }.joined(separator: "; ")
        let byAlias = missing.contains { fields[$0] == nil }
        return byAlias ? text + "; names match ignoring case, spaces, _, -, . and /" : text
    }

    /// Bytes held for reading: one block plus at most one line, so at most
    /// max(2 MiB, maxLineBytes + 2) however long the input's lines are.
    var bufferBytes: Int { buffer.count }

    /// Workers that parse data lines side by side (`read`): each block of lines already in the
    /// buffer is cut into parts parsed on up to this many threads, and the parts' positions and
    /// errors joined in line order, so the result is the same for every count. 1 (the default)
    /// parses on the calling thread.
    public var parseThreads = 1

    /// Lines a worker takes at least: a block of fewer than twice this is parsed on the calling
    /// thread (tests lower it to reach the parallel path with small inputs).
    var parallelMinimumLines = 4096

    /// Blocks parsed in more than one part so far (for tests: that the parallel path ran).
    private(set) var partedBlocks = 0

    /// With a value, a `read` returns once this many seconds have passed since it began,
    /// with what it has by then (perhaps nothing: it still returns true), instead of waiting
    /// for `limit` positions or the input's end. On a live pipe the positions that arrived go
    /// out; a file is always ready to read, so there it changes nothing. A partial line stays
    /// for the next call.
    public var maxWait: Double?

    /// Reads into `buffer` after `end` (`PositionInput.read`): the bytes read, 0 at the
    /// input's end, nil when the deadline passed first.
    private func fill() throws(FenceError) -> Int? {
        let at = end
        return try buffer.withUnsafeMutableBytes { b in
            Result { () throws(FenceError) in try input.read(into: UnsafeMutableRawBufferPointer(rebasing: b[at...])) }
        }.get()
    }

    /// Reads positions until `limit` are collected or the input ends.
    ///
    /// Once the layout is known (a CSV's header, NDJSON's first line), with `parseThreads`
    /// above 1, the buffer is topped up (when less than half of it is unread) and its complete
    /// lines, at most as many as `limit` still allows, are parsed as one block on the workers
    /// (`PositionLineParser`); lines before that, and a buffer holding no complete line, go
    /// one by one on this thread. Topping up stops once the buffer holds the lines `limit`
    /// still allows, so on a pipe a call waits for no more input than one thread would.
    /// - Returns: false once the input is exhausted (positions may still have been appended).
    /// - Throws: on a read error or a CSV header that lacks a required column (bad input as a
    ///   whole, not one line).
    public func read(limit: Int, into positions: inout [Position], errors: inout [PositionLineError]) throws(FenceError) -> Bool {
        // Clamped: a negative or NaN wait is 0, and at most 1e9 s.
        input.deadline = maxWait.map { DispatchTime.now().uptimeNanoseconds + UInt64(($0 > 0 ? min($0, 1e9) : 0) * 1e9) }
        defer { input.deadline = nil }
        var taken = 0
        let errorsBefore = errors.count
        // Data lines on this thread go to a copy of the line parser made once a call, not one
        // a line (`lineParser!` copied the struct, retaining its arrays, dictionary and time
        // format: about 260 instructions a line), with field ranges of their own.
        var dataParser = lineParser
        var dataFields = [Range<Int>](repeating: 0..<0, count: dataParser?.columnCount ?? 0)
        while taken < limit {
            if parseThreads > 1, let parser = lineParser, headerFailure == nil, !skippingLongLine,
                let block = try bufferedLines(max: limit - taken)
            {
                taken += parse(block, with: parser, into: &positions, errors: &errors)
                continue
            }
            guard let (lo, hi) = try nextLine() else {
                if let cause = input.failure {
                    // Named at the line after the last one read: the one the failure cut, or
                    // the one after the text's clean end.
                    let failure = FenceError(cause.kind, line: lineNumber + 1, reason: cause.reason)
                    // The lines before the failure go out first; the call that finds none left
                    // reports it.
                    if taken == 0 && errors.count == errorsBefore { throw failure }
                    return true
                }
                if !sawContent {
                    throw FenceError(
                        .malformedInput,
                        reason: columns == nil ? "the input is empty (a CSV needs a header line; NDJSON needs one object per line)" : "the input is empty")
                }
                return false
            }
            if lo == -2 { return true }  // maxWait passed
            if lo < 0 {
                sawContent = true
                rejected += 1
                errors.append(PositionLineError(line: lineNumber, reason: "line longer than \(maxLineBytes) bytes"))
                continue
            }
            let result: Result<Position?, PositionLineError>
            if let parser = dataParser {
                // A plain good line makes no `Result` (destroying one went through the
                // runtime's generic witness: about 100 instructions a line).
                let usable = buffer.withUnsafeBufferPointer { buf in
                    Self.usableData(UnsafeBufferPointer(rebasing: buf[lo..<hi]), with: parser, fields: &dataFields)
                }
                if let p = usable {
                    positions.append(p)
                    if recordsLines { positionLines.append(lineNumber) }
                    taken += 1
                    continue
                }
                result = buffer.withUnsafeBufferPointer { buf in
                    Self.parseData(UnsafeBufferPointer(rebasing: buf[lo..<hi]), number: lineNumber, with: parser, fields: &dataFields)
                }
            } else {
                result = buffer.withUnsafeBufferPointer { buf in parse(UnsafeBufferPointer(rebasing: buf[lo..<hi])) }
                if let parser = lineParser {
                    dataParser = parser
                    dataFields = [Range<Int>](repeating: 0..<0, count: parser.columnCount)
                }
            }
            switch result {
            case .success(let p?):
                positions.append(p)
                if recordsLines { positionLines.append(lineNumber) }
                taken += 1
            case .success(nil):
                continue
            case .failure(let e):
                if let header = headerFailure { throw header }
                rejected += 1
                errors.append(e)
            }
        }
        return true
    }

    /// Reads everything.
    public func readAll() throws(FenceError) -> (positions: [Position], errors: [PositionLineError]) {
        var positions: [Position] = []
        var errors: [PositionLineError] = []
        while try read(limit: 1 << 16, into: &positions, errors: &errors) {}
        return (positions, errors)
    }

    /// True once a line with content has been read.
    public private(set) var sawContent = false

    private var headerFailure: FenceError?

    // MARK: - Lines

    /// The next line's byte range in `buffer`, without its terminator; (-1, -1) for a line over
    /// `maxLineBytes`, which was skipped; (-2, -2) when `maxWait` passed before a whole line
    /// arrived; nil at the end.
    private func nextLine() throws(FenceError) -> (Int, Int)? {
        while true {
            // memchr: the line search runs over every input byte (and a skipped 100 MB line).
            let found = buffer.withUnsafeBufferPointer { b -> Int? in
                guard end > start, let p = memchr(b.baseAddress! + start, 10, end - start) else { return nil }
                return UnsafeRawPointer(p) - UnsafeRawPointer(b.baseAddress!)
            }
            if let nl = found {
                let lo = start
                start = nl + 1
                lineNumber += 1
                if skippingLongLine {
                    skippingLongLine = false
                    return (-1, -1)
                }
                var hi = nl
                if hi > lo && buffer[hi - 1] == 13 { hi -= 1 }
                // The buffer can hold more than the limit (it is read in large blocks): a line
                // that fits the buffer is still over the limit when it is longer.
                return hi - lo > maxLineBytes ? (-1, -1) : (lo, hi)
            }
            if eof {
                // A line being skipped is reported even when nothing of it is left to read (its
                // length was a multiple of the buffer's: each filled buffer was dropped).
                if skippingLongLine {
                    skippingLongLine = false
                    start = end
                    lineNumber += 1
                    return (-1, -1)
                }
                // After a compressed stream failed, the unterminated rest may be a cut line
                // (even after a member or frame that ended cleanly, the text may have gone on
                // in what the damage took): dropped, never read short.
                guard start < end, input.failure == nil else {
                    start = end
                    return nil
                }
                let lo = start
                start = end
                lineNumber += 1
                return end - lo > maxLineBytes ? (-1, -1) : (lo, end)
            }
            // Need more bytes: compact, grow within the line limit, read.
            if start > 0 {
                buffer.withUnsafeMutableBufferPointer { b in
                    _ = memmove(b.baseAddress!, b.baseAddress! + start, end - start)
                }
                end -= start
                start = 0
            }
            if end == buffer.count {
                if buffer.count >= maxLineBytes + 2 {
                    // A NUL byte in a line this long: binary data, perhaps endless (`/dev/zero`
                    // has no line end to skip to). The input is refused, not read to its end.
                    let binary = buffer.withUnsafeBufferPointer { memchr($0.baseAddress!, 0, end) != nil }
                    if binary {
                        throw FenceError(
                            .malformedInput, line: lineNumber + 1,
                            reason: "binary data (NUL byte) in a line over \(maxLineBytes) bytes: this is not a CSV or NDJSON file")
                    }
                    // The line is over the limit: drop what we have and skip to its end.
                    skippingLongLine = true
                    end = 0
                } else {
                    buffer.append(contentsOf: repeatElement(0, count: min(buffer.count, maxLineBytes + 2 - buffer.count)))
                }
            }
            guard input.ready(), let got = try fill() else { return (-2, -2) }
            if got == 0 { eof = true } else { end += got }
        }
    }

    /// A line of the buffer: its bytes `lo ..< hi` (without the terminator) and its number;
    /// `lo` is -1 for a line over `maxLineBytes`.
    struct LineSpan {
        var lo: Int
        var hi: Int
        var number: Int
    }

    /// The complete lines in the buffer, at most `max`, and the buffer's start moved past them;
    /// nil (no line taken) when it holds no complete line, which `nextLine` then reads or, when
    /// it is too long, skips.
    ///
    /// When less than half of the buffer is unread it is first compacted, then topped up one
    /// `read` at a time while it holds fewer than `max` lines, has room and the input goes on:
    /// so a call waits for no more input than `max` lines need (a slow pipe's first lines come
    /// back as soon as there are enough of them), and on a file a block is a full buffer.
    /// - Complexity: O(bytes) (memchr, each byte scanned once), no allocation besides the result.
    private func bufferedLines(max: Int) throws(FenceError) -> [LineSpan]? {
        let topUp = !eof && end - start < buffer.count / 2
        if topUp && start > 0 {
            buffer.withUnsafeMutableBufferPointer { b in _ = memmove(b.baseAddress!, b.baseAddress! + start, end - start) }
            end -= start
            start = 0
        }
        var spans: [LineSpan] = []
        var at = start
        scanLines(from: &at, max: max, into: &spans)
        while topUp && spans.count < max && end < buffer.count && !eof && input.ready() {
            guard let got = try fill() else { break }
            if got == 0 { eof = true } else { end += got }
            scanLines(from: &at, max: max, into: &spans)
        }
        start = at
        return spans.isEmpty ? nil : spans
    }

    /// Appends the lines of `buffer[at..<end]` to `spans` until it holds `max`: each complete
    /// line, and at the input's end its unterminated last; `at` moves past them (a partial line
    /// stays unread).
    private func scanLines(from at: inout Int, max: Int, into spans: inout [LineSpan]) {
        let limit = maxLineBytes
        buffer.withUnsafeBufferPointer { b in
            let base = b.baseAddress!
            while spans.count < max && at < end {
                if let p = memchr(base + at, 10, end - at) {
                    let nl = UnsafeRawPointer(p) - UnsafeRawPointer(base)
                    // As `nextLine`: a CR before the line feed is not the line's.
                    var hi = nl
                    if hi > at && b[hi - 1] == 13 { hi -= 1 }
                    lineNumber += 1
                    spans.append(LineSpan(lo: hi - at > limit ? -1 : at, hi: hi, number: lineNumber))
                    at = nl + 1
                } else if eof && input.failure == nil {
                    lineNumber += 1
                    spans.append(LineSpan(lo: end - at > limit ? -1 : at, hi: end, number: lineNumber))
                    at = end
                } else {
                    break
                }
            }
        }
    }

    /// Parses a block of the buffer's lines on up to `parseThreads` workers (each taking at
    /// least `parallelMinimumLines`), each part's positions
    /// and errors in line order, joined in part order: the same as one line after another.
    /// (Content was seen already: the layout came from a line with content.)
    /// - Returns: the positions appended.
    private func parse(
        _ block: [LineSpan], with parser: PositionLineParser, into positions: inout [Position], errors: inout [PositionLineError]
    ) -> Int {
        let parts = min(parseThreads, max(1, block.count / parallelMinimumLines))
        if parts > 1 { partedBlocks += 1 }
        let partSize = (block.count + parts - 1) / parts
        var found = [[Position]](repeating: [], count: parts)
        var refused = [[PositionLineError]](repeating: [], count: parts)
        var numbers = [[Int]](repeating: [], count: parts)
        let records = recordsLines
        let tooLong = "line longer than \(maxLineBytes) bytes"
        buffer.withUnsafeBufferPointer { b in
            block.withUnsafeBufferPointer { spans in
                found.withUnsafeMutableBufferPointer { foundBuffer in
                    refused.withUnsafeMutableBufferPointer { refusedBuffer in
                        numbers.withUnsafeMutableBufferPointer { numbersBuffer in
                            nonisolated(unsafe) let (b, spans) = (b, spans)
                            nonisolated(unsafe) let (found, refused, numbers) = (foundBuffer, refusedBuffer, numbersBuffer)
                            Parallel.forEachChunk(
                                count: spans.count, chunkSize: partSize, threads: parts,
                                makeState: { [Range<Int>](repeating: 0..<0, count: parser.columnCount) }
                            ) { fields, part, range in
                                var out: [Position] = []
                                out.reserveCapacity(range.count)
                                var bad: [PositionLineError] = []
                                var lines: [Int] = []
                                for k in range {
                                    let span = spans[k]
                                    guard span.lo >= 0 else {
                                        bad.append(PositionLineError(line: span.number, reason: tooLong))
                                        continue
                                    }
                                    let line = UnsafeBufferPointer(rebasing: b[span.lo..<span.hi])
                                    if let p = Self.usableData(line, with: parser, fields: &fields) {
                                        out.append(p)
                                        if records { lines.append(span.number) }
                                        continue
                                    }
                                    switch Self.parseData(line, number: span.number, with: parser, fields: &fields) {
                                    case .success(let p?):
                                        out.append(p)
                                        if records { lines.append(span.number) }
                                    case .success(nil): continue
                                    case .failure(let e): bad.append(e)
                                    }
                                }
                                found[part] = out
                                refused[part] = bad
                                numbers[part] = lines
                            }
                        }
                    }
                }
            }
        }
        var taken = 0
        for part in 0..<parts {
            taken += found[part].count
            positions.append(contentsOf: found[part])
            errors.append(contentsOf: refused[part])
            rejected += refused[part].count
            if records { positionLines.append(contentsOf: numbers[part]) }
        }
        return taken
    }

    // MARK: - Parsing

    /// A line read once the layout is known (`lineParser` is set: content was seen, and a line
    /// with a NUL byte no longer refuses the input): a blank line is none, a NUL byte refuses
    /// the line, the rest goes to `parser`. What `parse(_:)` does then, on any thread.
    @inline(__always)
    static func parseData(
        _ line: UnsafeBufferPointer<UInt8>, number: Int, with parser: PositionLineParser, fields: inout [Range<Int>]
    ) -> Result<Position?, PositionLineError> {
        if line.allSatisfy({ $0 == 32 || $0 == 9 }) { return .success(nil) }
        // memchr, not `contains`: a byte loop here was a tenth of the reader's instructions.
        if memchr(line.baseAddress!, 0, line.count) != nil {
            return .failure(PositionLineError(line: number, reason: "binary data (NUL byte)"))
        }
        return parser.parseAny(line, lineNumber: number, fields: &fields)
    }

    /// The position of a plain good CSV line (`PositionLineParser.usablePosition`), else nil:
    /// `parseData` then reads the line. Nil for a blank line, a NUL byte and NDJSON.
    @inline(__always)
    static func usableData(_ line: UnsafeBufferPointer<UInt8>, with parser: PositionLineParser, fields: inout [Range<Int>]) -> Position? {
        guard parser.format == .csv, let first = line.first, first != 32 && first != 9, memchr(line.baseAddress!, 0, line.count) == nil
        else { return nil }
        return parser.usablePosition(csv: line, fields: &fields)
    }

    /// A line read before the layout is known (`read` gives every later line to `parseData`,
    /// and so does this, should it be asked): the first lines with content decide the format,
    /// give the header (or the first data line with `--columns`), and may refuse the input as
    /// a whole (no text; another kind of JSON; NDJSON where `--columns` names a CSV's).
    private func parse(_ line: UnsafeBufferPointer<UInt8>) -> Result<Position?, PositionLineError> {
        if let parser = lineParser { return Self.parseData(line, number: lineNumber, with: parser, fields: &fieldRanges) }
        if line.allSatisfy({ $0 == 32 || $0 == 9 }) { return .success(nil) }
        let contentBefore = sawContent
        sawContent = true
        // memchr, not `contains`: a byte loop here was a tenth of the reader's instructions.
        if memchr(line.baseAddress!, 0, line.count) != nil {
            // Not a text file at all: refuse the input instead of reading garbage as a header.
            // UTF-16 is named as such.
            let reason = "binary data (NUL byte)"
            headerFailure = FenceError(
                .malformedInput, line: lineNumber,
                reason: TextProblem.utf16(line, reads: "positions are") ?? "\(reason): this is not a CSV or NDJSON file")
            return .failure(PositionLineError(line: lineNumber, reason: reason))
        }
        if format == nil {
            let first = line.first { $0 != 32 && $0 != 9 && $0 != 0xEF && $0 != 0xBB && $0 != 0xBF }
            format = first == 123 ? .ndjson : .csv
        }
        switch format! {
        case .ndjson:
            let parser = PositionLineParser(format: .ndjson, defaultCoord: defaultCoord, timeFormat: timeFormat, namedFields: namedFields)
            lineParser = parser
            // The first line, when it is no position, may show the input to be another kind of
            // JSON (a pretty-printed document, GeoJSON): refused whole, named. A line that
            // reads as a position is one, whatever else it holds.
            let result = parser.parse(line, lineNumber: lineNumber, fields: &fieldRanges)
            if case .failure = result, let reason = Self.jsonDocumentProblem(String(decoding: line, as: UTF8.self)) {
                headerFailure = FenceError(.malformedInput, line: lineNumber, reason: reason)
                return .failure(PositionLineError(line: lineNumber, reason: reason))
            }
            return result
        case .csv:
            guard let columns else { return parseHeader(line) }
            // No header line: the names given, the delimiter this first line uses; a byte
            // order mark before it is not data (a line of nothing else is blank).
            var data = line
            if data.count >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF {
                data = UnsafeBufferPointer(rebasing: data[3...])
                if data.allSatisfy({ $0 == 32 || $0 == 9 || $0 == 13 }) { return .success(nil) }
            }
            // A row of empty cells (`,,,`) is no line, as a blank one is: before the first
            // data line it neither makes the input non-empty nor chooses the delimiter (an
            // input of nothing else was read as 0 positions, where blank lines are "the input
            // is empty").
            if data.allSatisfy({ $0 == 44 || $0 == 9 || $0 == 59 || $0 == 32 || $0 == 13 }) {
                sawContent = contentBefore
                return .success(nil)
            }
            let text = String(decoding: data, as: UTF8.self)
            if text.first(where: { $0 != " " && $0 != "\t" }) == "{" {
                let reason = "the first line is a JSON object: --columns names the columns of a CSV, and this input looks like NDJSON"
                headerFailure = FenceError(.malformedInput, line: lineNumber, reason: reason)
                return .failure(PositionLineError(line: lineNumber, reason: reason))
            }
            if case .failure(let e) = useHeader(names: columns, delimiter: Self.delimiter(of: text, fields: columns.count)) { return .failure(e) }
            return lineParser!.parse(data, lineNumber: lineNumber, fields: &fieldRanges)
        }
    }

    /// The field an input name stands for, and its rank (`PositionField`). A field given a
    /// name in `fields` is read from that name only (rank -1), never from its aliases: a column
    /// the user named and the input lacks is missing, not replaced by a guess.
    private func match(_ name: some StringProtocol) -> (field: PositionField, rank: Int)? {
        namedFields.isEmpty ? PositionField.match(name) : Self.match(name, given: namedFields)
    }

    static func match(_ name: some StringProtocol, given: [String: PositionField]) -> (field: PositionField, rank: Int)? {
        if let field = given[name.lowercased()] { return (field, -1) }
        guard let found = PositionField.match(name), !given.values.contains(found.field) else { return nil }
        return found
    }

    /// `fields` by lowercased name. Two fields given one name (a usage error in the CLI) keep
    /// the first field in `PositionField` order, the same on every run.
    static func fieldsByName(_ fields: [PositionField: String]) -> [String: PositionField] {
        var byName: [String: PositionField] = [:]
        for field in PositionField.allCases { if let name = fields[field], byName[name.lowercased()] == nil { byName[name.lowercased()] = field } }
        return byName
    }

    /// Why a first line shows the input to be JSON that is not one object per line, with the
    /// command that converts it; nil otherwise. A JSON array (`[`), a document spread over
    /// lines (`{` alone), GeoJSON (a FeatureCollection, or Features: positions are the
    /// properties and the Point's coordinates). Without it the array's `[` was "the CSV header"
    /// and a pretty-printed object a bad line per line (an outside audit).
    /// Asked only of a first line that failed as a header or as a position.
    static func jsonDocumentProblem(_ line: String) -> String? {
        var text = line
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        text = text.trimmingCharacters(in: .whitespaces)
        let convert = "positions are CSV with a header line, or NDJSON: one JSON object per line"
        // `[` and then JSON (`[device],[time]` is a CSV header of bracketed names).
        if text.hasPrefix("["), text.dropFirst().drop(while: { $0 == " " || $0 == "\t" }).first.map({ "{[\"]-0123456789".contains($0) }) ?? true {
            return "the input is a JSON array: \(convert); convert it, e.g. jq -c '.[]' FILE"
        }
        // A GeoJSON FeatureCollection's first line (`{"type":"FeatureCollection","features":[`,
        // one feature a line after it, as `Data/ports.geojson`), or a Feature. Its key words
        // alone are no proof (a bad position line may hold them in a value: a review).
        let featureCollection = text.hasPrefix("{") && text.contains("\"FeatureCollection\"") && text.contains("\"features\"")
            && (text.contains("\"geometry\"") || Self.opensAnObjectOverLines(text))
        if text == "{" || !featureCollection && Self.opensAnObjectOverLines(text) {
            return "the input is a JSON document spread over lines: \(convert); convert it, e.g. jq -c . FILE"
        }
        if featureCollection || text.hasPrefix("{") && text.contains("\"geometry\"") && text.contains("\"Feature\"") {
            let each = text.contains("\"FeatureCollection\"") ? ".features[] | " : ""
            return "the input is GeoJSON: \(convert) with device, time, lon and lat; convert it, e.g. jq -c '\(each){device: "
                + ".properties.device, time: .properties.time, lon: .geometry.coordinates[0], lat: .geometry.coordinates[1]}' FILE"
        }
        return nil
    }

    /// Whether `text` (trimmed) starts an object that goes on over the next lines, as
    /// pretty-printers write one: it starts with `{`, ends with an opening `{` or `[`, and
    /// leaves brackets open (counted outside strings). A line ending in `,` or `:` is more
    /// likely a line cut short, one bad line (a review), than a document.
    /// - Complexity: O(characters).
    static func opensAnObjectOverLines(_ text: String) -> Bool {
        guard text.hasPrefix("{"), let last = text.unicodeScalars.last, last == "{" || last == "[" else { return false }
        var depth = 0
        var inString = false
        var escaped = false
        for c in text.utf8 {
            if inString {
                if escaped { escaped = false } else if c == 92 { escaped = true } else if c == 34 { inString = false }
            } else if c == 34 {
                inString = true
            } else if c == 123 || c == 91 {
                depth += 1
            } else if c == 125 || c == 93 {
                depth -= 1
            }
        }
        return depth > 0 && !inString
    }

    private func parseHeader(_ line: UnsafeBufferPointer<UInt8>) -> Result<Position?, PositionLineError> {
        var text = String(decoding: line, as: UTF8.self)
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        let delimiter = Self.delimiter(of: text)
        let names = text.split(separator: Character(UnicodeScalar(delimiter)), omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: CharacterSet(charactersIn: " \"\t"))
        }
        return useHeader(names: names, delimiter: delimiter, headerText: text).map { nil }
    }

    /// The delimiter of a CSV's first line: with `fields` (a headerless CSV whose columns were
    /// named), the one (comma, tab, semicolon, in that order) that splits it, outside quotes,
    /// into exactly that many fields; else the one it uses most (counted outside quotes when
    /// `fields` is given, everywhere in a header): tab or semicolon over comma, the default.
    static func delimiter(of text: String, fields: Int? = nil) -> UInt8 {
        var counts: [Character: Int] = [",": 0, "\t": 0, ";": 0]
        var quoted = false
        for c in text {
            if c == "\"" && fields != nil { quoted.toggle() } else if !quoted, counts[c] != nil { counts[c]! += 1 }
        }
        if let fields {
            for (candidate, byte): (Character, UInt8) in [(",", 44), ("\t", 9), (";", 59)] where counts[candidate]! == fields - 1 { return byte }
        }
        let (commas, tabs, semicolons) = (counts[","]!, counts["\t"]!, counts[";"]!)
        if tabs > commas && tabs >= semicolons { return 9 }
        if semicolons > commas { return 59 }
        return 44
    }

    /// Takes `names` as the CSV's columns, split by `delimiter`; fails, for the whole input,
    /// when a required field has no column. `headerText` is the header as written, for the
    /// message (nil: the names came from `columns`).
    private func useHeader(names: [String], delimiter: UInt8, headerText: String? = nil) -> Result<Void, PositionLineError> {
        headerSeen = true
        var parser = PositionLineParser(format: .csv, defaultCoord: defaultCoord, timeFormat: timeFormat, namedFields: namedFields)
        parser.delimiter = delimiter
        parser.columnCount = names.count
        parser.headerless = columns != nil
        // The best-ranked name of each field wins (`PositionField`); of one name twice, the
        // first (as pandas reads such a header: the second becomes `name.1`).
        var ranks = [Int](repeating: .max, count: PositionField.allCases.count)
        for (i, name) in names.enumerated() {
            guard let (field, rank) = match(name), rank < ranks[field.rawValue] else { continue }
            ranks[field.rawValue] = rank
            fieldColumn[field] = i
        }
        for (f, c) in fieldColumn { parser.columnIndex[f.rawValue] = c }
        fieldRanges = [Range<Int>](repeating: 0..<0, count: names.count)
        lineParser = parser
        let missing = [PositionField.device, .time, .lon, .lat].filter { fieldColumn[$0] == nil }
        if !missing.isEmpty {
            let shown = headerText.map { "the CSV header \"\($0.prefix(200))\"" } ?? "the columns \"\(names.joined(separator: ","))\""
            var reason = "\(shown) lacks " + Self.describe(missing, fields: fieldNames)
            if headerText != nil {
                reason += " (fence: --position-fields FIELD=NAME names a column of another name; --columns names them all if that line is data)"
            }
            // A header that is no header but the start of a JSON array.
            if let headerText, let problem = Self.jsonDocumentProblem(headerText) { reason = problem }
            // A whole file on one "line": its lines end in CR alone (classic Mac OS, some
            // spreadsheet exports), which no reader here splits at.
            if let headerText, headerText.utf8.dropLast().contains(13) {
                reason = "the input's lines end in a CR alone, not LF or CRLF: convert them, e.g. tr '\\r' '\\n' < FILE"
            }
            headerFailure = FenceError(.malformedInput, line: lineNumber, reason: reason)
            return .failure(PositionLineError(line: lineNumber, reason: reason))
        }
        return .success(())
    }

    /// Epoch seconds from a number or an ISO 8601 time.
    static func parseTime(_ b: UnsafeBufferPointer<UInt8>) -> Double? {
        // An ISO time in the common form (four digits and a dash first) never reads as a
        // number: not tried as one (about 100 instructions a time).
        if let t = ISO8601.parseCommon(b) { return t }
        if let v = NumberParser.parseDouble(b) { return v }
        var lo = 0
        var hi = b.count
        // The blanks numbers may carry (`NumberParser`): spaces and tabs, and a CR at the end.
        while lo < hi && (b[lo] == 32 || b[lo] == 9) { lo += 1 }
        while hi > lo && (b[hi - 1] == 32 || b[hi - 1] == 9 || b[hi - 1] == 13) { hi -= 1 }
        return ISO8601.parse(UnsafeBufferPointer(rebasing: b[lo..<hi]))
    }

    /// Why a coordinate's text was refused: a decimal too large for a double (`1e400`) is out
    /// of range, anything else is not a number.
    static func notANumber(_ name: String, _ text: String) -> String {
        let t = text.trimmingCharacters(in: CharacterSet.whitespaces.union(CharacterSet(charactersIn: "\"")))
        let decimal = t.first.map { $0.isNumber || $0 == "-" || $0 == "+" || $0 == "." } ?? false
        if decimal, let v = Double(t), v.isInfinite { return "\(name) \(text) is out of range (beyond any double)" }
        return "\(name) \(text) is not a number"
    }
}
