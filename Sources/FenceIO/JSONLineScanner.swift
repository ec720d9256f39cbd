/// Reads one flat JSON object from bytes: string, number, true/false/null values are kept;
/// nested objects and arrays are skipped (to a bounded depth). No Foundation, no allocation
/// beyond the strings it returns. A string that is not valid UTF-8 or holds a lone surrogate
/// escape is handed over as `badText`, never repaired: the caller refuses the line if it uses
/// that value.
struct JSONLineScanner {
    enum Value: Equatable {
        case string(String)
        /// A string whose text is refused (not UTF-8, or a lone surrogate escape).
        case badText(TextProblem)
        /// Where the number's text, as written (ASCII: digits, `+-.eE`), lies in the line's bytes:
        /// a range, not a string, since most numbers only go on to `NumberParser` (a string
        /// made of each was a tenth of an NDJSON line's parse).
        case number(Range<Int>)
        case bool(Bool)
        case null
        case nested
    }

    struct Failure: Error {
        var reason: String
    }

    static let maxDepth = 64

    let bytes: UnsafeBufferPointer<UInt8>
    var i = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    mutating func skipSpace() {
        while i < bytes.count && (bytes[i] == 32 || bytes[i] == 9 || bytes[i] == 13 || bytes[i] == 10) { i += 1 }
    }

    mutating func fail(_ what: String) -> Failure {
        Failure(reason: i >= bytes.count ? "JSON ends early: \(what)" : "bad JSON at byte \(i + 1): \(what)")
    }

    /// A key as read: its bytes as written when it holds no escape (not yet checked as
    /// UTF-8), else its decoded text (nil when that is not text: such a key names no field).
    enum Key {
        case raw(UnsafeBufferPointer<UInt8>)
        case decoded(String?)

        /// The key's text, or nil when it is not valid text.
        var text: String? {
            switch self {
            case .raw(let b): return String(validating: b, as: UTF8.self)
            case .decoded(let s): return s
            }
        }
    }

    /// Walks the top-level object: `select` sees each key, and the value of a key it picks (a
    /// non-nil `T`) goes to `body`; any other value is checked for syntax but never decoded,
    /// so a line's keys and unused values cost no allocation.
    mutating func object<T>(select: (Key) -> T?, _ body: (T, Key, Value) -> Void) throws(Failure) {
        skipSpace()
        if i < bytes.count && bytes[i] == 0xEF { i += 3 }  // BOM
        guard i < bytes.count, bytes[i] == 123 else { throw fail("expected an object") }
        i += 1
        skipSpace()
        if i < bytes.count && bytes[i] == 125 {
            i += 1
        } else {
            while true {
                skipSpace()
                let key = try keyBytes()
                skipSpace()
                guard i < bytes.count, bytes[i] == 58 else { throw fail("expected ':'") }
                i += 1
                skipSpace()
                if let picked = select(key) {
                    body(picked, key, try value(depth: 1))
                } else {
                    try skipValue()
                }
                skipSpace()
                guard i < bytes.count else { throw fail("unclosed object") }
                if bytes[i] == 44 {
                    i += 1
                    continue
                }
                guard bytes[i] == 125 else { throw fail("expected ',' or '}'") }
                i += 1
                break
            }
        }
        skipSpace()
        guard i == bytes.count else { throw fail("text after the object") }
    }

    /// A key: its bytes when it holds no backslash (the common case, no allocation), else
    /// decoded by `string`.
    mutating func keyBytes() throws(Failure) -> Key {
        guard i < bytes.count, bytes[i] == 34 else { throw fail("expected a string") }
        let open = i
        if let end = plainStringEnd() {
            defer { i = end + 1 }
            return .raw(UnsafeBufferPointer(rebasing: bytes[(open + 1)..<end]))
        }
        i = open
        switch try string() {
        case .success(let s): return .decoded(s)
        case .failure: return .decoded(nil)
        }
    }

    /// A value checked as `value` checks it, without making its text: what `value` would
    /// throw, this throws.
    mutating func skipValue() throws(Failure) {
        guard i < bytes.count, bytes[i] == 34 else {
            _ = try value(depth: 1)
            return
        }
        let open = i
        if let end = plainStringEnd() {
            i = end + 1
        } else {
            i = open
            _ = try string()
        }
    }

    /// With `i` at a string's opening quote: the index of its closing quote when the string
    /// holds no backslash and no control character (`i` unchanged); nil otherwise (`string`
    /// then reads it, and names what is wrong).
    func plainStringEnd() -> Int? {
        var k = i + 1
        while k < bytes.count {
            let b = bytes[k]
            if b == 34 { return k }
            if b == 92 || b < 32 { return nil }
            k += 1
        }
        return nil
    }

    mutating func value(depth: Int) throws(Failure) -> Value {
        guard i < bytes.count else { throw fail("expected a value") }
        switch bytes[i] {
        case 34:
            switch try string() {
            case .success(let s): return .string(s)
            case .failure(let problem): return .badText(problem)
            }
        case 123, 91:
            try skipNested(depth: depth)
            return .nested
        case 116: return try literal("true", .bool(true))
        case 102: return try literal("false", .bool(false))
        case 110: return try literal("null", .null)
        default:
            let s = i
            while i < bytes.count, bytes[i] == 45 || bytes[i] == 43 || bytes[i] == 46 || bytes[i] == 101 || bytes[i] == 69
                || (bytes[i] >= 48 && bytes[i] <= 57)
            {
                i += 1
            }
            guard i > s else { throw fail("unexpected character") }
            return .number(s..<i)
        }
    }

    mutating func literal(_ word: String, _ v: Value) throws(Failure) -> Value {
        for c in word.utf8 {
            guard i < bytes.count, bytes[i] == c else { throw fail("expected \(word)") }
            i += 1
        }
        return v
    }

    mutating func skipNested(depth: Int) throws(Failure) {
        guard depth < Self.maxDepth else { throw fail("nested deeper than \(Self.maxDepth)") }
        let open = bytes[i]
        let close: UInt8 = open == 123 ? 125 : 93
        i += 1
        skipSpace()
        if i < bytes.count && bytes[i] == close {
            i += 1
            return
        }
        while true {
            skipSpace()
            if open == 123 {
                _ = try string()
                skipSpace()
                guard i < bytes.count, bytes[i] == 58 else { throw fail("expected ':'") }
                i += 1
                skipSpace()
            }
            _ = try value(depth: depth + 1)
            skipSpace()
            guard i < bytes.count else { throw fail("unclosed \(open == 123 ? "object" : "array")") }
            if bytes[i] == 44 {
                i += 1
                continue
            }
            guard bytes[i] == close else { throw fail("expected ',' or '\(Character(UnicodeScalar(close)))'") }
            i += 1
            return
        }
    }

    /// A string's text; a failure (not a syntax error) when it is not valid UTF-8 or holds a
    /// lone surrogate escape.
    mutating func string() throws(Failure) -> Result<String, TextProblem> {
        guard i < bytes.count, bytes[i] == 34 else { throw fail("expected a string") }
        i += 1
        let s = i
        var simple = true
        while i < bytes.count && bytes[i] != 34 {
            if bytes[i] == 92 {
                simple = false
                i += 2
            } else {
                if bytes[i] < 32 { throw fail("control character in a string") }
                i += 1
            }
        }
        guard i < bytes.count else { throw fail("unclosed string") }
        let raw = UnsafeBufferPointer(rebasing: bytes[s..<i])
        i += 1
        if simple { return String.validating(raw) }
        var out: [UInt8] = []
        var problem: TextProblem?
        var k = 0
        while k < raw.count {
            let c = raw[k]
            if c != 92 {
                out.append(c)
                k += 1
                continue
            }
            guard k + 1 < raw.count else { throw fail("bad escape") }
            let e = raw[k + 1]
            k += 2
            switch e {
            case 34: out.append(34)
            case 92: out.append(92)
            case 47: out.append(47)
            case 98: out.append(8)
            case 102: out.append(12)
            case 110: out.append(10)
            case 114: out.append(13)
            case 116: out.append(9)
            case 117:
                guard var code = hex4(raw, k) else { throw failAtEscape(k - 2, "bad \\u escape", textStart: s) }
                k += 4
                if TextProblem.isHighSurrogate(code), k + 6 <= raw.count, raw[k] == 92, raw[k + 1] == 117,
                    let low = hex4(raw, k + 2), TextProblem.isLowSurrogate(low)
                {
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    k += 6
                }
                // Only a surrogate is no scalar; the rest of the string is still checked for syntax.
                guard let scalar = Unicode.Scalar(code) else {
                    problem = problem ?? .loneSurrogate(code)
                    continue
                }
                out.append(contentsOf: String(Character(scalar)).utf8)
            default: throw failAtEscape(k - 2, "bad escape", textStart: s)
            }
        }
        if let problem { return .failure(problem) }
        return out.withUnsafeBufferPointer { String.validating($0) }
    }

    /// A bad escape found once the string was scanned (`i` past its closing quote): the
    /// failure names the escape's backslash, at `k` in the string's text starting at `textStart`.
    mutating func failAtEscape(_ k: Int, _ what: String, textStart: Int) -> Failure {
        i = textStart + k
        return fail(what)
    }

    func hex4(_ raw: UnsafeBufferPointer<UInt8>, _ k: Int) -> UInt32? {
        guard k + 4 <= raw.count else { return nil }
        var v: UInt32 = 0
        for j in k..<(k + 4) {
            let c = raw[j]
            let d: UInt32
            switch c {
            case 48...57: d = UInt32(c - 48)
            case 97...102: d = UInt32(c - 87)
            case 65...70: d = UInt32(c - 55)
            default: return nil
            }
            v = v * 16 + d
        }
        return v
    }
}
