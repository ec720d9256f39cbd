@testable import FenceEngine
@testable import FenceIO
import Foundation
import SeededRandom
import XCTest

/// The CSV reader's shortcuts against the general code they stand in for, over many seeds:
/// a shortcut that answers gives exactly what the general code gives (`usablePosition` the
/// general parse's position, `ISO8601.parseCommon` the full parse's seconds,
/// `TimeFormat.plainCount` the epoch count's text read with the point moved, `String.validUTF8`
/// the standard library's validating decode, the word-at-a-time delimiter search a byte loop's index), and
/// where it does not answer the general code still runs, so every line reads as before.
final class CSVFastPathOracleTests: XCTestCase {
    static func pick<T>(_ items: [T], _ rng: inout SplitMix64) -> T { items[Int(rng.next() % UInt64(items.count))] }

    static func digits(_ value: Int, _ width: Int) -> String {
        let s = String(value)
        return String(repeating: "0", count: max(0, width - s.count)) + s
    }

    /// A time as files write them, near the edges the parse checks: years 0, 1 and 9999,
    /// leap days (1900, 2000, 2004, 2100), the last day of each month and one past it, the
    /// year's and the day's ends, hour 24, second 60, long fractions, zones, and a byte
    /// changed now and then.
    static func randomTime(_ rng: inout SplitMix64) -> String {
        let year = pick([0, 1, 2, 99, 1899, 1900, 1969, 1970, 1999, 2000, 2004, 2020, 2023, 2024, 2100, 9998, 9999, Int(rng.next() % 10_000)], &rng)
        let month = pick([0, 1, 2, 2, 3, 4, 6, 9, 11, 12, 12, 13, Int(rng.next() % 14)], &rng)
        let day = pick([0, 1, 28, 29, 29, 30, 31, 32, Int(rng.next() % 33)], &rng)
        let hour = pick([0, 0, 12, 23, 23, 24, 25, Int(rng.next() % 26)], &rng)
        let minute = pick([0, 59, 60, Int(rng.next() % 61)], &rng)
        let second = pick([0, 59, 60, 61, Int(rng.next() % 62)], &rng)
        var s = digits(year, 4) + "-" + digits(month, 2) + "-" + digits(day, 2)
        if rng.next() % 2 == 0 {
            // A valid time, its day any of the month's (the last one included).
            let y = Int(rng.next() % 10_000)
            let m = 1 + Int(rng.next() % 12)
            let d = 1 + Int(rng.next() % UInt64(ISO8601.daysIn(month: m, year: y)))
            s = digits(y, 4) + "-" + digits(m, 2) + "-" + digits(d, 2) + pick(["T", "T", " ", "t"], &rng)
            s += digits(Int(rng.next() % 24), 2) + ":" + digits(Int(rng.next() % 60), 2) + ":" + digits(Int(rng.next() % 61), 2)
        } else {
            s += pick(["T", "T", "T", " ", "t", "x", ""], &rng)
            s += digits(hour, 2) + ":" + digits(minute, 2) + pick([":", ":", ":", "", "-"], &rng) + digits(second, 2)
        }
        switch rng.next() % 6 {
        case 0: s += "." + String((0..<Int(rng.next() % 25)).map { _ in Character(String(rng.next() % 10)) })
        case 1: s += pick([".0", ".000", ".5", ".999999999", ",25", "."], &rng)
        default: break
        }
        s += pick(["Z", "Z", "", "z", "+01:00", "-0230", " UTC", " gmt", "ZZ", "Z ", " ", "\r"], &rng)
        var bytes = Array(s.utf8)
        if rng.next() % 10 == 0 && !bytes.isEmpty {
            bytes[Int(rng.next() % UInt64(bytes.count))] = pick([32, 45, 48, 57, 58, 84, 0x2F, 0x3A, 0xC3], &rng)
        }
        if rng.next() % 20 == 0 { bytes = Array(bytes.prefix(Int(rng.next() % UInt64(bytes.count + 1)))) }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func same(_ a: Double?, _ b: Double?) -> Bool { a?.bitPattern == b?.bitPattern }

    func testCommonISOFormIsTheFullParse() {
        var answered = 0
        for seed in 0..<200 {
            var rng = SplitMix64(seed: UInt64(seed) &+ 24_601)
            for _ in 0..<500 {
                let text = Self.randomTime(&rng)
                Array(text.utf8).withUnsafeBufferPointer { b in
                    let full = ISO8601.parseAny(b)
                    if let common = ISO8601.parseCommon(b) {
                        answered += 1
                        XCTAssertTrue(Self.same(common, full), "\(text): \(common) against \(String(describing: full))")
                    }
                    XCTAssertTrue(Self.same(ISO8601.parse(b), full), text)
                    // The reader's time: a number first, then ISO 8601 without the blanks a
                    // number may carry, as it was read before the shortcut.
                    var lo = 0
                    var hi = b.count
                    while lo < hi && (b[lo] == 32 || b[lo] == 9) { lo += 1 }
                    while hi > lo && (b[hi - 1] == 32 || b[hi - 1] == 9 || b[hi - 1] == 13) { hi -= 1 }
                    let before = NumberParser.parseDouble(b) ?? ISO8601.parseAny(UnsafeBufferPointer(rebasing: b[lo..<hi]))
                    XCTAssertTrue(Self.same(PositionReader.parseTime(b), before), text)
                }
            }
        }
        // The shortcut is the path of most of these times, not a branch never taken.
        XCTAssertGreaterThan(answered, 10_000)
    }

    func testCommonISOFormAtKnownInstants() {
        for (text, seconds) in [
            ("1970-01-01T00:00:00Z", 0.0), ("2020-02-29T23:59:59Z", 1_583_020_799), ("2020-12-31T23:59:60Z", 1_609_459_200),
            ("9999-12-31T23:59:59.999Z", 253_402_300_799.999), ("2000-03-01 00:00:00", 951_868_800), ("0000-01-01T00:00:00Z", -62_167_219_200), ("0001-01-01T00:00:00Z", -62_135_596_800),
        ] {
            Array(text.utf8).withUnsafeBufferPointer { b in
                XCTAssertEqual(ISO8601.parseCommon(b), seconds, text)
                XCTAssertEqual(ISO8601.parseAny(b), seconds, text)
            }
        }
        for text in ["2021-02-29T00:00:00Z", "2020-12-31T24:00:00Z", "2020-01-01T00:00:00+01:00", "2020-01-01 00:00:00 UTC"] {
            Array(text.utf8).withUnsafeBufferPointer { XCTAssertNil(ISO8601.parseCommon($0), text) }
        }
    }

    /// A cell as users' files hold them: numbers good and bad, times, blanks, quotes (closed,
    /// doubled, unclosed), delimiters, non-UTF-8 and non-ASCII bytes.
    static let cells: [[UInt8]] = [
        "dev-1", "d", "x", "abcdefghijklmno", "abcdefghijklmnop", "é-dev", " dev", "dev ", "\t", " ", "", "\r", "dev\r",
        "12.5", "-3.25", "181", "-91", "90", "NaN", "inf", "1e400", "1e5", "+5", " 5", "5 ", "1.2.3", "0x10", ".5", "5.",
        "0", "1606799090.125", "-5", "1e20", "2020-12-01T05:04:50Z", "2020-12-01T05:04:50.825Z", "2021-02-29T00:00:00Z",
        "0001-01-01T00:00:00+01:00", "20200101T000000Z", "\"dev-2\"", "\"12.5\"", "\"a\"\"b\"", "\"unclosed", "x\"y", "\"\"",
        "\"2020-12-01T05:04:50Z\"", "\"\" ", "\"a\"b", "wgs84", "gcj02",
    ].map { Array($0.utf8) } + [[0xFF, 0x41], [0x64, 0xC3], [0xE2, 0x82, 0xAC], [0x31, 0x2E, 0xC3]]

    static func randomLine(_ rng: inout SplitMix64, columns: Int, delimiter: UInt8) -> [UInt8] {
        var fields = (0..<columns).map { _ in pick(cells, &rng) }
        switch rng.next() % 10 {
        case 0: fields.removeLast(Int(rng.next() % UInt64(columns)) + 1)
        case 1: fields.append(pick(cells, &rng))
        default: break
        }
        var line: [UInt8] = []
        for (k, f) in fields.enumerated() {
            if k > 0 { line.append(delimiter) }
            line += f
        }
        if rng.next() % 15 == 0 { line.append(pick([44, 9, 59, 34, 32], &rng)) }
        return line
    }

    func testUsablePositionIsTheGeneralParse() {
        let layouts: [(names: [PositionField?], delimiter: UInt8)] = [
            ([.device, .time, .lon, .lat], 44), ([.time, .lat, .lon, .device], 59), ([.device, .time, .lon, .lat, .accuracy, nil, nil], 44),
            ([nil, .lat, .device, .lon, .time], 9), ([.device, .time, .lon, .lat, .coord], 44),
        ]
        var fast = 0
        for seed in 0..<120 {
            var rng = SplitMix64(seed: UInt64(seed) &+ 777)
            let layout = layouts[seed % layouts.count]
            var parser = PositionLineParser(format: .csv, defaultCoord: seed % 2 == 0 ? .wgs84 : .gcj02, timeFormat: nil, namedFields: [:])
            parser.delimiter = layout.delimiter
            parser.columnCount = layout.names.count
            for (c, f) in layout.names.enumerated() { if let f { parser.columnIndex[f.rawValue] = c } }
            var fields = [Range<Int>](repeating: 0..<0, count: parser.columnCount)
            for n in 0..<400 {
                var line = Self.randomLine(&rng, columns: parser.columnCount, delimiter: layout.delimiter)
                // Lines the general parse reads too: some good ones made sure of.
                if n % 3 == 0 {
                    let good: [PositionField: String] = [
                        .device: Self.pick(["dev-7", "\"dev-8\"", "a-very-long-device-id-of-40-bytes-012345", "ünï"], &rng),
                        .time: Self.pick(["12.5", "2020-12-01T05:04:50.825Z", "\"1606799090\""], &rng), .lon: "11.697384", .lat: "\"-47.2\"",
                        .accuracy: Self.pick(["", " ", "3.5", "\"7\""], &rng), .coord: Self.pick(["", "bd09ll", " wgs84 "], &rng),
                    ]
                    line = Array(layout.names.map { $0.flatMap { good[$0] } ?? "x" }.joined(separator: String(UnicodeScalar(layout.delimiter))).utf8)
                }
                line.withUnsafeBufferPointer { b in
                    let general = parser.parseAnyCSV(b, lineNumber: n + 1, fields: &fields)
                    if let p = parser.usablePosition(csv: b, fields: &fields) {
                        fast += 1
                        guard case .success(let q?) = general else {
                            return XCTFail("\(String(decoding: b, as: UTF8.self).debugDescription): fast \(p), general \(general)")
                        }
                        XCTAssertEqual(Array(p.device.utf8), Array(q.device.utf8))
                        XCTAssertEqual(p.time.bitPattern, q.time.bitPattern)
                        XCTAssertEqual(p.lon.bitPattern, q.lon.bitPattern)
                        XCTAssertEqual(p.lat.bitPattern, q.lat.bitPattern)
                        XCTAssertEqual(p.accuracy?.bitPattern, q.accuracy?.bitPattern)
                        XCTAssertEqual(p.coord, q.coord)
                    }
                    XCTAssertEqual(parser.parse(b, lineNumber: n + 1, fields: &fields), general)
                }
            }
        }
        XCTAssertGreaterThan(fast, 5_000)
    }

    /// `%s%3N`-style counts: the shortcut for plain digits against moving the point in the
    /// text and reading it (`epochSecondsAny`), for every unit, signs, blanks, zeros in front,
    /// 1 to 20 digits (past 15 the shortcut gives way) and text that is no count.
    func testPlainEpochCountIsTheTextRead() {
        var answered = 0
        for seed in 0..<200 {
            var rng = SplitMix64(seed: UInt64(seed) &+ 99)
            for _ in 0..<300 {
                let shift = Self.pick([0, 0, 3, 3, 6, 9, 1, 22, Int(rng.next() % 23)], &rng)
                let count = 1 + Int(rng.next() % 20)
                var text = (0..<count).map { k in Character(String(k == 0 && rng.next() % 3 == 0 ? 0 : rng.next() % 10)) }.map(String.init).joined()
                text = Self.pick(["", "", "-", "+", " ", "\t-", "--"], &rng) + text + Self.pick(["", "", " ", "\r", "\t ", ".5", "e3", "x"], &rng)
                if rng.next() % 10 == 0 { text = Self.pick(["", " ", "-", "+", "0", "-0", ".", "1.", "1e", "１"], &rng) }
                Array(text.utf8).withUnsafeBufferPointer { b in
                    let general = TimeFormat.epochSecondsAny(b, shift: shift)
                    if let fast = TimeFormat.plainCount(b, shift: shift) {
                        answered += 1
                        XCTAssertTrue(Self.same(fast, general), "\(text.debugDescription) shift \(shift): \(fast) against \(String(describing: general))")
                    }
                    XCTAssertTrue(Self.same(TimeFormat.epochSeconds(b, shift: shift), general), text.debugDescription)
                }
            }
        }
        XCTAssertGreaterThan(answered, 10_000)
    }

    /// `String.validUTF8`, which makes small ASCII ids by copying their bytes in, against the
    /// standard library's validating decode: the same string, or nil for both.
    func testValidUTF8IsTheValidatingDecode() {
        for seed in 0..<100 {
            var rng = SplitMix64(seed: UInt64(seed) &+ 31)
            for _ in 0..<300 {
                let count = Int(rng.next() % 20)
                let bytes = (0..<count).map { _ in rng.next() % 4 == 0 ? UInt8(truncatingIfNeeded: rng.next()) : UInt8(32 + rng.next() % 95) }
                bytes.withUnsafeBufferPointer { b in
                    let made = String.validUTF8(b)
                    let expected = String(validating: b, as: UTF8.self)
                    XCTAssertEqual(made, expected)
                    XCTAssertEqual(made.map { Array($0.utf8) }, expected.map { Array($0.utf8) })
                }
            }
        }
    }

    func testDelimiterSearchIsAByteLoop() {
        for seed in 0..<100 {
            var rng = SplitMix64(seed: UInt64(seed) &+ 5)
            for _ in 0..<300 {
                let delimiter = Self.pick([UInt8(44), 9, 59, 0x80, 0xFF, 1], &rng)
                let count = Int(rng.next() % 40)
                let bytes = (0..<count).map { _ in
                    rng.next() % 9 == 0 ? delimiter : Self.pick([UInt8(0), 1, 43, 45, 0x7F, 0x80, 0xFE, 0xFF, 48, 97, delimiter &+ 1, delimiter &- 1], &rng)
                }
                let from = Int(rng.next() % UInt64(count + 1))
                let words = UInt64(delimiter) &* 0x0101_0101_0101_0101
                bytes.withUnsafeBufferPointer { b in
                    let found = PositionLineParser.delimiter(in: b.baseAddress ?? UnsafePointer(bitPattern: 8)!, from: from, to: count, matching: words)
                    XCTAssertEqual(found, bytes[from...].firstIndex(of: delimiter) ?? count, "\(bytes) from \(from)")
                }
            }
        }
    }
}
