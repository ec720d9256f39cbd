@testable import FenceIO
import SeededRandom
import XCTest

/// `ISO8601.append`, every output row's timestamp, against the byte-at-a-time writer it
/// replaced (kept here as the oracle): the same bytes over the years 1-9999 and past them
/// (wider years, negative ones), both sides of midnight and of the millisecond's rounding.
final class TimestampTextTests: XCTestCase {
    /// The writer as it was before the one-copy version.
    static func oracle(_ epoch: Double) -> [UInt8] {
        guard epoch.isFinite, abs(epoch) < 253_402_300_800 * 4 else { return Array("invalid-time".utf8) }
        let ms = Int64((epoch * 1000).rounded())
        var days = ms / 86_400_000
        var rem = ms % 86_400_000
        if rem < 0 {
            rem += 86_400_000
            days -= 1
        }
        let (y, m, d) = ISO8601.civilFromDays(Int(days))
        var out: [UInt8] = y < 0 || y > 9999 ? Array(String(y).utf8) : [UInt8(48 + y / 1000), UInt8(48 + y / 100 % 10), UInt8(48 + y / 10 % 10), UInt8(48 + y % 10)]
        let r = Int(rem)
        func two(_ v: Int) -> [UInt8] { [UInt8(48 + v / 10), UInt8(48 + v % 10)] }
        out += [45] + two(m) + [45] + two(d) + [84] + two(r / 3_600_000) + [58] + two(r / 60_000 % 60) + [58] + two(r / 1000 % 60)
        out += [46, UInt8(48 + r % 1000 / 100), UInt8(48 + r % 100 / 10), UInt8(48 + r % 10), 90]
        return out
    }

    func check(_ t: Double, file: StaticString = #filePath, line: UInt = #line) {
        var out: [UInt8] = [1]
        ISO8601.append(t, to: &out)
        XCTAssertEqual(out, [1] + Self.oracle(t), "\(t)", file: file, line: line)
    }

    func testEdges() {
        for t in [
            0, -0.0, 0.0005, 0.0004999, -0.0005, -0.001, 86_399.9995, 86_399.9994, 86_400, -86_400, 951_782_400, 253_402_300_799.9994,
            253_402_300_799.9995, 253_402_300_800, -62_135_596_800, -62_135_596_800.0005, -62_135_596_800.000_496, -62_167_219_200,
            -62_198_755_200, 1e12, -1e12, 253_402_300_800 * 4, 253_402_300_800 * 4 - 1, -(253_402_300_800 * 4 - 1), .nan, .infinity,
            -.infinity, 1_606_780_801.2506,
        ] as [Double] {
            check(t)
            check(t.nextUp)
            check(t.nextDown)
        }
    }

    func testRandomTimesOverManySeeds() {
        for seed in 0..<50 {
            var rng = SplitMix64(seed: UInt64(seed))
            for _ in 0..<4_000 {
                // Across the whole accepted range, across the years 1-9999, and near today.
                let u = Double(rng.next() >> 11) * 0x1p-53
                check((u * 2 - 1) * 253_402_300_800 * 4)
                check(u * 315_537_897_600 - 62_135_596_800)
                check(1.6e9 + u * 1e9 + Double(rng.next() % 1000) / 1000)
            }
        }
    }
}
