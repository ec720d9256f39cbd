/// A time layout given as a `strptime` pattern, for position times that are neither epoch
/// seconds nor ISO 8601: `%m/%d/%Y %I:%M:%S %p` (Chicago's taxi trips, most US exports),
/// `%d.%m.%Y %H:%M` (much of Europe), `%d %b %Y %H:%M:%S %z`.
///
/// Directives (English names, any case):
/// - `%Y` four-digit year; `%y` two digits (69-99: 1969-1999, 00-68: 2000-2068, as POSIX);
/// - `%m` month 1-12; `%b`, `%B`, `%h` month name, full or three letters;
/// - `%d` day of the month (`%e` the same, a leading blank allowed);
/// - `%H` hour 0-23; `%I` hour 1-12 with `%p` (AM or PM);
/// - `%M` minute; `%S` second 0-60 (60 counts as the next minute's first second, as in
///   `ISO8601.parse`); `%f` the fraction's digits (after `%S.`, up to 18 read);
/// - `%z` zone: `Z`, `±hh`, `±hhmm` or `±hh:mm` (without one the time is UTC, as the SPEC has
///   it for ISO 8601 times);
/// - `%a`, `%A` a weekday name, full or three letters, read and not checked against the date;
/// - `%T` = `%H:%M:%S`, `%R` = `%H:%M`, `%F` = `%Y-%m-%d`, `%D` = `%m/%d/%y`; `%%` a `%`.
/// One or more blanks in the pattern match any run of blanks (none included); any other
/// character must be there as it is. Numbers take one or two digits (`%Y` four, `%y` two,
/// `%f` one or more), as many as there are: fields with no separator between them must be
/// zero-padded (`%Y%m%d` reads `20200105`, not `202015`). The whole field must match, blanks
/// and a CR around it aside. A pattern needs a year, a month and a day; a time of day is
/// optional (midnight).
///
/// Epoch counts in another unit, named as GNU `date` names them: `%s` epoch seconds, `%s%3N`
/// epoch milliseconds (what JavaScript's `Date.now()`, many telemetry feeds and, after 1970,
/// `date +%s%3N` write), `%s%6N` microseconds, `%s%9N` nanoseconds; each pattern alone
/// (`%s.%N`, `date +%s.%N`'s seconds with nine decimals, and `%s.%3N`... are `%s`). The
/// number is a signed decimal count (a fraction and an exponent allowed): before 1970 it is
/// JavaScript's count (-2500 is -2.5 s), not what `date` prints there (whole seconds rounded
/// down, then a positive fraction: -1.5 s prints as `-2500`, read here as -2.5 s). The count gives the
/// very Double of the same time written in seconds (`1700000000123` is `1700000000.123`): the
/// decimal point is moved in the text, the exponent kept, and the text read once
/// (`epochSeconds`).
public struct TimeFormat: Sendable, Hashable {
    /// The pattern as given.
    public let pattern: String
    private let steps: [Step]
    /// Decimal places of an epoch pattern's unit (`%s` 0, `%s%3N` 3, ...); nil for a layout.
    let epochDigits: Int?

    private enum Field: Hashable {
        case year4, year2, month, monthName, day, hour24, hour12, ampm, minute, second, fraction, zone, weekday
    }

    private enum Step: Hashable {
        case field(Field)
        case literal(UInt8)
        case blanks
    }

    /// Compiles a pattern.
    /// - Throws: why the pattern cannot be read: an unknown directive, a field given twice,
    ///   `%I` without `%p` (or the other way), no year, month or day, a minute without an hour.
    public init(_ pattern: String) throws(TimeFormatError) {
        self.pattern = pattern
        // `date +%s.%N` (and `%s.%3N`...) writes seconds with a fraction: what `%s` reads.
        let epochs = ["%s": 0, "%s%3N": 3, "%s%6N": 6, "%s%9N": 9, "%s.%N": 0, "%s.%3N": 0, "%s.%6N": 0, "%s.%9N": 0]
        if let digits = epochs[pattern] {
            epochDigits = digits
            steps = []
            return
        }
        epochDigits = nil
        var steps: [Step] = []
        var seen = Set<Field>()
        func add(_ f: Field) throws(TimeFormatError) {
            let kind: Field = f == .year2 ? .year4 : f == .monthName ? .month : f
            guard seen.insert(kind).inserted else { throw TimeFormatError("\(pattern): a field is given twice") }
            steps.append(.field(f))
        }
        var bytes = Array(pattern.utf8)[...]
        while let c = bytes.popFirst() {
            if c == 32 || c == 9 {
                while let next = bytes.first, next == 32 || next == 9 { bytes.removeFirst() }
                steps.append(.blanks)
                continue
            }
            guard c == 37 else {  // %
                steps.append(.literal(c))
                continue
            }
            guard let d = bytes.popFirst() else { throw TimeFormatError("\(pattern): a % ends the pattern") }
            switch d {
            case UInt8(ascii: "Y"): try add(.year4)
            case UInt8(ascii: "y"): try add(.year2)
            case UInt8(ascii: "m"): try add(.month)
            case UInt8(ascii: "b"), UInt8(ascii: "B"), UInt8(ascii: "h"): try add(.monthName)
            case UInt8(ascii: "d"): try add(.day)
            case UInt8(ascii: "e"):
                steps.append(.blanks)
                try add(.day)
            case UInt8(ascii: "H"): try add(.hour24)
            case UInt8(ascii: "I"): try add(.hour12)
            case UInt8(ascii: "p"): try add(.ampm)
            case UInt8(ascii: "M"): try add(.minute)
            case UInt8(ascii: "S"): try add(.second)
            case UInt8(ascii: "f"): try add(.fraction)
            case UInt8(ascii: "z"): try add(.zone)
            case UInt8(ascii: "a"), UInt8(ascii: "A"): try add(.weekday)
            case UInt8(ascii: "T"), UInt8(ascii: "R"), UInt8(ascii: "F"), UInt8(ascii: "D"):
                // Read as the pattern it stands for.
                bytes = ArraySlice(Self.shorthands[d]!.utf8) + bytes
            case 37: steps.append(.literal(37))
            case UInt8(ascii: "s"), UInt8(ascii: "N"), 48...57:
                // Known only in the epoch patterns above (`%s`, `%s%3N`, ...).
                throw TimeFormatError("\(pattern): %s and %N go alone, as %s (epoch seconds), %s%3N (milliseconds), %s%6N or %s%9N")
            default:
                // The whole character, not its first byte.
                var character = [d]
                while let next = bytes.first, next & 0xC0 == 0x80 {
                    character.append(next)
                    bytes.removeFirst()
                }
                throw TimeFormatError("\(pattern): %\(String(decoding: character, as: UTF8.self)) is no directive this reader knows")
            }
        }
        guard seen.contains(.year4), seen.contains(.month), seen.contains(.day) else {
            throw TimeFormatError("\(pattern): a time needs a year (%Y or %y), a month (%m or %b) and a day (%d)")
        }
        if seen.contains(.hour12) != seen.contains(.ampm) { throw TimeFormatError("\(pattern): %I and %p go together") }
        if seen.contains(.hour24) && seen.contains(.hour12) { throw TimeFormatError("\(pattern): a field is given twice") }
        let hour = seen.contains(.hour24) || seen.contains(.hour12)
        if !hour && (seen.contains(.minute) || seen.contains(.second)) || !seen.contains(.minute) && seen.contains(.second) {
            throw TimeFormatError("\(pattern): minutes need an hour, and seconds a minute")
        }
        if seen.contains(.fraction) && !seen.contains(.second) { throw TimeFormatError("\(pattern): %f needs %S") }
        self.steps = steps
    }

    /// Seconds of an epoch count in units of 10^-`shift` seconds: the decimal point moved
    /// `shift` places left in the text, then read once (`NumberParser`, correctly rounded), so a count of any
    /// size gives the Double of the same time written in seconds; a count with an exponent
    /// (`1.7e12`) has the point moved in its digits and the exponent kept (`0.0017e12`).
    /// - Complexity: O(length); no allocation on the heap.
    static func epochSeconds(_ field: UnsafeBufferPointer<UInt8>, shift: Int) -> Double? {
        plainCount(field, shift: shift) ?? epochSecondsAny(field, shift: shift)
    }

    /// `epochSeconds` of a count written as at most 15 digits (a sign and blanks around
    /// allowed; milliseconds since 1970 have 13), nil for any other text: the count is exact
    /// in a Double, so it is one correctly rounded divide by 10^`shift`, the one `NumberParser`
    /// makes of the text with the point moved (Clinger's fast path). Without the text made
    /// and read again: about 600 instructions a time of `%s%3N`.
    /// - Complexity: O(length), no allocation.
    @inline(__always)
    static func plainCount(_ field: UnsafeBufferPointer<UInt8>, shift: Int) -> Double? {
        guard let p = field.baseAddress, shift >= 0 && shift <= 22 else { return nil }
        var lo = 0
        var hi = field.count
        while lo < hi && (p[lo] == 32 || p[lo] == 9) { lo &+= 1 }
        while hi > lo && (p[hi &- 1] == 32 || p[hi &- 1] == 9 || p[hi &- 1] == 13) { hi &-= 1 }
        let negative = lo < hi && p[lo] == 45
        if lo < hi && (p[lo] == 45 || p[lo] == 43) { lo &+= 1 }
        guard hi > lo && hi &- lo <= 15 else { return nil }
        var m: UInt64 = 0
        for j in lo..<hi {
            let d = p[j] &- 48
            guard d <= 9 else { return nil }
            m = m &* 10 &+ UInt64(d)
        }
        let v = shift == 0 ? Double(m) : Double(m) / NumberParser.powers[shift]
        return negative ? -v : v
    }

    /// `epochSeconds` of any text, without `plainCount`'s shortcut (the oracle its tests hold
    /// it to).
    static func epochSecondsAny(_ field: UnsafeBufferPointer<UInt8>, shift: Int) -> Double? {
        var lo = 0
        var hi = field.count
        while lo < hi && (field[lo] == 32 || field[lo] == 9) { lo += 1 }
        while hi > lo && (field[hi - 1] == 32 || field[hi - 1] == 9 || field[hi - 1] == 13) { hi -= 1 }
        var i = lo
        let sign: UInt8? = i < hi && (field[i] == 45 || field[i] == 43) ? field[i] : nil
        if sign != nil { i += 1 }
        var point: Int?
        var digits = 0
        // Where an exponent (`e`, `E`) starts: it is kept as written after the moved point.
        var end = hi
        for j in i..<hi {
            if field[j] == 46 && point == nil {
                point = digits
            } else if field[j] >= 48 && field[j] <= 57 {
                digits += 1
            } else if field[j] == 101 || field[j] == 69 {
                end = j
                break
            } else {
                return nil
            }
        }
        guard digits > 0 else { return nil }
        // The digits, with the point `shift` places further left (zeros in front as needed),
        // then the exponent as it is (`NumberParser` checks it).
        let at = (point ?? digits) - shift
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: digits + max(0, -at) + 3 + (hi - end)) { out in
            var n = 0
            if let sign { out[n] = sign; n += 1 }
            if at <= 0 {
                out[n] = 48; out[n + 1] = 46; n += 2
                for _ in 0..<(-at) { out[n] = 48; n += 1 }
            }
            var k = 0
            for j in i..<end where field[j] != 46 {
                if k == at && at > 0 { out[n] = 46; n += 1 }
                out[n] = field[j]
                n += 1
                k += 1
            }
            for j in end..<hi {
                out[n] = field[j]
                n += 1
            }
            return NumberParser.parseDouble(UnsafeBufferPointer(rebasing: out[0..<n]))
        }
    }

    /// `%T`, `%R`, `%F` and `%D`: the patterns they stand for.
    private static let shorthands: [UInt8: String] = [
        UInt8(ascii: "T"): "%H:%M:%S", UInt8(ascii: "R"): "%H:%M", UInt8(ascii: "F"): "%Y-%m-%d", UInt8(ascii: "D"): "%m/%d/%y",
    ]

    public static func == (a: Self, b: Self) -> Bool { a.pattern == b.pattern }
    public func hash(into h: inout Hasher) { h.combine(pattern) }

    private static let months = [
        "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november",
        "december",
    ].map { Array($0.utf8) }
    private static let weekdays = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"].map {
        Array($0.utf8)
    }

    /// Epoch seconds of a field in this layout, or nil when it does not match or names no
    /// such time (31 April, hour 13 with `%p`).
    /// - Complexity: O(length); no allocation.
    public func parse(_ field: UnsafeBufferPointer<UInt8>) -> Double? {
        if let epochDigits { return Self.epochSeconds(field, shift: epochDigits) }
        var lo = 0
        var n = field.count
        while lo < n && (field[lo] == 32 || field[lo] == 9) { lo += 1 }
        while n > lo && (field[n - 1] == 32 || field[n - 1] == 9 || field[n - 1] == 13) { n -= 1 }
        var i = lo
        func number(_ minDigits: Int, _ maxDigits: Int) -> Int? {
            var v = 0
            var k = 0
            while k < maxDigits && i < n && field[i] >= 48 && field[i] <= 57 {
                v = v * 10 + Int(field[i] - 48)
                i += 1
                k += 1
            }
            return k >= minDigits ? v : nil
        }
        func lower(_ c: UInt8) -> UInt8 { c >= 65 && c <= 90 ? c + 32 : c }
        // The index of the name at i, moving past it: the full name, or its first three
        // letters where the next byte does not go on with it ("Janx" is "Jan" then "x";
        // "Janu" is neither).
        func name(_ names: [[UInt8]]) -> Int? {
            for (k, full) in names.enumerated() {
                var j = 0
                while j < full.count && i + j < n && lower(field[i + j]) == full[j] { j += 1 }
                if j == full.count || j == 3 {
                    i += j
                    return k
                }
            }
            return nil
        }
        var year = 0
        var month = 0
        var day = 0
        var hour = 0
        var pm: Bool?
        var minute = 0
        var second = 0
        var fraction = 0..<0
        var offset = 0
        for step in steps {
            switch step {
            case .literal(let c):
                guard i < n && field[i] == c else { return nil }
                i += 1
            case .blanks:
                while i < n && (field[i] == 32 || field[i] == 9) { i += 1 }
            case .field(let f):
                switch f {
                case .year4:
                    guard let v = number(4, 4) else { return nil }
                    year = v
                case .year2:
                    guard let v = number(2, 2) else { return nil }
                    year = v < 69 ? 2000 + v : 1900 + v
                case .month:
                    guard let v = number(1, 2), v >= 1, v <= 12 else { return nil }
                    month = v
                case .monthName:
                    guard let k = name(Self.months) else { return nil }
                    month = k + 1
                case .day:
                    guard let v = number(1, 2), v >= 1 else { return nil }
                    day = v
                case .hour24:
                    guard let v = number(1, 2), v <= 23 else { return nil }
                    hour = v
                case .hour12:
                    guard let v = number(1, 2), v >= 1, v <= 12 else { return nil }
                    hour = v
                case .ampm:
                    guard i + 1 < n, lower(field[i + 1]) == 109, lower(field[i]) == 97 || lower(field[i]) == 112 else { return nil }
                    pm = lower(field[i]) == 112
                    i += 2
                case .minute:
                    guard let v = number(1, 2), v <= 59 else { return nil }
                    minute = v
                case .second:
                    guard let v = number(1, 2), v <= 60 else { return nil }
                    second = v
                case .fraction:
                    let start = i
                    while i < n && field[i] >= 48 && field[i] <= 57 { i += 1 }
                    guard i > start else { return nil }
                    fraction = start..<i
                case .zone:
                    guard i < n else { return nil }
                    if field[i] == 90 || field[i] == 122 {
                        i += 1
                    } else {
                        guard field[i] == 43 || field[i] == 45 else { return nil }
                        let sign = field[i] == 43 ? 1 : -1
                        i += 1
                        guard let h = number(2, 2), h <= 23 else { return nil }
                        var m = 0
                        // ±hh:mm takes both minute digits after the colon.
                        let colon = i < n && field[i] == 58
                        if colon { i += 1 }
                        if colon || i < n && field[i] >= 48 && field[i] <= 57 {
                            guard let v = number(2, 2), v <= 59 else { return nil }
                            m = v
                        }
                        offset = sign * (h * 3600 + m * 60)
                    }
                case .weekday:
                    guard name(Self.weekdays) != nil else { return nil }
                }
            }
        }
        guard i == n, day <= ISO8601.daysIn(month: month, year: year) else { return nil }
        if let pm { hour = hour % 12 + (pm ? 12 : 0) }
        let whole = ISO8601.daysFromCivil(year: year, month: month, day: day) * 86400 + hour * 3600 + minute * 60 + second - offset
        return ISO8601.epochSeconds(whole, fraction: UnsafeBufferPointer(rebasing: field[fraction]))
    }

    /// `parse` of a string's UTF-8.
    public func parse(_ text: String) -> Double? {
        var t = text
        return t.withUTF8 { parse($0) }
    }
}

/// Why a `--time-format` pattern cannot be read.
public struct TimeFormatError: Error, Sendable, CustomStringConvertible {
    public let reason: String
    init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}
