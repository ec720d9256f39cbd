import FenceEngine

extension JSONScanner {
    /// RS (0x1E), which starts every record of an RFC 8142 GeoJSON text sequence.
    static let recordSeparator: UInt8 = 0x1E
}

/// GeoJSON text sequences (RFC 8142: each record RS, a Feature, a line end; or, as GDAL's
/// GeoJSONSeq driver and line-delimited dumps write them, one Feature per line), read as a
/// FeatureCollection's features are: each record is one feature, numbered in file order.
///
/// A record that is not JSON is one rejected feature, naming its line, and reading goes on at
/// the next record: the next RS when the file starts with one, else the next line that starts
/// with `{` (a record's first line: a Feature spread over lines, as `jq` prints it, reads too,
/// since a record is one JSON value wherever its lines end). Blank lines and empty records
/// are skipped. Read on one thread (`FeatureSplit` cuts only a `features` array).
extension GeoJSONDocument {
    /// Whether more than white space follows the first value, so that the document is a
    /// sequence: a `{` or RS, or anything on a later line. Text on the value's own line that
    /// starts no record is left for `expectEnd` to refuse, as after a FeatureCollection.
    mutating func anotherRecordFollows() -> Bool {
        var i = scanner.at
        var newLine = false
        while i < scanner.bytes.count {
            let c = scanner.bytes[i]
            if c == 10 { newLine = true } else if c != 32 && c != 9 && c != 13 { break }
            i += 1
        }
        guard i < scanner.bytes.count else { return false }
        let c = scanner.bytes[i]
        return newLine || c == 123 || c == JSONScanner.recordSeparator
    }

    /// The records from `scanner.at` on, numbered from `number + 1`.
    /// - Complexity: O(bytes); a bad record costs the bytes to the next record's start.
    mutating func readSequence(after number: Int, separatedByRS: Bool) {
        var number = number
        let bytes = scanner.bytes
        var lines = LineCounter(bytes)
        while true {
            // White space and the separators of empty records.
            while scanner.at < bytes.count {
                let c = bytes[scanner.at]
                guard c == 32 || c == 10 || c == 13 || c == 9 || c == JSONScanner.recordSeparator else { break }
                scanner.at += 1
            }
            guard scanner.at < bytes.count else { return }
            let start = scanner.at
            number += 1
            do {
                try readFeature(number: number)
            } catch {
                let resume = separatedByRS ? nextRecordSeparator(after: start) : nextObjectLine(after: start)
                let line = lines.lineAndColumn(start).line
                let (failLine, failColumn) = lines.lineAndColumn(error.offset)
                let skipped: String
                if resume >= bytes.count {
                    skipped = "the rest of the file is skipped"
                } else {
                    let next = lines.lineAndColumn(resume).line
                    skipped = next > line + 1 ? "lines \(line)-\(next - 1) are skipped" : "the line is skipped"
                }
                result.rejected.append(
                    RejectedFeature(
                        origin: FeatureOrigin(layer: layer, index: number),
                        error: FenceError(
                            .malformedInput, fence: "#\(number)", line: number,
                            reason: "the record at line \(line) is not valid JSON: \(error.message) at line \(failLine), column \(failColumn); "
                                + skipped)))
                scanner.at = resume
            }
        }
    }

    /// The offset of the first RS after `start`, or the end.
    func nextRecordSeparator(after start: Int) -> Int {
        var i = start + 1
        while i < scanner.bytes.count && scanner.bytes[i] != JSONScanner.recordSeparator { i += 1 }
        return i
    }

    /// The offset of the first line after the one holding `start` whose first byte past white
    /// space is `{` or RS, or the end.
    func nextObjectLine(after start: Int) -> Int {
        let bytes = scanner.bytes
        var i = start
        while true {
            while i < bytes.count && bytes[i] != 10 { i += 1 }
            guard i < bytes.count else { return i }
            i += 1
            var j = i
            while j < bytes.count && (bytes[j] == 32 || bytes[j] == 9 || bytes[j] == 13) { j += 1 }
            if j < bytes.count && (bytes[j] == 123 || bytes[j] == JSONScanner.recordSeparator) { return j }
        }
    }

    /// Lines and columns of offsets near one another, counted from the last one asked for
    /// (`JSONScanner.lineAndColumn` counts from the start: a file of a million bad records
    /// would cost a million passes over it).
    struct LineCounter {
        let bytes: UnsafeBufferPointer<UInt8>
        var offset = 0
        var line = 1
        var lineStart = 0

        init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        /// The 1-based line and column of `target` (clamped to the end).
        /// - Complexity: O(bytes between `target` and the last offset asked for).
        mutating func lineAndColumn(_ target: Int) -> (line: Int, column: Int) {
            let target = min(max(target, 0), bytes.count)
            while offset < target {
                if bytes[offset] == 10 {
                    line += 1
                    lineStart = offset + 1
                }
                offset += 1
            }
            if offset > target {
                var crossed = false
                while offset > target {
                    offset -= 1
                    if bytes[offset] == 10 {
                        line -= 1
                        crossed = true
                    }
                }
                if crossed || lineStart > target {
                    lineStart = target
                    while lineStart > 0 && bytes[lineStart - 1] != 10 { lineStart -= 1 }
                }
            }
            return (line, target - lineStart + 1)
        }
    }
}
