import Foundation

/// Decimal numbers from bytes, without making a String.
enum NumberParser {
    private static let powers: [Double] = (0...22).map { pow(10, Double($0)) }

    /// Parses `[+-]digits[.digits][e[+-]digits]`, the whole buffer, surrounding blanks allowed.
    ///
    /// Up to 15 significant digits with a small exponent take Clinger's fast path (one exact
    /// multiply or divide, so correctly rounded); anything else goes to `strtod`.
    /// - Returns: nil when the bytes are not such a number (so "nan", "inf", "" are nil).
    static func parseDouble(_ s: UnsafeBufferPointer<UInt8>) -> Double? {
        var lo = 0
        var hi = s.count
        while lo < hi && (s[lo] == 32 || s[lo] == 9) { lo += 1 }
        while hi > lo && (s[hi - 1] == 32 || s[hi - 1] == 9 || s[hi - 1] == 13) { hi -= 1 }
        guard lo < hi else { return nil }
        var i = lo
        var negative = false
        if s[i] == 45 || s[i] == 43 {
            negative = s[i] == 45
            i += 1
        }
        var mantissa: UInt64 = 0
        var significant = 0
        var exponent = 0
        var digitsSeen = 0
        while i < hi && s[i] >= 48 && s[i] <= 57 {
            if significant < 19 {
                mantissa = mantissa * 10 + UInt64(s[i] - 48)
                if mantissa != 0 { significant += 1 }
            } else {
                exponent += 1
                significant += 1
            }
            digitsSeen += 1
            i += 1
        }
        if i < hi && s[i] == 46 {
            i += 1
            while i < hi && s[i] >= 48 && s[i] <= 57 {
                if significant < 19 {
                    mantissa = mantissa * 10 + UInt64(s[i] - 48)
                    if mantissa != 0 { significant += 1 }
                    exponent -= 1
                } else {
                    significant += 1
                }
                digitsSeen += 1
                i += 1
            }
        }
        guard digitsSeen > 0 else { return nil }
        if i < hi && (s[i] == 101 || s[i] == 69) {
            i += 1
            var expNegative = false
            if i < hi && (s[i] == 45 || s[i] == 43) {
                expNegative = s[i] == 45
                i += 1
            }
            var e = 0
            var expDigits = 0
            while i < hi && s[i] >= 48 && s[i] <= 57 {
                if e < 100_000 { e = e * 10 + Int(s[i] - 48) }
                expDigits += 1
                i += 1
            }
            guard expDigits > 0 else { return nil }
            exponent += expNegative ? -e : e
        }
        guard i == hi else { return nil }
        if significant <= 15 && mantissa < (1 << 53) && exponent >= -22 && exponent <= 22 {
            var v = Double(mantissa)
            if exponent < 0 { v /= powers[-exponent] } else { v *= powers[exponent] }
            return negative ? -v : v
        }
        // Slow path: strtod on a NUL-terminated copy (on the stack: no allocation per number).
        let length = hi - lo
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: length + 1) { buf -> Double? in
            for k in 0..<length { buf[k] = CChar(bitPattern: s[lo + k]) }
            buf[length] = 0
            var end: UnsafeMutablePointer<CChar>?
            let v = strtod(buf.baseAddress!, &end)
            guard let end, end - buf.baseAddress! == length else { return nil }
            return v.isFinite ? v : nil
        }
    }
}
