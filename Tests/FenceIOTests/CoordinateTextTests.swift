import FenceIO
import Foundation
import SeededRandom
import XCTest

/// `appendDescription(of:)`, the events' coordinate text, against `Double.description` (the
/// text events wrote before): the same bytes for GPS-like decimals of every length, for
/// random doubles of every magnitude and for the edges of its fast range.
final class CoordinateTextTests: XCTestCase {
    func check(_ v: Double, file: StaticString = #filePath, line: UInt = #line) {
        var out: [UInt8] = [7]
        out.appendDescription(of: v)
        XCTAssertEqual(String(decoding: out.dropFirst(), as: UTF8.self), v.description, "\(v.bitPattern)", file: file, line: line)
    }

    func testEdgesAndSpecialValues() {
        for v in [
            0, -0.0, 1, -1, 180, -180, 90, -90, 0.001, -0.001, 0.000999, 0.0009999999999999998, 1e7, 9_999_999.99999999,
            9_999_999.999999999, 1e-3.nextDown, 1e-3.nextUp, 1e7.nextDown, 0.1, 0.2, 0.1 + 0.2, 1.0 / 3, 2.0 / 3, 123.45678901,
            12.345678901234567, 5e-324, .greatestFiniteMagnitude, .infinity, -.infinity, .nan, 1e15, 1e16, 1e22, 1e23,
            0.5, 0.25, 0.125, 0.0625, 4503599627370496.5, 11.697384, 47.24889, -3.739264, 50.172107,
        ] as [Double] {
            check(v)
            check(v.nextUp)
            check(v.nextDown)
        }
    }

    /// Decimals as GPS and AIS exports write them (0 to 9 fraction digits, up to 3 integer
    /// digits and beyond), read as `strtod` reads them.
    func testDecimalsOverManySeeds() {
        for seed in 0..<100 {
            var rng = SplitMix64(seed: UInt64(seed))
            for _ in 0..<2_000 {
                let fraction = Int(rng.next() % 11)
                let integer = Int(rng.next() % 9)
                var text = rng.next() % 2 == 0 ? "-" : ""
                text += String(rng.next() % (integer == 0 ? 1 : UInt64(pow(10, Double(integer)))))
                if fraction > 0 {
                    text += "." + String((0..<fraction).map { _ in Character(UnicodeScalar(UInt8(48 + rng.next() % 10))) })
                }
                check(Double(text)!)
            }
        }
    }

    /// Random bit patterns, and random values across the fast range's magnitudes.
    func testRandomDoubles() {
        var rng = SplitMix64(seed: 42)
        for _ in 0..<200_000 { check(Double(bitPattern: rng.next())) }
        for _ in 0..<200_000 {
            let v = pow(10, Double(rng.next() % 12_000) / 1000 - 4) * (rng.next() % 2 == 0 ? 1 : -1)
            check(v)
            check((v * 1e6).rounded() / 1e6)
        }
    }
}
