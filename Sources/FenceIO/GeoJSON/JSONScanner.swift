/// A forward reader over the bytes of a JSON document, for parsers that know the shape they
/// expect (GeoJSON fences): tokens are read where they are, strings are decoded only when asked,
/// and values of no interest are skipped without building anything.
///
/// Nothing here recurses on the input's nesting: `skipValue` keeps one bit per open level, so a
/// document nested 10,000 (or 10 million) deep costs a bit per level, never a stack frame.
struct JSONScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var at = 0

    /// A syntax error: where, and what was expected.
    struct Failure: Error {
        var offset: Int
        var message: String
    }

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        // A UTF-8 byte order mark is allowed before the document.
        if bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF { at = 3 }
    }

    func fail(_ message: String) -> Failure {
        Failure(offset: at, message: message)
    }

    /// The 1-based line and column of a byte offset (only computed for error messages).
    func lineAndColumn(_ offset: Int) -> (line: Int, column: Int) {
        var line = 1
        var lineStart = 0
        for i in 0..<min(offset, bytes.count) where bytes[i] == 10 {
            line += 1
            lineStart = i + 1
        }
        return (line, offset - lineStart + 1)
    }

    @inline(__always)
    mutating func space() {
        while at < bytes.count {
            let c = bytes[at]
            guard c == 32 || c == 10 || c == 13 || c == 9 else { return }
            at += 1
        }
    }

    /// The next byte after white space, not consumed.
    @inline(__always)
    mutating func peek() -> UInt8? {
        space()
        return at < bytes.count ? bytes[at] : nil
    }

    /// Consumes `c` (after white space) when it is next.
    @inline(__always)
    mutating func take(_ c: UInt8) -> Bool {
        space()
        guard at < bytes.count && bytes[at] == c else { return false }
        at += 1
        return true
    }

    mutating func expect(_ c: UInt8, _ what: String) throws(Failure) {
        guard take(c) else { throw fail("expected \(what)") }
    }

    /// After an array element or object member: true on `,` (another follows), false on the
    /// closing bracket.
    @inline(__always)
    mutating func next(closing: UInt8) throws(Failure) -> Bool {
        if take(44) { return true }
        if take(closing) { return false }
        throw fail(closing == 93 ? "expected , or ] in an array" : "expected , or } in an object")
    }

    /// `text` as compact JSON (no white space outside strings: one line), or nil when it is
    /// not one JSON value nested at most `maxDepth` deep. O(length); no recursion.
    static func compactJSON(_ text: String, maxDepth: Int = 64) -> String? {
        var copy = text
        return copy.withUTF8 { bytes -> String? in
            var scanner = JSONScanner(bytes)
            guard let (range, depth) = try? scanner.skipValue(), depth <= maxDepth, (try? scanner.expectEnd()) != nil else {
                return nil
            }
            return scanner.compactText(range)
        }
    }

    /// The atEnd check after the document: only white space may follow.
    mutating func expectEnd() throws(Failure) {
        space()
        guard at == bytes.count else { throw fail("unexpected text after the JSON document") }
    }

    // MARK: strings

    /// A string token: the range of its content (between the quotes) and whether it holds escapes.
    struct StringToken {
        var range: Range<Int>
        var escaped: Bool
    }

    /// Reads a string; its content is validated (no raw control characters, escapes well formed)
    /// but not decoded.
    mutating func string() throws(Failure) -> StringToken {
        guard take(34) else { throw fail("expected a string") }
        let start = at
        var escaped = false
        while at < bytes.count {
            let c = bytes[at]
            if c == 34 {
                at += 1
                return StringToken(range: start..<(at - 1), escaped: escaped)
            }
            if c == 92 {
                escaped = true
                at += 1
                guard at < bytes.count else { break }
                switch bytes[at] {
                case 34, 92, 47, 98, 102, 110, 114, 116: at += 1
                case 117:
                    guard at + 4 < bytes.count, (1...4).allSatisfy({ Self.hexValue(bytes[at + $0]) != nil }) else {
                        throw fail("a \\u escape needs four hex digits")
                    }
                    at += 5
                default: throw fail("unknown escape \\\(Character(Unicode.Scalar(bytes[at])))")
                }
                continue
            }
            if c < 32 { throw fail("a control character inside a string") }
            at += 1
        }
        throw Failure(offset: start - 1, message: "unterminated string")
    }

    /// Whether a string token's content is exactly `literal` (ASCII, no escapes).
    func equals(_ token: StringToken, _ literal: StaticString) -> Bool {
        guard !token.escaped, token.range.count == literal.utf8CodeUnitCount else { return token.escaped && text(token) == "\(literal)" }
        let p = literal.utf8Start
        for (k, i) in token.range.enumerated() where bytes[i] != p[k] { return false }
        return true
    }

    /// The decoded text of a string token or, when it is not text, its raw bytes repaired
    /// (U+FFFD): for names compared with known words (`type`) and for messages, never for ids
    /// or values (`decoded`).
    func text(_ token: StringToken) -> String {
        switch decoded(token) {
        case .success(let s): return s
        case .failure: return String(decoding: UnsafeBufferPointer(rebasing: bytes[token.range]), as: UTF8.self)
        }
    }

    /// The decoded text of a string token; a failure when its bytes are not UTF-8 or it holds
    /// an escape of half a surrogate pair (never repaired: ids are their bytes).
    /// - Complexity: O(length); validating costs what `String(decoding:as:)` does.
    func decoded(_ token: StringToken) -> Result<String, TextProblem> {
        let raw = UnsafeBufferPointer(rebasing: bytes[token.range])
        guard token.escaped else { return String.validating(raw) }
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var i = 0
        // `string()` checked every escape, so the hex digits are there.
        while i < raw.count {
            let c = raw[i]
            guard c == 92 else {
                out.append(c)
                i += 1
                continue
            }
            let e = raw[i + 1]
            i += 2
            if e == 117 {
                var v = hex4(raw, at: i)
                i += 4
                if TextProblem.isHighSurrogate(v) {
                    guard i + 6 <= raw.count, raw[i] == 92, raw[i + 1] == 117, TextProblem.isLowSurrogate(hex4(raw, at: i + 2)) else {
                        return .failure(.loneSurrogate(v))
                    }
                    v = 0x10000 + ((v - 0xD800) << 10) + (hex4(raw, at: i + 2) - 0xDC00)
                    i += 6
                }
                guard let scalar = Unicode.Scalar(v) else { return .failure(.loneSurrogate(v)) }
                out.append(contentsOf: String(Character(scalar)).utf8)
                continue
            }
            switch e {
            case 98: out.append(8)
            case 102: out.append(12)
            case 110: out.append(10)
            case 114: out.append(13)
            case 116: out.append(9)
            default: out.append(e)  // " \ /
            }
        }
        return out.withUnsafeBufferPointer { String.validating($0) }
    }

    /// The value of the four hex digits at `at` (checked by `string()`).
    private func hex4(_ raw: UnsafeBufferPointer<UInt8>, at: Int) -> UInt32 {
        var v: UInt32 = 0
        for k in 0..<4 { v = v << 4 | UInt32(Self.hexValue(raw[at + k])!) }
        return v
    }

    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: return c - 48
        case 65...70: return c - 55
        case 97...102: return c - 87
        default: return nil
        }
    }

    // MARK: numbers and literals

    @inline(__always)
    static func startsNumber(_ c: UInt8) -> Bool { c == 45 || (c >= 48 && c <= 57) }

    /// The range of a number token, checked against JSON's grammar
    /// (`-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`).
    mutating func numberRange() throws(Failure) -> Range<Int> {
        space()
        let start = at
        func digits() -> Int {
            let s = at
            while at < bytes.count && bytes[at] >= 48 && bytes[at] <= 57 { at += 1 }
            return at - s
        }
        if at < bytes.count && bytes[at] == 45 { at += 1 }
        let intStart = at
        let n = digits()
        guard n > 0, !(n > 1 && bytes[intStart] == 48) else { throw Failure(offset: start, message: "malformed number") }
        if at < bytes.count && bytes[at] == 46 {
            at += 1
            guard digits() > 0 else { throw Failure(offset: start, message: "malformed number") }
        }
        if at < bytes.count && (bytes[at] == 101 || bytes[at] == 69) {
            at += 1
            if at < bytes.count && (bytes[at] == 43 || bytes[at] == 45) { at += 1 }
            guard digits() > 0 else { throw Failure(offset: start, message: "malformed number") }
        }
        return start..<at
    }

    /// A number token's value (JSON numbers beyond Double's range are refused): the grammar
    /// of `numberRange` checked while the digits are gathered, in one pass.
    mutating func number() throws(Failure) -> Double {
        space()
        let start = at
        let n = bytes.count
        var negative = false
        if at < n && bytes[at] == 45 {
            negative = true
            at += 1
        }
        var mantissa: UInt64 = 0
        var significant = 0
        var exponent = 0
        @inline(__always) func digit(_ c: UInt8, fraction: Bool) {
            if significant < 19 {
                mantissa = mantissa &* 10 &+ UInt64(c &- 48)
                if mantissa != 0 { significant += 1 }
                if fraction { exponent -= 1 }
            } else {
                significant += 1
                if !fraction { exponent += 1 }
            }
        }
        // A fraction's digits eight at a time, then four, while all of them are taken (at most
        // 19 significant digits are held), as `digit` would take them one by one: GIS tools
        // write 15-17 significant digits a coordinate. (Integer parts of longitudes and
        // latitudes are 1-3 digits: blocks tried there cost more than they saved.)
        @inline(__always) func take(_ block: UInt64, digits: Int, scale: UInt64) {
            let before = mantissa
            mantissa = mantissa &* scale &+ block
            // Leading zeros are not significant.
            significant &+= before != 0 ? digits : NumberParser.decimalDigits(block)
            exponent &-= digits
            at &+= digits
        }
        @inline(__always) func fractionBlocks() {
            while significant <= 11 && at &+ 8 <= n, let eight = NumberParser.eightDigits(bytes.baseAddress! + at) {
                take(eight, digits: 8, scale: 100_000_000)
            }
            if significant <= 15 && at &+ 4 <= n, let four = NumberParser.fourDigits(bytes.baseAddress! + at) {
                take(four, digits: 4, scale: 10_000)
            }
        }
        let intStart = at
        while at < n, bytes[at] >= 48, bytes[at] <= 57 {
            digit(bytes[at], fraction: false)
            at += 1
        }
        let intDigits = at - intStart
        guard intDigits > 0, !(intDigits > 1 && bytes[intStart] == 48) else { throw Failure(offset: start, message: "malformed number") }
        if at < n && bytes[at] == 46 {
            at += 1
            let fractionStart = at
            fractionBlocks()
            while at < n, bytes[at] >= 48, bytes[at] <= 57 {
                digit(bytes[at], fraction: true)
                at += 1
            }
            guard at > fractionStart else { throw Failure(offset: start, message: "malformed number") }
        }
        if at < n && (bytes[at] == 101 || bytes[at] == 69) {
            at += 1
            var expNegative = false
            if at < n && (bytes[at] == 43 || bytes[at] == 45) {
                expNegative = bytes[at] == 45
                at += 1
            }
            let expStart = at
            var e = 0
            while at < n, bytes[at] >= 48, bytes[at] <= 57 {
                if e < 100_000 { e = e * 10 + Int(bytes[at] - 48) }
                at += 1
            }
            guard at > expStart else { throw Failure(offset: start, message: "malformed number") }
            exponent += expNegative ? -e : e
        }
        // A well-formed number past Double's range is infinite: JSON allows it, and the
        // feature holding it is refused for it (a coordinate or radius that is not finite),
        // not the document.
        guard
            let v = NumberParser.convert(
                mantissa: mantissa, exponent: exponent, significant: significant, negative: negative,
                text: UnsafeBufferPointer(rebasing: bytes[start..<at]))
        else { return negative ? -.infinity : .infinity }
        return v
    }

    /// `true`, `false` or `null`; nil when none of them is next.
    mutating func literal() -> Bool?? {
        space()
        func matches(_ word: StaticString) -> Bool {
            let n = word.utf8CodeUnitCount
            guard at + n <= bytes.count else { return false }
            for k in 0..<n where bytes[at + k] != word.utf8Start[k] { return false }
            at += n
            return true
        }
        if matches("true") { return .some(true) }
        if matches("false") { return .some(false) }
        if matches("null") { return .some(nil) }
        return nil
    }

    // MARK: whole values

    /// Skips one value of any kind, validating its syntax, without recursion: one bit per
    /// open level records whether it is an array or an object.
    /// - Returns: the value's byte range and its nesting depth (0 for a scalar).
    /// - Complexity: O(bytes); memory one bit per level of nesting.
    mutating func skipValue() throws(Failure) -> (range: Range<Int>, depth: Int) {
        space()
        let start = at
        var stack: [UInt64] = []  // bit set: object
        var level = 0
        var deepest = 0
        func push(_ isObject: Bool) {
            if level % 64 == 0 { stack.append(0) }
            if isObject { stack[level / 64] |= 1 << UInt64(level % 64) } else { stack[level / 64] &= ~(1 << UInt64(level % 64)) }
            level += 1
            deepest = max(deepest, level)
        }
        func topIsObject() -> Bool { stack[(level - 1) / 64] & (1 << UInt64((level - 1) % 64)) != 0 }
        // One value at a time; after it, close levels or move to the next element.
        while true {
            // A value.
            guard let c = peek() else { throw fail("unexpected end of input") }
            switch c {
            case 123:  // {
                at += 1
                push(true)
                if take(125) {
                    level -= 1
                } else {
                    _ = try string()
                    try expect(58, ":")
                    continue
                }
            case 91:  // [
                at += 1
                push(false)
                if take(93) { level -= 1 } else { continue }
            case 34: _ = try string()
            default:
                if Self.startsNumber(c) {
                    _ = try numberRange()
                } else if literal() == nil {
                    throw fail("expected a JSON value")
                }
            }
            // After a value: close what ends here, or go on to the next element or member.
            while level > 0 {
                let isObject = topIsObject()
                if take(44) {
                    if isObject {
                        _ = try string()
                        try expect(58, ":")
                    }
                    break
                }
                if take(isObject ? 125 : 93) {
                    level -= 1
                    continue
                }
                throw fail(isObject ? "expected , or } in an object" : "expected , or ] in an array")
            }
            if level == 0 { return (start..<at, deepest) }
        }
    }

    /// `compactText`, refused when a string in it is not UTF-8 or holds an escape of half a
    /// surrogate pair: a property carried into events is text, as an id is.
    func checkedCompactText(_ range: Range<Int>) -> Result<String, TextProblem> {
        // Escapes stay as written; only surrogate escapes need a look (skipValue checked them).
        var i = range.lowerBound
        var inString = false
        while i < range.upperBound {
            let c = bytes[i]
            if !inString {
                if c == 34 { inString = true }
                i += 1
                continue
            }
            if c == 34 {
                inString = false
            } else if c == 92 {
                if bytes[i + 1] == 117 {
                    let v = hex4(bytes, at: i + 2)
                    if TextProblem.isLowSurrogate(v) { return .failure(.loneSurrogate(v)) }
                    if TextProblem.isHighSurrogate(v) {
                        guard i + 12 <= range.upperBound, bytes[i + 6] == 92, bytes[i + 7] == 117,
                            TextProblem.isLowSurrogate(hex4(bytes, at: i + 8))
                        else { return .failure(.loneSurrogate(v)) }
                        i += 12
                        continue
                    }
                    i += 6
                    continue
                }
                i += 2
                continue
            }
            i += 1
        }
        return compactBytes(range).withUnsafeBufferPointer { String.validating($0) }
    }

    /// A value's text without the white space between tokens (strings kept as written).
    func compactText(_ range: Range<Int>) -> String {
        String(decoding: compactBytes(range), as: UTF8.self)
    }

    private func compactBytes(_ range: Range<Int>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(range.count)
        var inString = false
        var escape = false
        for i in range {
            let c = bytes[i]
            if inString {
                out.append(c)
                if escape { escape = false } else if c == 92 { escape = true } else if c == 34 { inString = false }
            } else if c == 34 {
                inString = true
                out.append(c)
            } else if !(c == 32 || c == 10 || c == 13 || c == 9) {
                out.append(c)
            }
        }
        return out
    }
}
