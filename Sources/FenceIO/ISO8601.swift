/// ISO 8601 times to and from epoch seconds, without Foundation's formatters (which allocate
/// and are slow on Linux). Proleptic Gregorian calendar, UTC.
public enum ISO8601 {
    /// Parses `YYYY-MM-DD[Thh:mm[:ss[.fff…]]][Z|±hh[:mm]]`, or the same in ISO 8601's basic
    /// format, `YYYYMMDD[Thhmm[ss[.fff…]]][Z|±hh[mm]]` (a basic date takes a basic time and
    /// zone: mixed forms are refused); a space may stand for `T`, and ` UTC` or ` GMT` for `Z`
    /// (BigQuery's and Hive's text times, whose fraction comes and goes). A time without a zone is
    /// UTC, as AIS and most GPS exports write it. Hour 24 is only `24:00`, `24:00:00` or
    /// `24:00:00.000…`, the next day's midnight. (A reader that tries epoch seconds first
    /// takes a bare `20080202` as a number.)
    /// - Returns: epoch seconds, or nil when the text is not such a time.
    /// - Complexity: O(length), no allocation.
    public static func parse(_ s: UnsafeBufferPointer<UInt8>) -> Double? {
        parseCommon(s) ?? parseAny(s)
    }

    /// `parse` of every form, without `parseCommon`'s shortcut (the oracle its tests hold it to).
    static func parseAny(_ s: UnsafeBufferPointer<UInt8>) -> Double? {
        var i = 0
        let n = s.count
        func digits(_ count: Int) -> Int? {
            guard i + count <= n else { return nil }
            var v = 0
            for k in 0..<count {
                let c = s[i + k]
                guard c >= 48 && c <= 57 else { return nil }
                v = v * 10 + Int(c - 48)
            }
            i += count
            return v
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < n && s[i] == c else { return false }
            i += 1
            return true
        }
        guard let year = digits(4) else { return nil }
        // Basic format: no separators in the date, none in the time.
        let basic = !expect(45)
        guard let month = digits(2), basic || expect(45), let day = digits(2) else { return nil }
        guard month >= 1 && month <= 12 && day >= 1 && day <= daysIn(month: month, year: year) else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        if i == n { return Double(days * 86400) }
        guard s[i] == 84 || s[i] == 32 || s[i] == 116 else { return nil }  // T, space, t
        i += 1
        guard let hour = digits(2), basic || expect(58), let minute = digits(2) else { return nil }
        var whole = 0
        var fraction = 0..<0
        if i < n && (basic ? s[i] >= 48 && s[i] <= 57 : s[i] == 58) {
            if !basic { i += 1 }
            guard let w = digits(2) else { return nil }
            whole = w
            if i < n && (s[i] == 46 || s[i] == 44) {  // . or ,
                i += 1
                let start = i
                while i < n && s[i] >= 48 && s[i] <= 57 { i += 1 }
                if i == start { return nil }
                fraction = start..<i
            }
        }
        guard hour <= 24 && minute <= 59 && whole <= 60 else { return nil }
        // ISO 8601 allows hour 24 only as the end of the day, 24:00:00 (the next day's midnight).
        if hour == 24 {
            guard minute == 0, whole == 0, fraction.allSatisfy({ s[$0] == 48 }) else { return nil }
        }
        var total = days * 86400 + hour * 3600 + minute * 60 + whole
        if i < n {
            if isUTCName(UnsafeBufferPointer(rebasing: s[i...])) {
                // ` UTC` / ` GMT` (BigQuery's and Hive's text times): Z.
            } else if s[i] == 90 || s[i] == 122 {  // Z
                i += 1
                guard i == n else { return nil }
            } else {
                guard s[i] == 43 || s[i] == 45 else { return nil }
                let sign = s[i] == 43 ? 1 : -1
                i += 1
                guard let oh = digits(2) else { return nil }
                var om = 0
                if i < n {
                    if !basic { _ = expect(58) }  // ±hh:mm or ±hhmm; basic times take ±hhmm
                    guard let m = digits(2) else { return nil }
                    om = m
                }
                guard i == n, oh <= 23, om <= 59 else { return nil }
                total -= sign * (oh * 3600 + om * 60)
            }
        }
        return epochSeconds(total, fraction: UnsafeBufferPointer(rebasing: s[fraction]))
    }

    /// `parse` of the form most files write, `YYYY-MM-DDThh:mm:ss[.fff…][Z]` (`T` or a
    /// space, hours 00-23), from fixed offsets without `parse`'s digit closure and branches
    /// (about 400 instructions a time); nil for anything else, which `parse` then reads
    /// whole. Where it answers, it is `parse`'s value (the same checks and arithmetic).
    /// - Complexity: O(fraction digits), no allocation.
    @inline(__always)
    static func parseCommon(_ s: UnsafeBufferPointer<UInt8>) -> Double? {
        let n = s.count
        guard n >= 19, let p = s.baseAddress, p[4] == 45, p[7] == 45, p[10] == 84 || p[10] == 32 || p[10] == 116, p[13] == 58,
            p[16] == 58, let year = NumberParser.fourDigits(p)
        else { return nil }
        @inline(__always)
        func two(_ k: Int) -> Int? {
            let a = p[k] &- 48
            let b = p[k &+ 1] &- 48
            guard a <= 9 && b <= 9 else { return nil }
            return Int(a) &* 10 &+ Int(b)
        }
        guard let month = two(5), let day = two(8), let hour = two(11), let minute = two(14), let second = two(17),
            month >= 1 && month <= 12 && day >= 1 && day <= daysIn(month: month, year: Int(year)),
            hour <= 23 && minute <= 59 && second <= 60
        else { return nil }
        var i = 19
        var fraction = 0..<0
        if i < n && (p[i] == 46 || p[i] == 44) {
            i &+= 1
            let start = i
            while i < n && p[i] &- 48 <= 9 { i &+= 1 }
            if i == start { return nil }
            fraction = start..<i
        }
        if i < n {
            guard p[i] == 90 || p[i] == 122, i &+ 1 == n else { return nil }
        }
        let days = daysFromCivil(year: Int(year), month: month, day: day)
        return epochSeconds(days * 86400 + hour * 3600 + minute * 60 + second, fraction: UnsafeBufferPointer(rebasing: s[fraction]))
    }

    /// Whether the text is a zone named `UTC` or `GMT` (any case), after at most one space:
    /// what BigQuery, Hive and Spark write after a time (`2020-01-01 00:00:00 UTC`).
    static func isUTCName(_ t: UnsafeBufferPointer<UInt8>) -> Bool {
        let rest = t.first == 32 ? UnsafeBufferPointer(rebasing: t.dropFirst()) : t
        guard rest.count == 3 else { return false }
        let upper = rest.map { $0 >= 97 && $0 <= 122 ? $0 - 32 : $0 }
        return upper == [85, 84, 67] || upper == [71, 77, 84]
    }

    /// `whole` seconds plus the decimal fraction whose digits are given, as the number parser
    /// reads the same value written as epoch seconds: correctly rounded, so a time written in
    /// ISO 8601 and as an epoch number is the same Double (a duplicate is a duplicate, and a
    /// fix at enter + dwell is at it). Fraction digits past the 18th are dropped.
    /// - Complexity: O(digits); no allocation.
    static func epochSeconds(_ whole: Int, fraction: UnsafeBufferPointer<UInt8>) -> Double {
        var digits = UnsafeBufferPointer(rebasing: fraction.prefix(18))
        while let last = digits.last, last == 48 { digits = UnsafeBufferPointer(rebasing: digits.dropLast()) }
        if digits.isEmpty { return Double(whole) }
        // The value is N / 10^k with N = whole * 10^k + F: one correctly rounded divide when
        // N is exact in a Double (Clinger's fast path, as the number parser takes it).
        var f = 0
        for d in digits { f = f * 10 + Int(d - 48) }
        let scale = powersOfTen[digits.count]
        let (shifted, overflow) = whole.multipliedReportingOverflow(by: scale)
        if !overflow, abs(shifted) < (1 << 53) - f {
            return Double(shifted + f) / Double(scale)
        }
        // Otherwise the number parser reads the decimal text: `whole.fraction`, or for a
        // negative time -(|whole| - 1).(10^k - F).
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 48) { text -> Double in
            var k = 0
            var integer = whole
            if whole < 0 {
                text[k] = 45
                k += 1
                integer = -(whole + 1)
            }
            var width = 1
            var rest = integer / 10
            while rest > 0 {
                width += 1
                rest /= 10
            }
            for p in stride(from: k + width - 1, through: k, by: -1) {
                text[p] = UInt8(48 + integer % 10)
                integer /= 10
            }
            k += width
            text[k] = 46
            k += 1
            var carry = 1
            for idx in stride(from: digits.count - 1, through: 0, by: -1) {
                let d = Int(digits[idx] - 48)
                if whole < 0 {
                    let v = 9 - d + carry
                    text[k + idx] = UInt8(48 + v % 10)
                    carry = v / 10
                } else {
                    text[k + idx] = digits[idx]
                }
            }
            k += digits.count
            return NumberParser.parseDouble(UnsafeBufferPointer(rebasing: text[0..<k])) ?? .nan
        }
    }

    private static let powersOfTen: [Int] = (0...18).map { (0..<$0).reduce(1) { r, _ in r * 10 } }

    public static func parse(_ text: String) -> Double? {
        var text = text
        return text.withUTF8 { parse($0) }
    }

    /// Formats epoch seconds as `YYYY-MM-DDThh:mm:ss.fffZ` (millisecond precision, rounded).
    public static func format(_ epoch: Double) -> String {
        var bytes = [UInt8]()
        bytes.reserveCapacity(24)
        append(epoch, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the formatted time to a byte buffer (the event writers' hot path).
    public static func append(_ epoch: Double, to out: inout [UInt8]) {
        guard epoch.isFinite, abs(epoch) < 253_402_300_800 * 4 else {
            out.appendUTF8("invalid-time")
            return
        }
        let ms = Int64((epoch * 1000).rounded())
        var days = ms / 86_400_000
        var rem = ms % 86_400_000
        if rem < 0 {
            rem += 86_400_000
            days -= 1
        }
        let (y, m, d) = civilFromDays(Int(days))
        // Made on the stack and appended in one copy: a byte at a time it was about 700
        // instructions a timestamp, on every output row; the year's four appends and a second
        // copy for the rest cost about 100 more.
        let wide = y < 0 || y > 9999
        if wide { out.appendUTF8(String(y)) }
        let r = Int(rem)
        let f = r % 1000
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { b in
            func two(_ at: Int, _ v: Int) {
                b[at] = UInt8(truncatingIfNeeded: 48 &+ v / 10)
                b[at + 1] = UInt8(truncatingIfNeeded: 48 &+ v % 10)
            }
            // The year, when it has four digits, then "-MM-DDTHH:MM:SS.mmmZ" from byte 4.
            two(0, y / 100 % 100)
            two(2, y % 100)
            b[4] = 45
            two(5, m)
            b[7] = 45
            two(8, d)
            b[10] = 84
            two(11, r / 3_600_000)
            b[13] = 58
            two(14, r / 60_000 % 60)
            b[16] = 58
            two(17, r / 1000 % 60)
            b[19] = 46
            b[20] = UInt8(truncatingIfNeeded: 48 &+ f / 100)
            two(21, f % 100)
            b[23] = 90
            out.append(contentsOf: UnsafeBufferPointer(rebasing: b[(wide ? 4 : 0)...]))
        }
    }

    static func isLeap(_ y: Int) -> Bool { (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 (Howard Hinnant's `days_from_civil`).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }

    /// Inverse of `daysFromCivil`.
    static func civilFromDays(_ z0: Int) -> (Int, Int, Int) {
        let z = z0 + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? y + 1 : y, m, d)
    }
}
