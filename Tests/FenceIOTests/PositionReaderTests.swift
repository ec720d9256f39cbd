import FenceEngine
@testable import FenceIO
import Foundation
import SeededRandom
import XCTest

final class PositionReaderTests: XCTestCase {
    /// Everything `PositionReader` reads of these bytes as a file (written to a temporary one).
    static func readFile(_ bytes: [UInt8], format: PositionReader.Format? = nil, maxLine: Int = 1 << 20) throws -> (
        [Position], [PositionLineError]
    ) {
        let path = NSTemporaryDirectory() + "positions-\(UUID().uuidString)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try PositionReader(path: path, format: format, maxLineBytes: maxLine).readAll()
    }

    func read(_ text: String, format: PositionReader.Format? = nil, maxLine: Int = 1 << 20) throws -> ([Position], [PositionLineError]) {
        try Self.readFile(Array(text.utf8), format: format, maxLine: maxLine)
    }

    func read(bytes: [UInt8], format: PositionReader.Format? = nil) throws -> ([Position], [PositionLineError]) {
        try Self.readFile(bytes, format: format)
    }

    func testCSVWithAISColumnNamesAndISOTimes() throws {
        let (p, e) = try read("MMSI,BaseDateTime,LON,LAT\n367466930,2020-12-01T04:49:45,-74.0315,40.41692\n1,1606798185.5,1e1,-2.5\n")
        XCTAssertEqual(e, [])
        XCTAssertEqual(p.count, 2)
        XCTAssertEqual(p[0], Position(device: "367466930", time: 1_606_798_185, lon: -74.0315, lat: 40.41692))
        XCTAssertEqual(p[1].time, 1_606_798_185.5)
        XCTAssertEqual(p[1].lon, 10)
    }

    func testAliasesAccuracyCoordAndQuotes() throws {
        let csv = "device_id;timestamp;lng;latitude;accuracy;coord\n\"a;\"\"b\";2020-12-01 00:00:00Z;116.4;39.9;12.5;gcj02\nc;0;1;2;;\n"
        let (p, e) = try read(csv)
        XCTAssertEqual(e, [])
        XCTAssertEqual(p.map(\.device), ["a;\"b", "c"])
        XCTAssertEqual(p[0].accuracy, 12.5)
        XCTAssertEqual(p[0].coord, .gcj02)
        XCTAssertNil(p[1].accuracy)
        XCTAssertEqual(p[1].coord, .wgs84)
    }

    func testNDJSON() throws {
        let text = """
            {"device":"v1","time":"2020-12-01T00:00:01.250Z","lon":1.5,"lat":2,"accuracy":null,"extra":{"a":[1,2]}}
            {"mmsi":367466930,"ts":1606780800,"longitude":-74,"latitude":40.5}
            {"device":"v\\u00e9\\n","time":0,"lon":0,"lat":0}
            """
        let (p, e) = try read(text)
        XCTAssertEqual(e, [])
        XCTAssertEqual(p.count, 3)
        XCTAssertEqual(p[0].time, 1_606_780_801.25)
        XCTAssertEqual(p[1].device, "367466930")
        XCTAssertEqual(p[2].device, "vé\n")
    }

    /// A key given twice in an NDJSON line (names match without case) makes a bad line: JSON
    /// readers disagree on which one counts, and this one took the first where most take the
    /// last (independent audit). Two different names of one field go by rank, as documented.
    func testNDJSONKeyGivenTwiceIsABadLine() throws {
        let text = """
            {"device":"a","time":1,"lon":1,"lat":2,"lon":3}
            {"device":"b","device":"c","time":1,"lon":1,"lat":2}
            {"device":"d","time":1,"lon":1,"lat":2,"LAT":5}
            {"device":"e","time":1,"lng":9,"lon":1,"lat":2,"longitude":7}
            {"device":"f","time":1,"lon":1,"lat":2,"extra":1,"extra":2}
            {"id":"x","id":"y","device":"g","time":1,"lon":1,"lat":2}
            """
        let (p, e) = try read(text)
        XCTAssertEqual(p.map(\.device), ["e", "f", "g"])
        XCTAssertEqual(p.first?.lon, 1)
        XCTAssertEqual(e.map(\.line), [1, 2, 3])
        XCTAssertEqual(e.map(\.reason), [#"key "lon" appears twice"#, #"key "device" appears twice"#, #"key "LAT" appears twice"#])
    }

    /// Bad lines are reported with their number and reason, skipped, and the rest still load.
    func testBadLinesAreReportedAndSkipped() throws {
        let csv = """
            device,time,lon,lat
            ok,0,1,1
            nan,0,NaN,1
            lat91,0,1,91
            short,0,1
            badtime,yesterday,1,1
            ,0,1,1
            long,0,1,1,1
            ok2,1,2,2
            millis,1700000000000,1,1
            """
        let (p, e) = try read(csv)
        XCTAssertEqual(p.map(\.device), ["ok", "ok2"])
        XCTAssertEqual(e.map(\.line), [3, 4, 5, 6, 7, 8, 10])
        XCTAssertTrue(e[6].reason.contains("outside the years 1-9999"), e[6].reason)
        XCTAssertTrue(e[0].reason.contains("lon"), e[0].reason)
        XCTAssertTrue(e[1].reason.contains("lat 91"), e[1].reason)
        XCTAssertTrue(e[3].reason.contains("yesterday"), e[3].reason)
    }

    /// With `recordsLines`, each position comes with its own line number, past blank and bad
    /// lines and across reads (what `fence publish` names a backward fix by).
    func testPositionLinesAreExact() throws {
        let csv = "device,time,lon,lat\na,0,1,1\n\nbad,0,1\n  \nb,1,2,2\nc,2,3,3\n\nd,3,4,4\n"
        let path = NSTemporaryDirectory() + "positions-\(UUID().uuidString)"
        try Data(csv.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let reader = try PositionReader(path: path)
        reader.recordsLines = true
        var positions: [Position] = []
        var errors: [PositionLineError] = []
        var lines: [Int] = []
        while true {
            let more = try reader.read(limit: 2, into: &positions, errors: &errors)
            lines += reader.positionLines
            reader.positionLines.removeAll()
            if !more { break }
        }
        XCTAssertEqual(positions.map(\.device), ["a", "b", "c", "d"])
        XCTAssertEqual(lines, [2, 6, 7, 9])
        XCTAssertEqual(errors.map(\.line), [4])
    }

    /// A coordinate that is no number is named as written, or as the JSON value it is
    /// (before, `null` and arrays were shown as "?").
    func testNonNumericCoordinatesAreNamedInTheMessage() throws {
        let (p, e) = try read(
            """
            {"device":"a","time":0,"lon":null,"lat":1}
            {"device":"b","time":0,"lon":1,"lat":[1]}
            {"device":"c","time":0,"lon":"x","lat":1}
            {"device":"d","time":0,"lon":true,"lat":1}

            """, format: .ndjson)
        XCTAssertEqual(p, [])
        XCTAssertEqual(
            e.map(\.reason),
            ["lon null is not a number", "lat an object or array is not a number", "lon \"x\" is not a number", "lon true is not a number"])
        let (_, csv) = try read("device,time,lon,lat\na,0,abc,1\nb,0,1e400,1\nc,0,1,-2E+999\nd,0,infinity,1\n")
        XCTAssertEqual(
            csv.map(\.reason),
            ["lon \"abc\" is not a number", "lon \"1e400\" is out of range (beyond any double)",
             "lat \"-2E+999\" is out of range (beyond any double)", "lon \"infinity\" is not a number"])
        let (_, json) = try read(#"{"device":"a","time":0,"lon":1e400,"lat":1}"# + "\n", format: .ndjson)
        XCTAssertEqual(json.map(\.reason), ["lon \"1e400\" is out of range (beyond any double)"])
    }

    func testLineOverTheLimitIsSkipped() throws {
        let long = String(repeating: "x", count: 300_000)
        let (p, e) = try read("device,time,lon,lat\na,0,1,1\n\(long),0,1,1\nb,0,1,1\n", maxLine: 100_000)
        XCTAssertEqual(p.map(\.device), ["a", "b"])
        XCTAssertEqual(e.map(\.line), [3])
    }

    func testHeaderWithoutRequiredColumnsIsRefused() throws {
        XCTAssertThrowsError(try read("name,when,x\na,0,1\n")) { error in
            XCTAssertTrue("\(error)".contains("lacks"), "\(error)")
        }
        // Lines ended by CR alone read as one header line: said so (it "lacked lat").
        XCTAssertThrowsError(try read("device,time,lon,lat\ra,0,0.5,0.5\rb,0,0.5,0.5\r")) { error in
            XCTAssertTrue("\(error)".contains("lines end in a CR alone, not LF or CRLF: convert them, e.g. tr '\\r' '\\n' < FILE"), "\(error)")
        }
        // A CRLF header is a header.
        XCTAssertEqual(try read("device,time,lon,lat\r\na,0,0.5,0.5\r\n").0.count, 1)
    }

    /// JSON that is not one object per line is refused as a whole, saying what it is and how
    /// to convert it (an outside audit: a JSON array's `[` was "the CSV header", a
    /// pretty-printed object a bad line per line, GeoJSON "no device").
    func testJSONDocumentsAreNamedWithTheirConversion() throws {
        let cases: [(String, String)] = [
            ("[\n{\"device\":\"a\",\"time\":0,\"lon\":1,\"lat\":2}\n]\n", "a JSON array"),
            ("[{\"device\":\"a\",\"time\":0,\"lon\":1,\"lat\":2}]\n", "a JSON array"),
            ("{\n  \"device\": \"a\",\n  \"time\": 0\n}\n", "spread over lines"),
            (#"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"device":"a","time":0},"geometry":{"type":"Point","coordinates":[1,2]}}]}"# + "\n", "jq -c '.features[] | {device"),
            (#"{"type":"Feature","properties":{"device":"a","time":0},"geometry":{"type":"Point","coordinates":[1,2]}}"# + "\n", "jq -c '{device"),
            // A FeatureCollection one feature a line (as Data/ports.geojson; it was a bad line
            // a line), and objects opened over lines as pretty-printers write them.
            (#"{"type":"FeatureCollection","features":["# + "\n" + #"{"type":"Feature","properties":{"device":"a","time":0},"geometry":{"type":"Point","coordinates":[1,2]}},"# + "\n]}\n",
             "jq -c '.features[] | {device"),
            ("{ \"fix\": {\n \"device\":\"a\",\"time\":0,\"lon\":0.5,\"lat\":0.5}}\n", "spread over lines"),
            // Brackets inside strings are not counted: "}}}" closes nothing.
            ("{\"note\":\"}}}\",\"fixes\":[\n{\"device\":\"a\",\"time\":0,\"lon\":0.5,\"lat\":0.5}]}\n", "spread over lines"),
            ("{\"device\":\"a\", \"track\": [\n{\"time\":0,\"lon\":0.5,\"lat\":0.5}]}\n", "spread over lines"),
        ]
        for (text, said) in cases {
            XCTAssertThrowsError(try read(text), text) { error in
                let reason = (error as? FenceError)?.reason ?? "\(error)"
                XCTAssertTrue(reason.contains(said) && reason.contains("convert it, e.g. jq"), reason)
            }
        }
        // NDJSON and CSV as ever, also NDJSON whose values hold such words, and a first line
        // that is a position whatever else it holds (a review found these refused: the check
        // ran before the line was read).
        for line in [
            #"{"device":"Feature","time":0,"lon":1,"lat":2,"note":"[geometry]"}"#,
            #"{"device":"d","time":1,"lon":1,"lat":2,"kind":"Feature","geometry":"none"}"#,
            #"{"type":"Feature","device":"d","time":1,"lon":1,"lat":2,"geometry":{"type":"Point","coordinates":[1,2]},"properties":{}}"#,
        ] {
            let (ok, bad) = try read(line + "\n" + line.replacingOccurrences(of: #""time":"#, with: #""time":1"#) + "\n")
            XCTAssertEqual(ok.count, 2, line)
            XCTAssertEqual(bad.count, 0, line)
        }
        // A first line that is bad but not a document's start is one bad line: cut short
        // (unbalanced, not ending at a bracket or comma), or closed, or with a bracket only in
        // a string.
        for first in [
            #"{"device":"a","ti"#, #"{"device":"a","time":0,"lon":1}"#, #"{"device":"a{[","time":0,"lon":1},"#, #"{"device":"a","time":0,"lon":1,"#,
            #"{"device":"a","time":0,"lon":1,"lat":95,"layer":"FeatureCollection"}"#,
        ] {
            let (ok, bad) = try read(first + "\n" + #"{"device":"b","time":1,"lon":1,"lat":2}"# + "\n")
            XCTAssertEqual(ok.count, 1, first)
            XCTAssertEqual(bad.count, 1, first)
        }
        let bracketed = try CLI.temp(self, "bracketed.csv", "[device],[time],[lon],[lat]\nd,0,1,2\n")
        let fences = try CLI.temp(self, "f.geojson", CLI.fences)
        let r = try CLI.run([
            "contains", "--fences", fences, "--positions", bracketed, "--position-fields", "device=[device],time=[time],lon=[lon],lat=[lat]",
        ])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertEqual(r.out.split(separator: "\n").count, 1, r.out)
    }

    /// UTF-16 text (with its byte-order mark) is named, with the command that converts it,
    /// not "binary data" (an outside audit).
    /// The first-line check counts brackets as JSON does (coverage audit: closing brackets and
    /// escaped quotes had never been counted in a test): an escaped quote does not end a
    /// string, a closing bracket closes, a byte-order mark before a JSON array is passed over.
    /// A first line whose brackets all close is a bad line, not a document.
    func testFirstLineBracketsAreCountedAsJSON() throws {
        let fix = #"{"device":"a","time":0,"lon":1,"lat":2}"#
        for (text, said) in [
            (#"{"note":"\"{[","fixes":["# + "\n" + fix + "]}\n", "spread over lines"),
            (#"{"meta":[1,2],"fixes":["# + "\n" + fix + "]}\n", "spread over lines"),
            ("\u{FEFF}[\n" + fix + "\n]\n", "a JSON array"),
        ] {
            XCTAssertThrowsError(try read(text), text) { error in
                let reason = (error as? FenceError)?.reason ?? "\(error)"
                XCTAssertTrue(reason.contains(said) && reason.contains("convert it, e.g. jq"), reason)
            }
        }
        // Read as NDJSON, the first line reaches the check with its byte-order mark.
        XCTAssertThrowsError(try read("\u{FEFF}[" + fix + ",\n" + fix + "]\n", format: .ndjson)) { error in
            XCTAssertTrue(((error as? FenceError)?.reason ?? "").hasPrefix("the input is a JSON array: "), "\(error)")
        }
        let (p, e) = try read(#"{"device":"a","time":0,"lon":1,"lat":2}}["# + "\n" + fix + "\n", format: .ndjson)
        XCTAssertEqual(p.map(\.device), ["a"])
        XCTAssertEqual(e.map(\.line), [1])
    }

    func testUTF16IsNamed() throws {
        for (bom, name) in [([UInt8(0xFF), 0xFE], "FF FE"), ([UInt8(0xFE), 0xFF], "FE FF")] {
            var bytes = bom
            for u in "device,time,lon,lat\na,0,1,2\n".utf16 {
                let pair = [UInt8(u & 0xFF), UInt8(u >> 8)]
                bytes += bom[0] == 0xFF ? pair : pair.reversed()
            }
            XCTAssertThrowsError(try read(bytes: bytes)) { error in
                let reason = (error as? FenceError)?.reason ?? "\(error)"
                XCTAssertTrue(reason.hasPrefix("UTF-16 text (a byte-order mark \(name))") && reason.contains("iconv -f UTF-16 -t UTF-8"), reason)
            }
        }
        XCTAssertThrowsError(try read(bytes: [0x61, 0, 0x62, 0x0A])) { error in
            XCTAssertTrue("\(error)".contains("binary data (NUL byte): this is not a CSV or NDJSON file"), "\(error)")
        }
    }

    func testISO8601RoundTripAndZones() throws {
        XCTAssertEqual(ISO8601.parse("1970-01-01T00:00:00Z"), 0)
        XCTAssertEqual(ISO8601.parse("2020-12-01T01:00:00+01:00"), 1_606_780_800)
        XCTAssertEqual(ISO8601.parse("2020-02-29"), 1_582_934_400)
        XCTAssertNil(ISO8601.parse("2021-02-29"))
        XCTAssertNil(ISO8601.parse("2020-12-01T00:00:00 junk"))
        // BigQuery / Hive text times: ` UTC` (or ` GMT`) for Z, the fraction only when not
        // zero, so no one --time-format reads them (an outside audit).
        XCTAssertEqual(ISO8601.parse("2020-01-01 00:00:00 UTC"), 1_577_836_800)
        XCTAssertEqual(ISO8601.parse("2020-01-01 00:00:00.25 UTC"), 1_577_836_800.25)
        XCTAssertEqual(ISO8601.parse("2020-01-01T00:00:00UTC"), 1_577_836_800)
        XCTAssertEqual(ISO8601.parse("2020-01-01 00:00:00 gmt"), 1_577_836_800)
        for bad in ["2020-01-01 00:00:00  UTC", "2020-01-01 00:00:00 UTC+1", "2020-01-01 00:00:00 CET", "2020-01-01 UTC", "2020-01-01 00:00:00 UT"] {
            XCTAssertNil(ISO8601.parse(bad), bad)
        }
        XCTAssertEqual(ISO8601.format(1_606_780_801.2506), "2020-12-01T00:00:01.251Z")
        var rng = UInt64(12345)
        for _ in 0..<2000 {
            rng = rng &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let t = Double(rng >> 33) / 1000 - 1_000_000
            let ms = (t * 1000).rounded() / 1000
            XCTAssertEqual(ISO8601.parse(ISO8601.format(t))!, ms, accuracy: 1e-6)
        }
    }

    /// ISO 8601's basic format (`20080202T153608Z`) reads as the extended one, over random
    /// instants, fractions and zones; a basic date with an extended time (or the reverse) is
    /// refused, as ISO 8601 has it.
    func testISO8601BasicFormatEqualsExtended() throws {
        XCTAssertEqual(ISO8601.parse("20080202T153608Z"), ISO8601.parse("2008-02-02T15:36:08Z"))
        XCTAssertEqual(ISO8601.parse("20080202T1536"), ISO8601.parse("2008-02-02T15:36"))
        XCTAssertEqual(ISO8601.parse("20080202"), ISO8601.parse("2008-02-02"))
        XCTAssertEqual(ISO8601.parse("20080202 153608.25-0130"), ISO8601.parse("2008-02-02 15:36:08.25-01:30"))
        XCTAssertEqual(ISO8601.parse("20080202T240000Z"), ISO8601.parse("2008-02-03T00:00:00Z"))
        for mixed in ["20080202T15:36:08Z", "2008-02-02T153608Z", "2008-0202", "200802-02", "20080230T000000Z", "20080202T2400001Z",
                      "20080202T15360Z", "20080202T153608.Z", "20080202T246000", "20080202T153608+05:30"] {
            XCTAssertNil(ISO8601.parse(mixed), mixed)
        }
        var rng = SplitMix64(seed: 8601)
        for _ in 0..<3000 {
            let t = Double(rng.int(-2_000_000_000...4_000_000_000))
            let extended = ISO8601.format(t)  // YYYY-MM-DDThh:mm:ss.fffZ
            var basic = extended.replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: "")
            var zoned = extended
            if rng.chance(0.5) {
                let sign = rng.chance(0.5) ? "-" : "+"
                let hh = rng.int(0...23), mm = rng.int(0...59)
                basic = String(basic.dropLast()) + sign + String(format: "%02d%02d", hh, mm)
                zoned = String(zoned.dropLast()) + sign + String(format: "%02d:%02d", hh, mm)
            }
            XCTAssertEqual(ISO8601.parse(basic), ISO8601.parse(zoned), "\(basic) / \(zoned)")
            XCTAssertNotNil(ISO8601.parse(basic), basic)
        }
        // Through the reader: a basic time in a CSV is a time, a bare 8-digit one epoch seconds.
        let (p, e) = try read("device,time,lon,lat\na,20080202T153608Z,1,2\nb,20080202,1,2\n")
        XCTAssertEqual(e, [])
        XCTAssertEqual(p.map(\.time), [1_201_966_568, 20_080_202])
    }

    /// An ISO 8601 time is the same Double as the same instant written as epoch seconds (the
    /// correctly rounded decimal; oracle: Foundation's Decimal, then Swift's own parse), over
    /// 1874-2096, fractions of 1-12 digits and zones. Before, fractions were summed digit by
    /// digit: "1970-01-01T00:58:57.356Z" and 3537.356 were different times, and a duplicate
    /// of a fix was not dropped.
    func testISOTimeIsTheSameDoubleAsTheEpochNumber() throws {
        XCTAssertEqual(ISO8601.parse("1970-01-01T00:58:57.356Z"), 3537.356)
        XCTAssertEqual(ISO8601.parse("1969-12-31T23:59:59.75Z"), -0.25)
        var rng = SplitMix64(seed: 8601)
        for _ in 0..<50_000 {
            let whole = rng.int(-3_000_000_000...4_000_000_000)
            let digits = rng.int(1...12)
            let fraction = String((0..<digits).map { _ in Character(String(rng.int(0...9))) })
            let offset = rng.chance(0.5) ? 0 : rng.int(-14...14) * 3600 + rng.int(0...3) * 900
            let local = whole + offset
            let days = Int((Double(local) / 86400).rounded(.down))
            let inDay = local - days * 86400
            let (y, m, d) = ISO8601.civilFromDays(days)
            func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
            let zone = offset == 0 ? "Z" : (offset > 0 ? "+" : "-") + two(abs(offset) / 3600) + ":" + two(abs(offset) % 3600 / 60)
            let text = String(format: "%04d-%@-%@T%@:%@:%@.%@%@", y, two(m), two(d), two(inDay / 3600), two(inDay % 3600 / 60), two(inDay % 60), fraction, zone)
            let exact = Decimal(whole) + Decimal(string: "0.\(fraction)")!
            let want = Double("\(exact)")!
            XCTAssertEqual(ISO8601.parse(text), want, text)
            if ISO8601.parse(text) != want { break }
        }
    }

    /// A device id that is not UTF-8 is a bad line, never repaired: the Latin-1 ids \xff, \xfe
    /// and \xfd were all read as U+FFFD, one device, whose second fix was dropped as a duplicate
    /// and whose third made a false exit (independent audit). Valid UTF-8 keeps its bytes.
    func testCSVDeviceIdThatIsNotUTF8IsABadLine() throws {
        var csv = Array("device,time,lon,lat,coord\n".utf8)
        csv += [0xFF] + Array(",100,0.5,0.5,\n".utf8)
        csv += [0xFE] + Array(",100,2,2,\n".utf8)
        csv += [0x22, 0x61, 0xFD, 0x22] + Array(",200,2,2,\n".utf8)  // "a\xfd", quoted
        csv += Array("caf\u{E9},1,1,1,\ne\u{301},1,1,1,\n".utf8)
        csv += Array("c,1,1,1,wgs".utf8) + [0xC3] + Array("\n".utf8)  // a cut two-byte sequence
        csv += Array("d,".utf8) + [0xFF] + Array(",1,1,\n".utf8)
        let (p, e) = try read(bytes: csv)
        XCTAssertEqual(p.map { Array($0.device.utf8) }, [Array("caf\u{E9}".utf8), Array("e\u{301}".utf8)])
        XCTAssertEqual(e, [
            PositionLineError(line: 2, reason: "device id is not valid UTF-8"),
            PositionLineError(line: 3, reason: "device id is not valid UTF-8"),
            PositionLineError(line: 4, reason: "device id is not valid UTF-8"),
            PositionLineError(line: 7, reason: "coord is not valid UTF-8"),
            PositionLineError(line: 8, reason: "time is not valid UTF-8"),
        ])
    }

    /// NDJSON: a string that is not UTF-8, or a `\u` escape of half a surrogate pair, in a
    /// field the position uses makes the line bad; a whole pair is one character, and such
    /// strings in other keys do not matter.
    func testNDJSONStringThatIsNotUTF8OrALoneSurrogateIsABadLine() throws {
        var text: [UInt8] = []
        text += Array(#"{"device":"a"#.utf8) + [0xFF] + Array(#"","time":0,"lon":0,"lat":0}"#.utf8) + [10]
        text += Array(#"{"device":"b\ud800","time":0,"lon":0,"lat":0}"#.utf8) + [10]
        text += Array(#"{"device":"b\udc00x\n","time":0,"lon":0,"lat":0}"#.utf8) + [10]
        text += Array(#"{"device":"b\ud800\u0041","time":0,"lon":0,"lat":0}"#.utf8) + [10]
        text += Array(#"{"device":"c","time":"2020"#.utf8) + [0xFE] + Array(#"","lon":0,"lat":0}"#.utf8) + [10]
        text += Array(#"{"device":"d","time":0,"lon":0,"lat":0,"coord":"\udfff"}"#.utf8) + [10]
        text += Array(#"{"device":"\ud83d\ude00","time":0,"lon":0,"lat":0}"#.utf8) + [10]
        text += Array(#"{"note":"\ud800"#.utf8) + [0xFF] + Array(#"","device":"ok","time":0,"lon":0,"lat":0}"#.utf8) + [10]
        let (p, e) = try read(bytes: text)
        XCTAssertEqual(p.map(\.device), ["\u{1F600}", "ok"])
        XCTAssertEqual(e, [
            PositionLineError(line: 1, reason: "device id is not valid UTF-8"),
            PositionLineError(line: 2, reason: "device id holds a lone surrogate escape \\ud800"),
            PositionLineError(line: 3, reason: "device id holds a lone surrogate escape \\udc00"),
            PositionLineError(line: 4, reason: "device id holds a lone surrogate escape \\ud800"),
            PositionLineError(line: 5, reason: "time is not valid UTF-8"),
            PositionLineError(line: 6, reason: "coord holds a lone surrogate escape \\udfff"),
        ])
    }

    /// A canonical column name wins over an alias wherever it stands, then aliases in the
    /// order `PositionField.names` lists them; before, the leftmost alias won (`id,device`
    /// read the row number as the device; independent audit).
    func testCanonicalColumnNameWinsOverAliases() throws {
        let cases: [(String, String, Position)] = [
            ("id,device,time,lon,lat", "1,ship,5,1,2", Position(device: "ship", time: 5, lon: 1, lat: 2)),
            ("x,y,device,time,lon,lat", "0.6,0.6,ship,5,3,4", Position(device: "ship", time: 5, lon: 3, lat: 4)),
            ("ts,time,device,lon,lat", "7,5,ship,1,2", Position(device: "ship", time: 5, lon: 1, lat: 2)),
            ("ACC,Accuracy,crs,coord,device,time,lon,lat", "9,3,bd09ll,gcj02,s,5,1,2",
             Position(device: "s", time: 5, lon: 1, lat: 2, accuracy: 3, coord: .gcj02)),
            // Aliases only: the earlier in the list wins; the generic id, x and t come last.
            ("id,mmsi,t,timestamp,x,lng,y,latitude", "1,367,7,5,0.6,3,0.6,4", Position(device: "367", time: 5, lon: 3, lat: 4)),
            // One name twice: the first.
            ("device,device,time,lon,lat", "a,b,5,1,2", Position(device: "a", time: 5, lon: 1, lat: 2)),
        ]
        for (header, row, want) in cases {
            let (p, e) = try read("\(header)\n\(row)\n")
            XCTAssertEqual(e, [], header)
            XCTAssertEqual(p, [want], header)
        }
        let (p, e) = try read(#"{"id":1,"x":0.6,"ts":7,"device":"ship","time":5,"lon":3,"lat":4,"device_id":"no"}"# + "\n")
        XCTAssertEqual(e, [])
        XCTAssertEqual(p, [Position(device: "ship", time: 5, lon: 3, lat: 4)])
    }

    /// Names match ignoring case and separators: a spreadsheet export (`Device ID`,
    /// `Date/Time`), Traccar's positions table (`deviceId`, `fixTime` before `deviceTime` and
    /// never `serverTime`; its row `id` loses to `deviceId`), a tracker's `IMEI`, and camel-case
    /// NDJSON keys. Two spellings of one name in an NDJSON line are one key given twice.
    func testNamesMatchIgnoringCaseAndSeparators() throws {
        let cases: [(String, String, Position)] = [
            ("\"Device ID\",\"Date/Time\",\"Latitude\",\"Longitude\",\"Horizontal Accuracy\"", "v1,2026-01-01T00:00:00Z,2,1,5",
             Position(device: "v1", time: 1_767_225_600, lon: 1, lat: 2, accuracy: 5)),
            ("id,protocol,deviceId,serverTime,deviceTime,fixTime,valid,latitude,longitude", "17,osmand,4,9,8,7,true,2,1",
             Position(device: "4", time: 7, lon: 1, lat: 2)),
            ("id,protocol,deviceId,serverTime,deviceTime,valid,latitude,longitude", "17,osmand,4,9,8,true,2,1",
             Position(device: "4", time: 8, lon: 1, lat: 2)),
            ("IMEI,GPS-Time,LON.,LAT.,coord_type", "35,3,1,2,gcj02", Position(device: "35", time: 3, lon: 1, lat: 2, coord: .gcj02)),
            ("row_id,Vehicle-ID,time,lon,lat", "1,truck,5,1,2", Position(device: "truck", time: 5, lon: 1, lat: 2)),
        ]
        for (header, row, want) in cases {
            let (p, e) = try read("\(header)\n\(row)\n")
            XCTAssertEqual(e, [], header)
            XCTAssertEqual(p, [want], header)
        }
        let (p, e) = try read(
            #"{"vehicleId":"v","fixTime":3,"Longitude":1,"lat":2,"coordType":"bd09ll"}"# + "\n"
                + #"{"device_id":"a","deviceId":"b","time":1,"lon":1,"lat":2}"# + "\n")
        XCTAssertEqual(p, [Position(device: "v", time: 3, lon: 1, lat: 2, coord: .bd09ll)])
        XCTAssertEqual(e, [PositionLineError(line: 2, reason: #"key "deviceId" appears twice"#)])
        // A name with letters beyond ASCII is lowercased as Unicode and never matches by accident.
        XCTAssertNil(PositionField.field(named: "Tíme"))
        XCTAssertEqual(PositionField.field(named: "LAT\u{00A0}"), nil)
        XCTAssertEqual(PositionField.normalized("Ünit_ID"), "ünitid")
    }

    /// NDJSON keys are matched from their bytes and the values of other keys are skipped
    /// without being decoded; what either path accepts or refuses is what decoding everything
    /// did: an escaped key is its text, a key that is not UTF-8 names nothing, a skipped value
    /// is still checked for syntax (a bad escape, a raw control character), but text that is
    /// not UTF-8 in a value no field uses is no problem.
    func testNDJSONKeysFromBytesAndSkippedValues() throws {
        let lines: [[UInt8]] = [
            Array(#"{"lo\u006e":1,"lat":2,"device":"a","time":1}"#.utf8),
            Array(#"{"device":"b","time":1,"lon":1,"lat":2,"note":"a\qb"}"#.utf8),
            Array(#"{"device":"c","time":1,"lon":1,"lat":2,"note":"a"#.utf8) + [9] + Array(#"b"}"#.utf8),
            Array(#"{"device":"d","time":1,"lon":1,"lat":2,"note":""#.utf8) + [0xFF, 0xFE] + Array(#""}"#.utf8),
            Array(#"{"device":"e","time":1,"lon":1,"lat":2,"lo"#.utf8) + [0xFF] + Array(#"n":7}"#.utf8),
            Array(#"{"meta":{"x":[1,"}",{"y":"]"}]},"device":"f","time":1,"lon":1,"lat":2}"#.utf8),
            Array(#"{"device":"g","time":1,"lon":1,"lat":2,"horizontalaccuracyhorizontal":5,"Horizontal_Accuracy":3}"#.utf8),
            Array(#"{"device":"h","time":1,"lon":1,"lat":2,"speed":tru}"#.utf8),
            Array(#"{"device":"i","time":1,"lon":1,"lat":2,"note":"\ud800"}"#.utf8),
            Array(#"{"device":"j","time":1,"lon":1,"lat":2,"lon":"\ud800"}"#.utf8),
        ]
        let (p, e) = try read(bytes: Array(lines.joined(separator: [10])) + [10])
        XCTAssertEqual(p.map(\.device), ["a", "d", "e", "f", "g", "i"])
        XCTAssertEqual(p.first?.lon, 1)
        XCTAssertEqual(p.first { $0.device == "e" }?.lon, 1)
        XCTAssertEqual(p.first { $0.device == "g" }?.accuracy, 3)
        XCTAssertEqual(e.map(\.line), [2, 3, 8, 10])
        XCTAssertTrue(e[0].reason.contains("bad escape"), e[0].reason)
        XCTAssertTrue(e[1].reason.contains("control character in a string"), e[1].reason)
        XCTAssertTrue(e[2].reason.contains("expected true"), e[2].reason)
        XCTAssertTrue(e[3].reason.contains("appears twice"), e[3].reason)
    }

    /// A quote inside an unquoted field is a bad line (RFC 4180). A quoted field holding a line
    /// break is not supported: its first line is an unclosed quote, and the rest (`ice1"` was
    /// read as a device; independent audit) has an odd number of quotes, so it is refused too.
    func testQuoteInsideUnquotedFieldIsABadLine() throws {
        let csv = "device,time,lon,lat\n\"dev\nice1\",0,0.5,0.5\nok,0,1,1\na\"b,0,1,1\nc,0\",1,1\n\"q\"\"\",0,1,1\n"
        let (p, e) = try read(csv)
        XCTAssertEqual(p.map(\.device), ["ok", "q\""])
        XCTAssertEqual(e, [
            PositionLineError(line: 2, reason: "unclosed quote in field 1"),
            PositionLineError(line: 3, reason: "a quote inside unquoted field 1"),
            PositionLineError(line: 5, reason: "a quote inside unquoted field 1"),
            PositionLineError(line: 6, reason: "a quote inside unquoted field 2"),
        ])
    }

    /// Text after a quoted field's closing quote (`"v"x`, or a blank) is a bad line (RFC 4180),
    /// as a quote inside an unquoted field is (a mutation audit found it untested).
    func testTextAfterAClosingQuoteIsABadLine() throws {
        let (p, e) = try read("device,time,lon,lat\n\"v\"x,0,1,1\nok,0,1,1\n\"w\" ,0,1,1\n\"q\",0,1,1\n")
        XCTAssertEqual(p.map(\.device), ["ok", "q"])
        XCTAssertEqual(e, [
            PositionLineError(line: 2, reason: "text after a closing quote in field 1"),
            PositionLineError(line: 4, reason: "text after a closing quote in field 1"),
        ])
    }

    /// Fields out of their range are no time: minute 60, hour 25, month 13, second 61, a time
    /// past 24:00, zone offsets of 24 hours or 60 minutes. A leap second (:60) is the next
    /// minute's start.
    func testISO8601RefusesFieldsOutOfRange() {
        for bad in [
            "2020-01-01T00:60:00Z", "2020-01-01T25:00:00Z", "2020-13-01T00:00:00Z", "2020-01-01T00:00:61Z", "2020-01-01T24:00:01Z",
            "2020-01-01T12:00:00+24:00", "2020-01-01T12:00:00+01:60", "2020-04-31", "2020-01-01T12:00:00+01:00x",
            "2020-01-01T12:00:00+01:00:00",
        ] {
            XCTAssertNil(ISO8601.parse(bad), bad)
        }
        XCTAssertEqual(ISO8601.parse("2020-01-01T00:59:60Z"), 1_577_840_400)
        XCTAssertEqual(ISO8601.parse("2020-01-01T24:00:00Z"), 1_577_923_200)
        XCTAssertEqual(ISO8601.parse("2020-01-01T12:00:00+23:59"), 1_577_880_000 - 86_340)
    }

    /// A device or time of the wrong JSON type is named as such (they read as "empty device"
    /// and `time ""`; independent audit), and so is a coord that is not text.
    func testNDJSONValueOfTheWrongTypeIsNamed() throws {
        let (p, e) = try read(
            """
            {"device":true,"time":0,"lon":0,"lat":0}
            {"device":{"a":1},"time":0,"lon":0,"lat":0}
            {"device":null,"time":0,"lon":0,"lat":0}
            {"device":"a","time":null,"lon":0,"lat":0}
            {"device":"a","time":[1],"lon":0,"lat":0}
            {"device":"a","time":false,"lon":0,"lat":0}
            {"device":"a","time":0,"lon":0,"lat":0,"coord":true}
            {"device":"","time":0,"lon":0,"lat":0}
            {"device":7,"time":0,"lon":0,"lat":0,"coord":null}

            """, format: .ndjson)
        XCTAssertEqual(p, [Position(device: "7", time: 0, lon: 0, lat: 0)])
        XCTAssertEqual(e.map(\.reason), [
            "device has the wrong type: true (a string or a number expected)",
            "device has the wrong type: an object or array (a string or a number expected)",
            "device has the wrong type: null (a string or a number expected)",
            "time has the wrong type: null (epoch seconds or an ISO 8601 string expected)",
            "time has the wrong type: an object or array (epoch seconds or an ISO 8601 string expected)",
            "time has the wrong type: false (epoch seconds or an ISO 8601 string expected)",
            "coord has the wrong type: true (wgs84, gcj02 or bd09ll expected)",
            "empty device",
        ])
        // Blanks alone are no device id, in CSV and NDJSON; an id with blanks around is one.
        let (kept, blank) = try read("device,time,lon,lat\n   ,0,1,2\n\t,0,1,2\n v1 ,0,1,2\n")
        XCTAssertEqual(kept.map(\.device), [" v1 "])
        XCTAssertEqual(blank.map(\.reason), ["blank device", "blank device"])
        let (_, blankJSON) = try read(#"{"device":"  ","time":0,"lon":1,"lat":2}"# + "\n", format: .ndjson)
        XCTAssertEqual(blankJSON.map(\.reason), ["blank device"])
    }

    /// ISO 8601 allows hour 24 only as 24:00:00, the end of the day (24:59:59 was read as the
    /// next day's 00:59:59; independent audit).
    func testISOHour24IsOnlyMidnight() {
        let midnight = ISO8601.parse("2020-01-02T00:00:00Z")
        for text in ["2020-01-01T24:00Z", "2020-01-01T24:00:00Z", "2020-01-01T24:00:00.000", "2020-01-01T24:00:00,0Z"] {
            XCTAssertEqual(ISO8601.parse(text), midnight, text)
        }
        for text in ["2020-01-01T24:59:59Z", "2020-01-01T24:00:01Z", "2020-01-01T24:01Z", "2020-01-01T24:00:00.001Z", "2020-01-01T25:00Z"] {
            XCTAssertNil(ISO8601.parse(text), text)
        }
    }

    /// A time is refused once events would write it past 9999-12-31T23:59:59.999Z:
    /// 253402300799.9999 was accepted and written as 10000-01-01T00:00:00.000Z (independent
    /// audit), a time the reader refuses as input.
    func testTimeThatRoundsToTheYear10000IsABadLine() throws {
        let csv = """
            device,time,lon,lat
            a,253402300799.999,0,0
            b,9999-12-31T23:59:59.9994Z,0,0
            c,253402300799.9995,0,0
            d,253402300799.9999,0,0
            e,9999-12-31T23:59:59.9996Z,0,0
            f,9999-12-31T24:00:00Z,0,0

            """
        let (p, e) = try read(csv)
        XCTAssertEqual(p.map(\.device), ["a", "b"])
        XCTAssertEqual(p.map { ISO8601.format($0.time) }, ["9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z"])
        XCTAssertEqual(e.map(\.line), [4, 5, 6, 7])
        for error in e { XCTAssertTrue(error.reason.contains("outside the years 1-9999"), error.reason) }
        // A time written as a date is named as written; a number as its value.
        XCTAssertEqual(e[1].reason, "time 253402300799.9999 is outside the years 1-9999 (to the millisecond it is 10000-01-01T00:00:00.000Z)")
        XCTAssertEqual(e[2].reason, #"time "9999-12-31T23:59:59.9996Z" is outside the years 1-9999 (to the millisecond it is 10000-01-01T00:00:00.000Z)"#)
        XCTAssertEqual(e[3].reason, #"time "9999-12-31T24:00:00Z" is outside the years 1-9999"#)
        let (_, east) = try read("device,time,lon,lat\na,0001-01-01T00:00:00+01:00,0,0\n")
        XCTAssertEqual(east.map(\.reason), [#"time "0001-01-01T00:00:00+01:00" is outside the years 1-9999"#])
    }

    /// The first usable time rounds as the last does: a time events write as
    /// 0001-01-01T00:00:00.000Z is kept, one a millisecond before is a bad line
    /// (-62135596800.0004 was refused; independent audit).
    func testTimeThatRoundsToTheYear1IsKept() throws {
        let csv = """
            device,time,lon,lat
            a,-62135596800,0,0
            b,-62135596800.0004,0,0
            c,0000-12-31T23:59:59.9996Z,0,0
            d,-62135596800.0006,0,0
            e,0000-12-31T23:59:59.999Z,0,0

            """
        let (p, e) = try read(csv)
        XCTAssertEqual(p.map(\.device), ["a", "b", "c"])
        XCTAssertEqual(Set(p.map { ISO8601.format($0.time) }), ["0001-01-01T00:00:00.000Z"])
        XCTAssertEqual(e.map(\.line), [5, 6])
        for error in e { XCTAssertTrue(error.reason.contains("outside the years 1-9999"), error.reason) }
    }

    /// Blanks around a time are trimmed alike for both forms: a tab after an epoch time was
    /// trimmed, after an ISO 8601 one it made a bad line (independent audit). So is a blank
    /// accuracy.
    func testBlanksAroundATimeAreTrimmedAlike() throws {
        let csv = "device,time,lon,lat,accuracy\n"
            + "a,1600000000\t,0,0,5\n" + "b,2020-09-13T12:26:40Z\t,0,0,5\n" + "c,\t 2020-09-13T12:26:40Z ,0,0,\t\n"
            + "d,2020-09-13T12:26:40Z,0,0, \t \n" + "e,2020-09-13T\t12:26:40Z,0,0,5\n"
        let (p, e) = try read(csv)
        XCTAssertEqual(p.map(\.device), ["a", "b", "c", "d"])
        XCTAssertEqual(Set(p.map(\.time)), [1_600_000_000])
        XCTAssertEqual(p.map(\.accuracy), [5, 5, nil, nil])
        XCTAssertEqual(e.map(\.line), [6])
    }

    func testNumberParserMatchesSwift() throws {
        for text in ["0", "-0.5", "40.41692", "-74.0315", "1e-7", "123456789012345678901", "3.14159265358979323846", "+2", ".5"] {
            var t = text
            XCTAssertEqual(t.withUTF8 { NumberParser.parseDouble($0) }, Double(text), text)
        }
        for bad in ["", "abc", "1.2.3", "nan", "inf", "1e", "--1"] {
            var t = bad
            XCTAssertNil(t.withUTF8 { NumberParser.parseDouble($0) }, bad)
        }
    }
}

/// The corpus of bad positions input, each with its exact error.
final class BadPositionInputTests: XCTestCase {
    func read(_ bytes: [UInt8]) throws -> ([Position], [PositionLineError]) {
        let path = NSTemporaryDirectory() + "bad-\(UUID().uuidString)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try PositionReader(path: path).readAll()
    }

    func testEmptyFileIsRefused() {
        XCTAssertThrowsError(try read([])) { XCTAssertTrue("\($0)".contains("empty"), "\($0)") }
    }

    func testBinaryFileIsRefused() {
        let bytes: [UInt8] = [0x7F, 0x45, 0x4C, 0x46, 0x02, 0x01, 0x00, 0x00, 0x0A, 0x00, 0xFF, 0x10, 0x0A]
        XCTAssertThrowsError(try read(bytes)) { XCTAssertTrue("\($0)".contains("binary"), "\($0)") }
    }

    /// An endless stream of NUL bytes (`--positions /dev/zero`) has no line end to skip to:
    /// it is refused once a line passes the limit with a NUL in it, not read forever. A long
    /// text line is still only that line's error.
    func testEndlessBinaryLineIsRefused() throws {
        let zero = open("/dev/zero", O_RDONLY)
        XCTAssertGreaterThanOrEqual(zero, 0)
        defer { close(zero) }
        let reader = PositionReader(fileDescriptor: zero, maxLineBytes: 4096)
        var positions: [Position] = []
        var errors: [PositionLineError] = []
        XCTAssertThrowsError(try reader.read(limit: 10, into: &positions, errors: &errors)) {
            XCTAssertTrue("\($0)".contains("binary data (NUL byte) in a line over 4096 bytes"), "\($0)")
        }
        let long = "device,time,lon,lat\n" + String(repeating: "x", count: 1_100_000) + "\na,0,1,1\n"
        let (p, e) = try read(Array(long.utf8))
        XCTAssertEqual(p.map(\.device), ["a"])
        XCTAssertEqual(e.map(\.line), [2])
    }

    func testMixedDelimitersAreReportedPerLine() throws {
        let (p, e) = try read(Array("device,time,lon,lat\na,0,1,1\nb;0;1;1\nc\t0\t1\t1\n".utf8))
        XCTAssertEqual(p.map(\.device), ["a"])
        XCTAssertEqual(e, [
            PositionLineError(line: 3, reason: "1 fields where the header has 4"),
            PositionLineError(line: 4, reason: "1 fields where the header has 4"),
        ])
    }

    func testUnclosedJSONObjectAndTruncatedLines() throws {
        let text = "{\"device\":\"a\",\"time\":0,\"lon\":1,\"lat\":1}\n{\"device\":\"b\",\"time\":0,\"lon\":1\n{\"device\":\"c\",\"ti\n"
        let (p, e) = try read(Array(text.utf8))
        XCTAssertEqual(p.map(\.device), ["a"])
        XCTAssertEqual(e.map(\.line), [2, 3])
        XCTAssertTrue(e[0].reason.contains("unclosed object"), e[0].reason)
        XCTAssertTrue(e[1].reason.contains("unclosed string"), e[1].reason)
    }

    func testTenMegabyteSingleLineIsSkipped() throws {
        var bytes = Array("device,time,lon,lat\n".utf8)
        bytes += [UInt8](repeating: 65, count: 10 << 20)
        bytes += Array(",0,1,1\nok,0,1,1\n".utf8)
        let (p, e) = try read(bytes)
        XCTAssertEqual(p.map(\.device), ["ok"])
        XCTAssertEqual(e, [PositionLineError(line: 2, reason: "line longer than 1048576 bytes")])
    }
}
