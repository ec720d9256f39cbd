/// ISO 8601 times to and from epoch seconds, without Foundation's formatters (which allocate
/// and are slow on Linux). Proleptic Gregorian calendar, UTC.
public enum ISO8601 {
    /// Parses `YYYY-MM-DD[Thh:mm[:ss[.fff…]]][Z|±hh[:mm]]`; a space may stand for `T`. A time
    /// without a zone is UTC, as AIS and most GPS exports write it.
    /// - Returns: epoch seconds, or nil when the text is not such a time.
    /// - Complexity: O(length), no allocation.
    public static func parse(_ s: UnsafeBufferPointer<UInt8>) -> Double? {
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
        guard let year = digits(4), expect(45), let month = digits(2), expect(45), let day = digits(2) else { return nil }
        guard month >= 1 && month <= 12 && day >= 1 && day <= daysIn(month: month, year: year) else { return nil }
        var seconds = Double(daysFromCivil(year: year, month: month, day: day)) * 86400
        if i == n { return seconds }
        guard s[i] == 84 || s[i] == 32 || s[i] == 116 else { return nil }  // T, space, t
        i += 1
        guard let hour = digits(2), expect(58), let minute = digits(2) else { return nil }
        var second = 0.0
        if i < n && s[i] == 58 {
            i += 1
            guard let whole = digits(2) else { return nil }
            second = Double(whole)
            if i < n && (s[i] == 46 || s[i] == 44) {  // . or ,
                i += 1
                var scale = 0.1
                var any = false
                while i < n && s[i] >= 48 && s[i] <= 57 {
                    second += Double(s[i] - 48) * scale
                    scale /= 10
                    i += 1
                    any = true
                }
                if !any { return nil }
            }
        }
        guard hour <= 24 && minute <= 59 && second < 61 else { return nil }
        seconds += Double(hour * 3600 + minute * 60) + second
        if i == n { return seconds }
        if s[i] == 90 || s[i] == 122 {  // Z
            i += 1
            return i == n ? seconds : nil
        }
        guard s[i] == 43 || s[i] == 45 else { return nil }
        let sign: Double = s[i] == 43 ? 1 : -1
        i += 1
        guard let oh = digits(2) else { return nil }
        var om = 0
        if i < n {
            _ = expect(58)
            guard let m = digits(2) else { return nil }
            om = m
        }
        guard i == n, oh <= 23, om <= 59 else { return nil }
        return seconds - sign * Double(oh * 3600 + om * 60)
    }

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
            out.append(contentsOf: Array("invalid-time".utf8))
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
        func two(_ v: Int) {
            out.append(UInt8(48 + v / 10))
            out.append(UInt8(48 + v % 10))
        }
        if y < 0 || y > 9999 {
            out.append(contentsOf: Array(String(y).utf8))
        } else {
            two(y / 100)
            two(y % 100)
        }
        out.append(45)
        two(m)
        out.append(45)
        two(d)
        out.append(84)
        let r = Int(rem)
        two(r / 3_600_000)
        out.append(58)
        two(r / 60_000 % 60)
        out.append(58)
        two(r / 1000 % 60)
        out.append(46)
        let f = r % 1000
        out.append(UInt8(48 + f / 100))
        out.append(UInt8(48 + f / 10 % 10))
        out.append(UInt8(48 + f % 10))
        out.append(90)
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
