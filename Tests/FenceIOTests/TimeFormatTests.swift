import FenceEngine
@testable import FenceIO
import Foundation
import SeededRandom
import XCTest

/// `--time-format` (`TimeFormat`): strptime layouts against Foundation's own formatter as the
/// oracle, refusals of times that do not exist, and the reader and CLI taking them.
final class TimeFormatTests: XCTestCase {
    /// Random instants from 1901 to 2099, written by `DateFormatter` (POSIX locale, UTC) in
    /// each layout, read back: the same second.
    func testLayoutsAgreeWithFoundationsFormatterOverSeeds() throws {
        let layouts: [(strptime: String, icu: String, step: Double)] = [
            ("%m/%d/%Y %I:%M:%S %p", "MM/dd/yyyy hh:mm:ss a", 1),
            ("%d.%m.%Y %H:%M", "dd.MM.yyyy HH:mm", 60),
            ("%Y%m%d %H%M%S", "yyyyMMdd HHmmss", 1),
            ("%d %b %Y %H:%M:%S", "dd MMM yyyy HH:mm:ss", 1),
            ("%a, %d %B %Y %T", "EEE, dd MMMM yyyy HH:mm:ss", 1),
            ("%e/%m/%y %R", "d/M/yy HH:mm", 60),
            ("%F %T.%f", "yyyy-MM-dd HH:mm:ss.SSS", 0.001),
            ("%D %I%p", "MM/dd/yy hha", 3600),
        ]
        var rng = SystemRandomNumberGenerator()
        for (pattern, icu, step) in layouts {
            let format = try TimeFormat(pattern)
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = icu
            // Two-digit years: 1969-2068 only, as both read them.
            let years: ClosedRange<Double> = pattern.contains("%y") || pattern.contains("%D") ? -31_536_000...3_124_137_599 : -2_145_916_800...4_102_444_799
            for _ in 0..<3000 {
                let t = (Double.random(in: years, using: &rng) / step).rounded(.down) * step
                let text = formatter.string(from: Date(timeIntervalSince1970: t))
                guard let parsed = format.parse(text) else {
                    XCTFail("\(pattern): \(text) not read")
                    return
                }
                XCTAssertEqual(parsed, t, accuracy: step == 0.001 ? 1e-6 : 0, "\(pattern): \(text)")
            }
        }
    }

    func testZonesFractionsAndCase() throws {
        let f = try TimeFormat("%Y-%m-%d %H:%M:%S%z")
        XCTAssertEqual(f.parse("2020-01-01 05:30:00+0530"), 1_577_836_800)
        XCTAssertEqual(f.parse("2020-01-01 05:30:00+05:30"), 1_577_836_800)
        XCTAssertEqual(f.parse("2019-12-31 19:00:00-05"), 1_577_836_800)
        XCTAssertEqual(f.parse("2020-01-01 00:00:00Z"), 1_577_836_800)
        XCTAssertNil(f.parse("2020-01-01 00:00:00+2400"))
        XCTAssertNil(f.parse("2020-01-01 05:00:00+05:"), "a colon takes two minute digits")
        XCTAssertNil(f.parse("2020-01-01 05:00:00+05:3"))
        // A fraction reads as ISO 8601 reads it: the same Double.
        let g = try TimeFormat("%d/%m/%Y %H:%M:%S.%f")
        XCTAssertEqual(g.parse("02/02/2008 15:36:08.123456"), ISO8601.parse("2008-02-02T15:36:08.123456Z"))
        // Names in any case, full or three letters; AM/PM in any case; blanks around the field.
        let h = try TimeFormat("%b %d %Y %I:%M %p")
        XCTAssertEqual(h.parse("  JANUARY 1 2020 12:00 am\r"), 1_577_836_800)
        XCTAssertEqual(h.parse("jan 1 2020 12:00 PM"), 1_577_880_000)
        XCTAssertEqual(h.parse("Sep 30 2020 1:05 pm"), ISO8601.parse("2020-09-30T13:05:00Z"))
        // Chicago's taxi trips.
        let chicago = try TimeFormat("%m/%d/%Y %I:%M:%S %p")
        XCTAssertEqual(chicago.parse("01/01/2020 12:00:00 AM"), 1_577_836_800)
        XCTAssertEqual(chicago.parse("12/31/2019 11:59:59 PM"), 1_577_836_799)
    }

    func testTimesThatDoNotExistAreRefused() throws {
        let us = try TimeFormat("%m/%d/%Y %I:%M:%S %p")
        for bad in [
            "02/30/2021 01:00:00 AM", "02/29/2100 01:00:00 AM", "13/01/2020 01:00:00 AM", "01/01/2020 13:00:00 PM",
            "01/01/2020 00:00:00 AM", "01/01/2020 01:60:00 AM", "01/01/2020 01:00:61 AM", "01/01/2020 01:00:00 XM",
            "01/01/2020 01:00:00", "01/01/2020 01:00:00 AM x", "1/1/20 01:00:00 AM", "", "01-01-2020 01:00:00 AM",
            "Jan/01/2020 01:00:00 AM", "001/01/2020 01:00:00 AM",
        ] {
            XCTAssertNil(us.parse(bad), bad)
        }
        XCTAssertNotNil(us.parse("02/29/2000 01:00:00 AM"))
        XCTAssertNotNil(us.parse("1/2/2020 1:00:00 AM"), "one-digit fields")
        let names = try TimeFormat("%d %b %Y")
        XCTAssertNil(names.parse("01 Ja 2020"))
        XCTAssertNil(names.parse("01 Janu 2020"), "neither the full name nor three letters")
        XCTAssertNil(names.parse("01 Janx 2020"))
        XCTAssertEqual(names.parse("01 Sep 2020"), ISO8601.parse("2020-09-01"))
        // Three letters followed by a letter the full name does not go on with.
        XCTAssertEqual(try TimeFormat("%a%b %d %Y").parse("MonJan 06 2020"), ISO8601.parse("2020-01-06"))
        XCTAssertEqual(try TimeFormat("%d%bx%Y").parse("06Janx2020"), ISO8601.parse("2020-01-06"))
        // Fields with no separator between them must be zero-padded.
        let compact = try TimeFormat("%Y%m%d %H%M%S")
        XCTAssertEqual(compact.parse("20200101 093000"), ISO8601.parse("2020-01-01T09:30:00Z"))
        XCTAssertNil(compact.parse("20200101 93000"))
    }

    /// README: "a blank matches any run of blanks", also a run of blanks in the pattern
    /// (coverage audit: a pattern with two blanks in a row had no test), and, as in
    /// `strptime`, no blank at all; a letter is no blank.
    func testARunOfBlanksInThePatternMatchesAnyRunOfBlanks() throws {
        let f = try TimeFormat("%Y-%m-%d  \t %H:%M")
        let want = 1_577_934_240.0  // 2020-01-02T03:04:00Z
        for text in ["2020-01-02 03:04", "2020-01-02     03:04", "2020-01-02\t03:04", "2020-01-02 \t 03:04"] {
            XCTAssertEqual(f.parse(text), want, text.debugDescription)
        }
        XCTAssertEqual(f.parse("2020-01-0203:04"), want)
        XCTAssertNil(f.parse("2020-01-02x03:04"))
    }

    func testPatternsThatCannotBeReadAreRefusedWithTheReason() {
        func reason(_ pattern: String) -> String? {
            do {
                _ = try TimeFormat(pattern)
                return nil
            } catch {
                return error.reason
            }
        }
        XCTAssertEqual(reason("%H:%M"), "%H:%M: a time needs a year (%Y or %y), a month (%m or %b) and a day (%d)")
        XCTAssertEqual(reason("%Y-%m-%d %I:%M"), "%Y-%m-%d %I:%M: %I and %p go together")
        XCTAssertEqual(reason("%Y-%m-%d %Q"), "%Y-%m-%d %Q: %Q is no directive this reader knows")
        XCTAssertEqual(reason("%Y-%m-%d %"), "%Y-%m-%d %: a % ends the pattern")
        XCTAssertEqual(reason("%Y-%m-%d %Y"), "%Y-%m-%d %Y: a field is given twice")
        XCTAssertEqual(reason("%F %H %T"), "%F %H %T: a field is given twice")
        // An hour of the day and an hour of the clock are one field (their kinds differ).
        XCTAssertEqual(reason("%F %H %I %p"), "%F %H %I %p: a field is given twice")
        XCTAssertEqual(reason("%F %M"), "%F %M: minutes need an hour, and seconds a minute")
        XCTAssertEqual(reason("%F %H:%M.%f"), "%F %H:%M.%f: %f needs %S")
        XCTAssertEqual(reason("%F %é"), "%F %é: %é is no directive this reader knows")
        XCTAssertNil(reason("%F"))
        XCTAssertNil(reason("%%%F"))
    }

    /// The reader takes the layout for CSV and NDJSON, refuses other times with the layout
    /// named, and no longer takes epoch seconds or ISO 8601 for that field.
    func testReaderReadsTheLayoutAndNamesItWhenALineDoesNotMatch() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("timeformat-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let csv = dir.appendingPathComponent("taxi.csv").path
        try """
            Taxi ID,Trip Start Timestamp,lon,lat
            t1,01/01/2020 12:15:00 AM,-87.63,41.88
            t2,2020-01-01T00:15:00Z,-87.63,41.88
            t3,1577837700,-87.63,41.88
            t4,13/01/2020 12:15:00 AM,-87.63,41.88

            """.write(toFile: csv, atomically: true, encoding: .utf8)
        let format = try TimeFormat("%m/%d/%Y %I:%M:%S %p")
        let reader = try PositionReader(path: csv, fields: [.device: "Taxi ID", .time: "Trip Start Timestamp"], timeFormat: format)
        var batch: [Position] = []
        var errors: [PositionLineError] = []
        while try reader.read(limit: 100, into: &batch, errors: &errors) {}
        XCTAssertEqual(batch.map(\.device), ["t1"])
        XCTAssertEqual(batch.map(\.time), [1_577_837_700])
        XCTAssertEqual(errors.map(\.line), [3, 4, 5])
        XCTAssertEqual(errors.first?.reason, "time \"2020-01-01T00:15:00Z\" does not match the time format %m/%d/%Y %I:%M:%S %p")
        let ndjson = dir.appendingPathComponent("fixes.ndjson").path
        try """
            {"device":"a","time":"31.12.2019 23:59","lon":1,"lat":2}
            {"device":"b","time":1577836740,"lon":1,"lat":2}

            """.write(toFile: ndjson, atomically: true, encoding: .utf8)
        let r2 = try PositionReader(path: ndjson, timeFormat: try TimeFormat("%d.%m.%Y %H:%M"))
        batch = []
        errors = []
        while try r2.read(limit: 100, into: &batch, errors: &errors) {}
        XCTAssertEqual(batch.map(\.time), [1_577_836_740])
        XCTAssertEqual(errors.map(\.line), [2])
    }

    /// `--time-format` in eval, contains and nearest: the same output as the ISO 8601 file;
    /// a bad pattern is a usage error before anything is read.
    func testCLIReadsTheLayout() throws {
        let fences = try CLI.temp(self, "fences.geojson", CLI.fences)
        let us = try CLI.temp(self, "us.csv", "device,time,lon,lat\nv1,01/01/2020 12:00:00 AM,0,0\nv1,01/01/2020 12:01:00 AM,0.03,0.01\n")
        let iso = try CLI.temp(self, "iso.csv", "device,time,lon,lat\nv1,2020-01-01T00:00:00Z,0,0\nv1,2020-01-01T00:01:00Z,0.03,0.01\n")
        for command in ["eval", "contains", "nearest"] {
            let a = try CLI.run([command, "--fences", fences, "--positions", us, "--time-format", "%m/%d/%Y %I:%M:%S %p"])
            let b = try CLI.run([command, "--fences", fences, "--positions", iso])
            XCTAssertEqual(a.status, 0, a.err)
            XCTAssertEqual(a.out, b.out, command)
            XCTAssertFalse(a.out.isEmpty, command)
        }
        let bad = try CLI.run(["eval", "--fences", fences, "--positions", us, "--time-format", "%m/%d %H"])
        XCTAssertEqual(bad.status, 2, bad.err)
        XCTAssertTrue(bad.err.contains("--time-format: %m/%d %H: a time needs a year"), bad.err)
        let unmatched = try CLI.run(["eval", "--fences", fences, "--positions", iso, "--time-format", "%m/%d/%Y %H:%M"])
        XCTAssertEqual(unmatched.status, 1, unmatched.err)
        XCTAssertTrue(unmatched.err.contains("does not match the time format %m/%d/%Y %H:%M"), unmatched.err)
    }

    /// Epoch numbers in other units (`%s`, `%s%3N`, `%s%6N`, `%s%9N`, as GNU `date` writes
    /// them): a count of milliseconds gives the very Double of the same time written in
    /// seconds with three decimals (the oracle: `NumberParser` on that text), over 20,000
    /// random instants in the years 1-9999 and 1970-2100; microseconds and nanoseconds agree
    /// to a microsecond; `%s` is epoch seconds; the forms are refused in a layout.
    func testEpochUnitsAreTheSameTimeInSeconds() throws {
        func parse(_ f: TimeFormat, _ text: String) -> Double? {
            var t = text
            return t.withUTF8 { f.parse($0) }
        }
        func seconds(_ text: String) -> Double? {
            var t = text
            return t.withUTF8 { NumberParser.parseDouble($0) }
        }
        let ms = try TimeFormat("%s%3N"), us = try TimeFormat("%s%6N"), ns = try TimeFormat("%s%9N"), s = try TimeFormat("%s")
        var rng = SplitMix64(seed: 38)
        for k in 0..<20_000 {
            let lo = k % 2 == 0 ? -62_135_596_800_000 : 0, hi = k % 2 == 0 ? 253_402_300_799_999 : 4_102_444_800_000
            let count = rng.int(lo...hi)
            let frac = abs(count) % 1000
            let decimal = "\(count < 0 ? "-" : "")\(abs(count) / 1000).\(String(repeating: "0", count: 3 - String(frac).count))\(frac)"
            let expected = try XCTUnwrap(seconds(decimal))
            XCTAssertEqual(parse(ms, "\(count)"), expected, "\(count) ms against \(decimal)")
            XCTAssertEqual(parse(s, decimal), expected)
            // Counts past 2^53 and 2^63 too: the same Double.
            XCTAssertEqual(parse(us, "\(count)000"), expected)
            XCTAssertEqual(parse(ns, "\(count)000000"), expected)
            XCTAssertEqual(parse(ns, "\(count)000000.0"), expected)
        }
        XCTAssertEqual(parse(ms, " 1700000000123\r"), 1_700_000_000.123)
        XCTAssertEqual(parse(ms, "1700000000123.5"), 1_700_000_000.1235)
        XCTAssertEqual(parse(ms, "+5"), 0.005)
        XCTAssertEqual(parse(ms, "-5"), -0.005)
        XCTAssertEqual(parse(ms, ".5"), 0.0005)
        XCTAssertEqual(parse(ms, "1.7e12"), 1_700_000_000)
        XCTAssertEqual(parse(ns, "1"), 1e-9)
        for bad in ["", "-", ".", "1.2.3", "12a", "0x10", "1 2"] { XCTAssertNil(parse(ms, bad), bad) }
        XCTAssertNil(parse(ms, "2023-11-14T22:13:20Z"))
        for bad in ["%F %s", "%s %F", "%s%4N%F", "%F %T.%3N", "%N", "%s%N"] {
            XCTAssertThrowsError(try TimeFormat(bad), bad) { error in
                XCTAssertTrue("\(error)".contains("%s and %N go alone"), "\(bad): \(error)")
            }
        }
        XCTAssertNoThrow(try TimeFormat("%%s %F"))
        // `date +%s.%N` and its shorter widths write seconds with a fraction: read as `%s`.
        for dotted in ["%s.%N", "%s.%3N", "%s.%6N", "%s.%9N"] {
            let f = try TimeFormat(dotted)
            XCTAssertEqual(f.epochDigits, 0, dotted)
            XCTAssertEqual(parse(f, "1700000000.123456789"), 1_700_000_000.123456789, dotted)
            XCTAssertEqual(parse(f, "1700000000.123"), 1_700_000_000.123, dotted)
        }
        for bad in ["%s.%4N", "%s.%N%F", "%s,%N"] {
            XCTAssertThrowsError(try TimeFormat(bad), bad)
        }
    }

    /// `--time-format %s%3N` in eval: the same events as the file with times in seconds.
    func testCLIReadsEpochMilliseconds() throws {
        let fences = try CLI.temp(self, "fences.geojson", CLI.fences)
        let ms = try CLI.temp(self, "ms.csv", "device,time,lon,lat\nv1,1577836800123,0,0\nv1,1577836860456,0.03,0.01\nv1,1577836920789,0,0\n")
        let s = try CLI.temp(self, "s.csv", "device,time,lon,lat\nv1,1577836800.123,0,0\nv1,1577836860.456,0.03,0.01\nv1,1577836920.789,0,0\n")
        let a = try CLI.run(["eval", "--fences", fences, "--positions", ms, "--time-format", "%s%3N"])
        let b = try CLI.run(["eval", "--fences", fences, "--positions", s])
        XCTAssertEqual(a.status, 0, a.err)
        XCTAssertEqual(a.out, b.out)
        XCTAssertTrue(a.out.contains("2020-01-01T00:00:00.123Z"), a.out)
        // Without it, milliseconds are years past 9999: bad lines, named.
        let c = try CLI.run(["eval", "--fences", fences, "--positions", ms])
        XCTAssertEqual(c.status, 1, c.err)
    }

    /// A count with an exponent is the same time as the seconds text too (the point moved in
    /// the mantissa, the exponent kept): Python writes float nanoseconds as `1.7e+18`.
    func testEpochCountsWithAnExponentAreTheSameTimeInSeconds() throws {
        func parse(_ f: TimeFormat, _ text: String) -> Double? {
            var t = text
            return t.withUTF8 { f.parse($0) }
        }
        let ms = try TimeFormat("%s%3N"), ns = try TimeFormat("%s%9N")
        XCTAssertEqual(parse(ns, "2.789945596454668e+18"), 2_789_945_596.454668)
        XCTAssertEqual(parse(ns, "1.3797067326718E+18"), 1_379_706_732.6718)
        XCTAssertEqual(parse(ms, "4e-7"), 4e-10)
        XCTAssertEqual(parse(ms, "-5.e3"), -5)
        XCTAssertEqual(parse(ms, "1e310"), 1e307)
        for bad in ["1e", "1e+", ".e3", "e3", "1e3e3", "1e3.5", "1.2.3e3"] { XCTAssertNil(parse(ms, bad), bad) }
    }

    /// With an epoch pattern, a count still too large names the unit it reads as, not the
    /// pattern already given.
    func testOutOfRangeCountNamesTheUnitPastThePatternGiven() throws {
        let fences = try CLI.temp(self, "fences.geojson", CLI.fences)
        let us = try CLI.temp(self, "us.csv", "device,time,lon,lat\nv1,1700000000123456,0,0\nv1,1700000000123456789,0,0\n")
        let a = try CLI.run(["eval", "--fences", fences, "--positions", us, "--time-format", "%s%3N", "--max-bad", "1"])
        XCTAssertTrue(a.err.contains("line 2: time 1700000000123.456 is outside the years 1-9999 (a count of microseconds, not milliseconds: --time-format %s%6N reads them)"), a.err)
        XCTAssertTrue(a.err.contains("(a count of nanoseconds, not milliseconds: --time-format %s%9N reads them)"), a.err)
        XCTAssertFalse(a.err.contains("%s%3N reads them"), a.err)
        let b = try CLI.run(["eval", "--fences", fences, "--positions", us, "--time-format", "%s%9N", "--max-bad", "1"])
        XCTAssertEqual(b.status, 0, b.err)
        let c = try CLI.run(["eval", "--fences", fences, "--positions", us, "--time-format", "%s%6N", "--max-bad", "1"])
        XCTAssertTrue(c.err.contains("(a count of nanoseconds, not microseconds: --time-format %s%9N reads them)"), c.err)
    }

    /// Damaged fields (bytes replaced, inserted, cut) never trap and give nil or a finite time.
    func testDamagedFieldsNeverTrap() throws {
        let cases: [(String, String)] = [
            ("%m/%d/%Y %I:%M:%S %p", "12/31/2019 11:59:59 PM"), ("%a, %d %B %Y %T %z", "Tue, 31 December 2019 23:59:59 +05:30"),
            ("%F %T.%f", "2019-12-31 23:59:59.123456789"), ("%e %b %y %R", " 5 Sep 19 07:05"),
        ]
        var rng = SystemRandomNumberGenerator()
        let alphabet = Array("0123456789 :/.-+ZzAaPpMmJjSsTt,%\r\t".utf8) + [0, 0xFF]
        for (pattern, sample) in cases {
            let format = try TimeFormat(pattern)
            XCTAssertNotNil(format.parse(sample), pattern)
            for _ in 0..<5000 {
                var bytes = Array(sample.utf8)
                for _ in 0..<Int.random(in: 1...4, using: &rng) {
                    let k = Int.random(in: 0...bytes.count, using: &rng)
                    switch Int.random(in: 0..<3, using: &rng) {
                    case 0 where k < bytes.count: bytes[k] = alphabet.randomElement(using: &rng)!
                    case 1: bytes.insert(alphabet.randomElement(using: &rng)!, at: k)
                    default: bytes.removeSubrange(k..<min(bytes.count, k + Int.random(in: 1...6, using: &rng)))
                    }
                }
                let t = bytes.withUnsafeBufferPointer { format.parse($0) }
                if let t { XCTAssertTrue(t.isFinite, "\(pattern): \(bytes)") }
            }
        }
    }
}
