import Foundation

/// Decimal numbers from bytes, without making a String.
enum NumberParser {
    /// 10^k for 0 <= k <= 22, each exact.
    static let powers: [Double] = (0...22).map { pow(10, Double($0)) }

    /// Parses `[+-]digits[.digits][e[+-]digits]`, the whole buffer, surrounding blanks allowed.
    ///
    /// Up to 15 significant digits with a small exponent take Clinger's fast path (one exact
    /// multiply or divide, so correctly rounded); up to 19 digits with a decimal exponent in
    /// -22...19 (the 16-17 digits of a shortest-round-trip double: what GIS tools write) take an
    /// exact 128-bit path (`exactQuotient`, `exactProduct`); anything else goes to `strtod`.
    /// - Returns: nil when the bytes are not such a number (so "nan", "inf", "" are nil).
    static func parseDouble(_ buffer: UnsafeBufferPointer<UInt8>) -> Double? {
        // Unchecked reads through the base pointer and wrapping arithmetic where the bounds
        // are already tested: the digit loops are the parser's hottest code.
        guard let s = buffer.baseAddress else { return nil }
        var lo = 0
        var hi = buffer.count
        while lo < hi && (s[lo] == 32 || s[lo] == 9) { lo += 1 }
        while hi > lo && (s[hi - 1] == 32 || s[hi - 1] == 9 || s[hi - 1] == 13) { hi -= 1 }
        guard lo < hi else { return nil }
        var i = lo
        var negative = false
        if s[i] == 45 || s[i] == 43 {
            negative = s[i] == 45
            i += 1
        }
        // The common case first: at most 19 digits, an optional fraction, no exponent (how GPS
        // and AIS exports write coordinates and times). Then the value held is exact and no
        // significant digits need counting.
        do {
            var j = i
            var m: UInt64 = 0
            while j < hi {
                let d = s[j] &- 48
                if d > 9 { break }
                m = m &* 10 &+ UInt64(d)
                j &+= 1
            }
            let integerDigits = j &- i
            var fractionDigits = 0
            if j < hi && s[j] == 46 {
                j &+= 1
                let start = j
                while j < hi {
                    let d = s[j] &- 48
                    if d > 9 { break }
                    m = m &* 10 &+ UInt64(d)
                    j &+= 1
                }
                fractionDigits = j &- start
            }
            let digits = integerDigits &+ fractionDigits
            if j == hi && digits > 0 && digits <= 19 {
                if m < (1 << 53) && fractionDigits <= 22 {
                    // Clinger's fast path: both operands exact, one correctly rounded divide.
                    let v = fractionDigits == 0 ? Double(m) : Double(m) / powers[fractionDigits]
                    return negative ? -v : v
                }
                return convert(
                    mantissa: m, exponent: -fractionDigits, significant: digits, negative: negative,
                    text: UnsafeBufferPointer(start: s + lo, count: hi - lo))
            }
        }
        var mantissa: UInt64 = 0
        var significant = 0
        var exponent = 0
        var digitsSeen = 0
        while i < hi {
            let d = s[i] &- 48
            if d > 9 { break }
            if significant < 19 {
                mantissa = mantissa &* 10 &+ UInt64(d)
                if mantissa != 0 { significant &+= 1 }
            } else {
                exponent &+= 1
                significant &+= 1
            }
            digitsSeen &+= 1
            i &+= 1
        }
        if i < hi && s[i] == 46 {
            i += 1
            while i < hi {
                let d = s[i] &- 48
                if d > 9 { break }
                if significant < 19 {
                    mantissa = mantissa &* 10 &+ UInt64(d)
                    if mantissa != 0 { significant &+= 1 }
                    exponent &-= 1
                } else {
                    significant &+= 1
                }
                digitsSeen &+= 1
                i &+= 1
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
        return convert(
            mantissa: mantissa, exponent: exponent, significant: significant, negative: negative,
            text: UnsafeBufferPointer(start: s + lo, count: hi - lo))
    }

    /// The double nearest to `±mantissa × 10^exponent`, where the number had `significant`
    /// significant digits (past 19, `mantissa` holds the first 19 and `text`, the number as
    /// written, goes to `strtod`).
    @inline(__always)
    static func convert(mantissa: UInt64, exponent: Int, significant: Int, negative: Bool, text: UnsafeBufferPointer<UInt8>) -> Double? {
        if significant <= 15 && mantissa < (1 << 53) && exponent >= -22 && exponent <= 22 {
            var v = Double(mantissa)
            if exponent < 0 { v /= powers[-exponent] } else { v *= powers[exponent] }
            return negative ? -v : v
        }
        if significant <= 19 && exponent >= -22 && exponent <= 19 {
            let v = exponent < 0 ? exactQuotient(mantissa, powerOfTen: -exponent) : exactProduct(mantissa, powerOfTen: exponent)
            return negative ? -v : v
        }
        // Slow path: strtod on a NUL-terminated copy (on the stack: no allocation per number).
        let length = text.count
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: length + 1) { buf -> Double? in
            for k in 0..<length { buf[k] = CChar(bitPattern: text[k]) }
            buf[length] = 0
            var end: UnsafeMutablePointer<CChar>?
            let v = strtod(buf.baseAddress!, &end)
            guard let end, end - buf.baseAddress! == length else { return nil }
            return v.isFinite ? v : nil
        }
    }

    private static let powers128: [UInt128] = (0...22).map { k in (0..<k).reduce(UInt128(1)) { p, _ in p * 10 } }
    /// 5^k for 0 <= k <= 22 (5^22 < 2^52).
    private static let powersOfFive: [UInt64] = (0...22).map { k in (0..<k).reduce(UInt64(1)) { p, _ in p * 5 } }

    /// `w / 10^k` rounded to the nearest double (ties to even), for 1 <= k <= 22.
    ///
    /// `10^k = 5^k * 2^k`, and `5^k` fits one word (below 2^52): `w` is shifted so the quotient
    /// by `5^k` has 63 or 64 bits while the dividend's high word stays below the divisor, so one
    /// 128-by-64-bit division gives the quotient and remainder. 63 bits and the remainder are
    /// all correct rounding needs. Exact, unlike `Double(w) / 1e16` once `w` exceeds 2^53.
    /// - Complexity: one 128-by-64-bit division.
    static func exactQuotient(_ w: UInt64, powerOfTen k: Int) -> Double {
        guard w != 0 else { return 0 }
        let d = powersOfFive[k]
        // The dividend's top bit at bit (d's bits + 62): below d * 2^64, at least 2^62 * d.
        let shift = (64 - d.leadingZeroBitCount) + 63 - (64 - w.leadingZeroBitCount)
        let n = UInt128(w) << shift
        let (q, r) = d.dividingFullWidth((high: UInt64(truncatingIfNeeded: n >> 64), low: UInt64(truncatingIfNeeded: n)))
        return rounded(q, sticky: r != 0, binaryExponent: -shift - k)
    }

    /// `w * 10^k` rounded to the nearest double, for 0 <= k <= 19 (exact in 128 bits).
    static func exactProduct(_ w: UInt64, powerOfTen k: Int) -> Double {
        rounded(UInt128(w) * powers128[k], sticky: false, binaryExponent: 0)
    }

    /// `(q + sticky ε) * 2^binaryExponent` rounded to 53 bits, ties to even, for a `q` of 54
    /// to 64 bits and a result in the normal range (as `exactQuotient`'s and `exactProduct`'s
    /// are): the double's bits are put together directly.
    @inline(__always)
    static func rounded(_ q: UInt64, sticky: Bool, binaryExponent: Int) -> Double {
        var extra = (64 - q.leadingZeroBitCount) - 53
        var mantissa = q >> UInt64(extra)
        let roundBit = (q >> UInt64(extra - 1)) & 1
        let below = sticky || q & ((1 << UInt64(extra - 1)) - 1) != 0
        if roundBit == 1 && (below || mantissa & 1 == 1) {
            mantissa += 1
            if mantissa == 1 << 53 {
                mantissa >>= 1
                extra += 1
            }
        }
        // mantissa in [2^52, 2^53): the value is 1.f * 2^(e + 52).
        let biased = UInt64(binaryExponent + extra + 52 + 1023)
        return Double(bitPattern: biased << 52 | (mantissa & ((1 << 52) - 1)))
    }

    /// The value of eight ASCII digits at `p` (read unaligned), or nil when the eight bytes
    /// are not all digits: a few word operations instead of eight steps of a digit loop.
    @inline(__always)
    static func eightDigits(_ p: UnsafePointer<UInt8>) -> UInt64? {
        let v = UInt64(littleEndian: UnsafeRawPointer(p).loadUnaligned(as: UInt64.self))
        // Every byte in 0x30...0x39: its high nibble 3, and adding 6 does not carry into it.
        guard (v & 0xF0F0_F0F0_F0F0_F0F0) | (((v &+ 0x0606_0606_0606_0606) & 0xF0F0_F0F0_F0F0_F0F0) >> 4) == 0x3333_3333_3333_3333
        else { return nil }
        // The first byte is the most significant digit: pairs, then quads, then the eight.
        var x = v & 0x0F0F_0F0F_0F0F_0F0F
        x = (x &* 2561) >> 8
        x = ((x & 0x00FF_00FF_00FF_00FF) &* 6_553_601) >> 16
        return ((x & 0x0000_FFFF_0000_FFFF) &* 42_949_672_960_001) >> 32
    }

    /// The value of four ASCII digits at `p` (read unaligned), or nil when the four bytes are
    /// not all digits.
    @inline(__always)
    static func fourDigits(_ p: UnsafePointer<UInt8>) -> UInt64? {
        let v = UInt64(UInt32(littleEndian: UnsafeRawPointer(p).loadUnaligned(as: UInt32.self)))
        guard (v & 0xF0F0_F0F0) | (((v &+ 0x0606_0606) & 0xF0F0_F0F0) >> 4) == 0x3333_3333 else { return nil }
        var x = v & 0x0F0F_0F0F
        x = (x &* 2561) >> 8
        return (((x & 0x00FF_00FF) &* 6_553_601) >> 16) & 0xFFFF
    }

    /// How many decimal digits `v` (below 10^8) has without leading zeros; 0 for 0.
    @inline(__always)
    static func decimalDigits(_ v: UInt64) -> Int {
        var n = 0
        var p: UInt64 = 1
        while n < 8 && v >= p {
            n += 1
            p &*= 10
        }
        return n
    }

    /// `(q + sticky ε) * 2^binaryExponent` rounded to 53 bits, ties to even; `sticky` says
    /// that something non-zero lies below `q`'s last bit. Bits past the 64 the word rounding
    /// takes are folded into `sticky`: one rounding rule for both widths.
    static func rounded(_ q: UInt128, sticky: Bool, binaryExponent: Int) -> Double {
        guard q != 0 else { return 0 }
        let bits = 128 - q.leadingZeroBitCount
        guard bits > 53 else { return Double(sign: .plus, exponent: binaryExponent, significand: Double(UInt64(q))) }
        let drop = max(0, bits - 64)
        let dropped = drop > 0 && q & ((UInt128(1) << drop) - 1) != 0
        return rounded(UInt64(truncatingIfNeeded: q >> drop), sticky: sticky || dropped, binaryExponent: binaryExponent + drop)
    }
}
