import Foundation

/// Writing text into CSV and JSON output safely: input is data, never markup or formulas.
///
/// The rule for CSV (RFC 4180 plus the OWASP "CSV injection" guard):
/// - a text cell (an id, a group, a property) holding a comma, a quote, or a control
///   character (C0 such as CR, LF, ESC and NUL; DEL; C1, U+0080 to U+009F) is quoted, quotes
///   doubled: CSV has no escape for them, and quoting keeps them inside their field for a CSV
///   reader (a terminal shown the file still sees them raw);
/// - a text cell starting with `=`, `+`, `-`, `@`, a tab or CR is a formula to a spreadsheet:
///   it is written quoted with a leading `'`, so the spreadsheet shows it as text;
/// - except a text cell that is a plain decimal number (`-73.9`, `+1`, `-2.5e-3`): that is data
///   and stays as it is. Numeric columns (lon, lat, seconds, distances) are always numbers and
///   are written as numbers.
public enum OutputEscaping {
    /// A CSV field under the rule above.
    /// - Complexity: O(length); no allocation when the text needs nothing.
    public static func csvField(_ s: String) -> String {
        var formula = false
        var string = s
        // Over the contiguous bytes: the string's UTF-8 view, walked as a sequence, cost about
        // 400 instructions for a short id.
        let needsQuotes = string.withUTF8 { bytes -> Bool in
            if let first = bytes.first, first == 61 || first == 43 || first == 45 || first == 64 || first == 9 || first == 13 {
                formula = !isPlainNumber(s)
            }
            var previous: UInt8 = 0
            for b in bytes {
                // C1 controls are 0xC2 0x80...0x9F in UTF-8.
                if b == 44 || b == 34 || b < 32 || b == 127 || (previous == 0xC2 && b >= 0x80 && b <= 0x9F) { return true }
                previous = b
            }
            return false
        }
        if !needsQuotes && !formula { return s }
        let body = (formula ? "'" : "") + s.replacingOccurrences(of: "\"", with: "\"\"")
        return "\"\(body)\""
    }

    /// Appends `csvField(s)`'s UTF-8: the text's own bytes, in one copy, when it needs nothing
    /// (the usual id), else the escaped field. The same bytes as `appendUTF8(csvField(s))`,
    /// without making the field's string (a fifth of `fence contains`' row).
    /// - Complexity: O(length); no allocation when the text needs nothing.
    public static func appendCSVField(_ s: String, to out: inout [UInt8]) {
        var string = s
        let plain = string.withUTF8 { bytes -> Bool in
            guard isPlainCSV(bytes, leading: true) else { return false }
            out.append(contentsOf: bytes)
            return true
        }
        if !plain { out.appendUTF8(csvField(s)) }
    }

    /// Whether `csvField` leaves these bytes as they are for a reason it can see at once: no
    /// byte it quotes, and (when `leading`, the bytes starting the field) no formula's first
    /// byte. False may still be a field left as it is (a plain number such as `-73.9`): the
    /// caller then asks `csvField`.
    @inline(__always)
    public static func isPlainCSV(_ bytes: UnsafeBufferPointer<UInt8>, leading: Bool) -> Bool {
        if leading, let first = bytes.first, first == 61 || first == 43 || first == 45 || first == 64 || first == 9 || first == 13 {
            return false
        }
        // The bytes below 64 it quotes (C0 controls, `"`, `,`) as bits of one word: one shift
        // and test a byte instead of five compares.
        let quotedBelow64: UInt64 = 0xFFFF_FFFF | 1 << 34 | 1 << 44
        guard let p = bytes.baseAddress else { return true }
        let n = bytes.count
        var k = 0
        while k < n {
            let b = p[k]
            if b < 64 {
                if quotedBelow64 &>> UInt64(b) & 1 != 0 { return false }
            } else if b >= 127 {
                // DEL, and C1 controls: 0xC2 0x80...0x9F in UTF-8.
                if b == 127 || b == 0xC2 && k + 1 < n && p[k + 1] >= 0x80 && p[k + 1] <= 0x9F { return false }
            }
            k &+= 1
        }
        return true
    }

    /// `[+-]digits[.digits][(e|E)[+-]digits]` (or `.digits`), nothing else: no blanks, no
    /// `inf`, `nan` or hexadecimal, which `Double(_:)` would take.
    static func isPlainNumber(_ s: String) -> Bool {
        let b = Array(s.utf8)
        var i = 0
        if i < b.count && (b[i] == 43 || b[i] == 45) { i += 1 }
        var digits = 0
        while i < b.count && b[i] >= 48 && b[i] <= 57 {
            i += 1
            digits += 1
        }
        if i < b.count && b[i] == 46 {
            i += 1
            while i < b.count && b[i] >= 48 && b[i] <= 57 {
                i += 1
                digits += 1
            }
        }
        guard digits > 0 else { return false }
        if i < b.count && (b[i] == 101 || b[i] == 69) {
            i += 1
            if i < b.count && (b[i] == 43 || b[i] == 45) { i += 1 }
            var expDigits = 0
            while i < b.count && b[i] >= 48 && b[i] <= 57 {
                i += 1
                expDigits += 1
            }
            guard expDigits > 0 else { return false }
        }
        return i == b.count
    }

    /// A JSON string literal, with quotes, escaping `"`, `\` and control characters.
    public static func jsonString(_ s: String) -> String {
        var out = [UInt8]()
        out.reserveCapacity(s.utf8.count + 2)
        appendJSONString(s, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// JSON text with U+2028 / U+2029 written as `\u2028` / `\u2029`, as `appendJSONString`
    /// writes them. JSON allows them raw only inside strings, so the replacement keeps the
    /// text's meaning. For property values copied from a fence file as they were written.
    ///
    /// A byte scan of the UTF-8 for their encodings, E2 80 A8 and E2 80 A9 (in valid UTF-8,
    /// E2 only ever leads a character, so a match is one of them): Foundation's `contains`,
    /// twice over every value, cost about 70 ns a byte, 20 s of start-up for 300 MB of carried
    /// properties (an audit). It also missed a separator followed by a mark or an emoji
    /// modifier (U+2028 U+0301: its search joins them into one cluster, though a break follows
    /// a line separator) and left it raw; every one is escaped now.
    /// - Returns: `raw` itself, not a copy, when neither occurs.
    /// - Complexity: O(bytes), a `memchr` for E2; allocates only when there is something to
    ///   escape.
    public static func escapingLineSeparators(inJSON raw: String) -> String {
        var string = raw
        return string.withUTF8 { bytes -> String in
            guard var at = lineSeparator(in: bytes, from: 0) else { return raw }
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count + 8)
            var from = 0
            while true {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[from..<at]))
                out.append(contentsOf: "\\u202".utf8)
                out.append(bytes[at + 2] == 0xA8 ? 56 : 57)  // 8 or 9
                from = at + 3
                guard let next = lineSeparator(in: bytes, from: from) else { break }
                at = next
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[from...]))
            return String(decoding: out, as: UTF8.self)
        }
    }

    /// Where the first U+2028 or U+2029 (E2 80 A8 or A9) at or after byte `from` starts.
    /// - Complexity: O(bytes) (`memchr` for E2, then two compares per E2 found).
    static func lineSeparator(in bytes: UnsafeBufferPointer<UInt8>, from: Int) -> Int? {
        var at = from
        while at < bytes.count, let found = memchr(bytes.baseAddress! + at, 0xE2, bytes.count - at) {
            let i = UnsafeRawPointer(bytes.baseAddress!).distance(to: UnsafeRawPointer(found))
            if i + 2 < bytes.count && bytes[i + 1] == 0x80 && (bytes[i + 2] == 0xA8 || bytes[i + 2] == 0xA9) { return i }
            at = i + 1
        }
        return nil
    }

    /// Appends a JSON string literal to a byte buffer: `"`, `\` and control characters
    /// escaped, and U+2028 / U+2029 as `\u2028` / `\u2029` (legal in JSON, but line breaks to
    /// JavaScript and to some log viewers).
    public static func appendJSONString(_ s: String, to out: inout [UInt8]) {
        out.append(34)
        // The usual id needs no escape: its bytes go in one copy, not one append each (a
        // quarter of `fence eval`'s output instructions went to this loop).
        var string = s
        let plain = string.withUTF8 { bytes -> Bool in
            for b in bytes where b < 32 || b == 34 || b == 92 || b == 0xE2 { return false }
            out.append(contentsOf: bytes)
            return true
        }
        if plain {
            out.append(34)
            return
        }
        var lineSeparator = 0  // bytes of E2 80 seen just before
        for b in s.utf8 {
            if lineSeparator == 2 && (b == 0xA8 || b == 0xA9) {
                out.removeLast(2)
                out.append(contentsOf: "\\u202".utf8)
                out.append(b == 0xA8 ? 56 : 57)
                lineSeparator = 0
                continue
            }
            lineSeparator = b == 0xE2 ? 1 : (lineSeparator == 1 && b == 0x80 ? 2 : 0)
            switch b {
            case 34: out.append(contentsOf: [92, 34])
            case 92: out.append(contentsOf: [92, 92])
            case 10: out.append(contentsOf: [92, 110])
            case 13: out.append(contentsOf: [92, 114])
            case 9: out.append(contentsOf: [92, 116])
            case 0..<32:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: [92, 117, 48, 48, hex[Int(b >> 4)], hex[Int(b & 15)]])
            default: out.append(b)
            }
        }
        out.append(34)
    }
}
