import Foundation
@testable import FenceIO
import XCTest

final class NumberParserTests: XCTestCase {
    /// The 128-bit path against strtod (correctly rounded in glibc) over random 16-19 digit
    /// decimals, halfway cases and powers of ten at both ends of its range.
    func testLongDecimalsAgreeWithStrtod() {
        var rng = UInt64(12345)
        func next() -> UInt64 {
            rng = rng &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return rng
        }
        var texts = ["6.1719563913384805", "49.95309501675989", "-179.99999999999997", "0.30000000000000004", "9007199254740993",
                     "9007199254740993e-3", "1.7976931348623157", "0.0000000000000000000012345678901234567", "12345678901234567890",
                     "9999999999999999999e-22", "1e19", "123456789012345678e1", "2.2250738585072014", "4.9406564584124654"]
        for _ in 0..<200_000 {
            let digits = 16 + Int(next() % 4)
            var d = String(next() % 9 + 1)
            while d.count < digits { d += String(next() % 10) }
            let point = Int(next() % UInt64(digits + 1))
            var t = String(d.prefix(point)) + (point < digits ? "." + d.dropFirst(point) : "")
            if t.hasPrefix(".") { t = "0" + t }
            if next() % 4 == 0 { t += "e" + String(Int(next() % 30) - 20) }
            texts.append(next() % 2 == 0 ? "-" + t : t)
        }
        for t in texts {
            let expected = strtod(t, nil)
            var bytes = Array(t.utf8)
            let got = bytes.withUnsafeMutableBufferPointer { NumberParser.parseDouble(UnsafeBufferPointer($0)) }
            XCTAssertEqual(got?.bitPattern, expected.bitPattern, t)
            if got?.bitPattern != expected.bitPattern { break }
        }
    }

    /// Products `w * 10^k` of more than 64 bits that sit at or just past a halfway point
    /// between two doubles once cut to 64 bits: only the bits below the cut decide the
    /// rounding, so they must count (found by search, then checked against strtod).
    func testWideProductsNearHalfwayAgreeWithStrtod() {
        var rng = UInt64(99)
        func next() -> UInt64 {
            rng = rng &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return rng
        }
        var halfway = 0
        var past = 0
        var tries = 0
        while (halfway < 40 || past < 40) && tries < 50_000_000 {
            tries += 1
            let w = 1_000_000_000_000_000 + next() % 9_000_000_000_000_000_000
            let k = 1 + Int(next() % 19)
            let x = UInt128(w) * (0..<k).reduce(UInt128(1)) { p, _ in p * 10 }
            let bits = 128 - x.leadingZeroBitCount
            guard bits > 64 else { continue }
            let drop = bits - 64
            let word = UInt64(truncatingIfNeeded: x >> drop)
            // The round bit set, nothing else below the 53 kept bits inside the word, the
            // kept part even (so only the bits past the cut can break the tie).
            guard (word >> 10) & 1 == 1, word & 0x3FF == 0, (word >> 11) & 1 == 0 else { continue }
            let below = x & ((UInt128(1) << drop) - 1) != 0
            if below { past += 1 } else { halfway += 1 }
            let t = "\(w)e\(k)"
            let expected = strtod(t, nil)
            let got = Array(t.utf8).withUnsafeBufferPointer { NumberParser.parseDouble($0) }
            XCTAssertEqual(got?.bitPattern, expected.bitPattern, t)
            if got?.bitPattern != expected.bitPattern { return }
        }
        XCTAssertGreaterThan(past, 0, "no product past halfway found")
    }

    /// The short path (at most 19 digits, no exponent: coordinates and times as exports write
    /// them) against strtod, bit for bit, over random decimals of 1-19 digits with leading
    /// zeros, signs and edge forms; and what must be refused.
    func testShortDecimalsAgreeWithStrtod() {
        var rng = UInt64(777)
        func next() -> UInt64 {
            rng = rng &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return rng >> 11
        }
        var texts = ["0", "-0", "1.", ".5", "-.5", "+7", "000123.4500", "9007199254740993", "9007199254740992.5",
                     "-73.9876543", "1700000000.123", "0.000000000000000000001", "1234567890123456789", " 42.5 ", "12.5\r"]
        for _ in 0..<200_000 {
            let digits = 1 + Int(next() % 19)
            var d = ""
            for _ in 0..<digits { d += String(next() % 10) }
            let point = Int(next() % UInt64(digits + 1))
            var t = String(d.prefix(point)) + (point < digits ? "." + d.dropFirst(point) : "")
            if t.hasPrefix(".") && next() % 2 == 0 { t = "0" + t }
            texts.append(next() % 3 == 0 ? "-" + t : t)
        }
        for t in texts {
            let expected = strtod(t, nil)
            let bytes = Array(t.utf8)
            let got = bytes.withUnsafeBufferPointer { NumberParser.parseDouble($0) }
            XCTAssertEqual(got?.bitPattern, expected.bitPattern, t)
            if got?.bitPattern != expected.bitPattern { break }
        }
        for bad in ["", ".", "-", "1.2.3", "1e", "nan", "inf", "12a", "--1", "1 2"] {
            let bytes = Array(bad.utf8)
            XCTAssertNil(bytes.withUnsafeBufferPointer { NumberParser.parseDouble($0) }, bad)
        }
    }
}
