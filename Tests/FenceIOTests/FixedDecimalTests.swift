import FenceIO
import Foundation
import SeededRandom
import XCTest

/// `FixedDecimal.append` writes what `String(format: "%.Nf")` writes, the text `fence nearest`
/// printed before it: over random magnitudes, halfway cases, signs, zero and the non-finite.
final class FixedDecimalTests: XCTestCase {
    func testMatchesStringFormat() {
        var rng = SplitMix64(seed: 2026)
        var values: [Double] = [0, -0.0, 0.005, 0.015, 0.125, 2.675, -2.675, 1.005, 0.5, 1.5, 2.5, -0.5, 1e15, 1e22, 1e40, -1e300, .greatestFiniteMagnitude,
                                .leastNonzeroMagnitude, 123_456.785, 3600, .nan, .infinity, -.infinity]
        for _ in 0..<20_000 {
            let magnitude = pow(10, Double(rng.next() % 16) - 3)
            let sign: Double = rng.next() % 2 == 0 ? 1 : -1
            values.append(sign * Double(rng.next() >> 11) * 0x1p-53 * magnitude)
            // Halfway in decimal (not exactly in binary): the C library rounds the binary value.
            values.append(sign * (Double(rng.next() % 1_000_000) + 0.005))
        }
        for v in values {
            for digits in [0, 1, 2, 6] {
                var out: [UInt8] = []
                FixedDecimal.append(v, digits: digits, to: &out)
                var expected = String(format: "%.\(digits)f", v)
                // Rounded to zero: no sign.
                if expected.hasPrefix("-"), expected.dropFirst().allSatisfy({ $0 == "0" || $0 == "." }) { expected.removeFirst() }
                XCTAssertEqual(String(decoding: out, as: UTF8.self), expected, "\(v) with \(digits) digits")
            }
        }
    }

    /// A value rounding to zero is written unsigned: `-0.001` is `0.00`, `-0.0` is `0`.
    func testZeroHasNoSign() {
        for (v, digits, text) in [(-0.001, 2, "0.00"), (-0.0, 0, "0"), (-0.0, 3, "0.000"), (-0.4, 0, "0"), (-0.5, 0, "0"), (-0.6, 0, "-1"), (-0.006, 2, "-0.01"), (-1e-300, 9, "0.000000000")] {
            var out: [UInt8] = []
            FixedDecimal.append(v, digits: digits, to: &out)
            XCTAssertEqual(String(decoding: out, as: UTF8.self), text, "\(v)")
        }
    }

    func testAppendsAfterWhatIsThere() {
        var out = Array("x=".utf8)
        FixedDecimal.append(-12.345678, digits: 2, to: &out)
        XCTAssertEqual(String(decoding: out, as: UTF8.self), "x=-12.35")
    }
}
