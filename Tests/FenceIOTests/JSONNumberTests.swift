import Foundation
@testable import FenceIO
import XCTest

/// The GeoJSON reader's numbers (`JSONScanner.number`) against strtod (correctly rounded in
/// glibc), bit for bit: the digit blocks, the significant-digit count and the exact paths.
final class JSONNumberTests: XCTestCase {
    private func scanned(_ text: String) -> Result<Double, JSONScanner.Failure> {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(buffer)
            do throws(JSONScanner.Failure) {
                let v = try scanner.number()
                // The whole token is read, and nothing past it.
                XCTAssertEqual(scanner.at, buffer.count, text)
                return .success(v)
            } catch {
                return .failure(error)
            }
        }
    }

    /// Random JSON numbers: integer parts of 1-20 digits, fractions of 0-30 digits (with runs
    /// of leading zeros, so blocks start before and after the first significant digit, and
    /// numbers pass the 19 digits held), some with exponents; against strtod.
    func testRandomNumbersAgreeWithStrtod() {
        var rng = UInt64(4242)
        func next(_ n: UInt64) -> UInt64 {
            rng = rng &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return (rng >> 33) % n
        }
        var texts = ["0", "-0", "0.0", "6.2808642905618965", "49.927480996735596", "-179.99999999999997", "0.30000000000000004",
                     "0.000000012345678901234567", "1.00000000000000000000001", "123456789.123456789", "0.1234567890123456789",
                     "9007199254740993", "9007199254740993.0", "0.99999999999999999999", "1e-22", "12345678901234567890123.5"]
        for _ in 0..<300_000 {
            var t = next(2) == 0 ? "-" : ""
            let intDigits = 1 + Int(next(next(4) == 0 ? 20 : 3))
            if intDigits == 1 || next(5) == 0 {
                t += String(next(10))
            } else {
                t += String(1 + next(9))
                for _ in 1..<intDigits { t += String(next(10)) }
            }
            if next(6) != 0 {
                t += "."
                let zeros = next(3) == 0 ? Int(next(12)) : 0
                t += String(repeating: "0", count: zeros)
                let digits = 1 + Int(next(30))
                for _ in 0..<digits { t += String(next(10)) }
            }
            if next(8) == 0 { t += (next(2) == 0 ? "e" : "E") + ["", "+", "-"][Int(next(3))] + String(next(25)) }
            texts.append(t)
        }
        for t in texts {
            let expected = strtod(t, nil)
            guard case .success(let got) = scanned(t) else {
                XCTFail("\(t) refused")
                break
            }
            XCTAssertEqual(got.bitPattern, expected.bitPattern, t)
            if got.bitPattern != expected.bitPattern { break }
        }
    }

    /// What JSON does not allow is refused, wherever the digit blocks would have read.
    func testMalformedNumbersAreRefused() {
        for bad in ["01", "-01", "00.5", "1.", "-", ".5", "1.e5", "1e", "1e+", "+1", "12345678.", "-.12345678"] {
            guard case .failure = scanned(bad) else {
                XCTFail("\(bad) accepted")
                continue
            }
        }
    }

    /// A number ends where its digits end: the blocks never take the bytes after it.
    func testBlocksStopAtTheNumbersEnd() {
        let text = "[12.34567890123,5.1234,0.12345678]"
        let bytes = Array(text.utf8)
        bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(buffer)
            var values: [Double] = []
            XCTAssertTrue(scanner.take(UInt8(ascii: "[")))
            repeat {
                do throws(JSONScanner.Failure) {
                    values.append(try scanner.number())
                } catch {
                    XCTFail("\(error)")
                    return
                }
            } while scanner.take(UInt8(ascii: ","))
            XCTAssertTrue(scanner.take(UInt8(ascii: "]")))
            XCTAssertEqual(values, [12.34567890123, 5.1234, 0.12345678])
        }
    }
}
