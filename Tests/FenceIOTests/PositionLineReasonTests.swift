import FenceEngine
@testable import FenceIO
import Foundation
import XCTest

/// Bad position lines the coverage audit found no test reading: an accuracy or coord that
/// cannot be read, JSON syntax errors inside a value no field uses, every escape a JSON string
/// may hold, and text after an ISO 8601 time that is no zone. Each is one bad line, named by
/// its number and reason; the lines around it still load (SPEC "Positions").
final class PositionLineReasonTests: XCTestCase {
    func read(_ text: String, format: PositionReader.Format? = nil) throws -> ([Position], [PositionLineError]) {
        try PositionReaderTests.readFile(Array(text.utf8), format: format)
    }

    /// An accuracy that is no number and a coord system nobody knows are bad lines (never a fix
    /// without its accuracy, never a fix taken as WGS84), in CSV and NDJSON; a blank coord is
    /// the stream's default, and a known one is read whatever its case and separators.
    func testAccuracyThatIsNoNumberAndUnknownCoordAreBadLines() throws {
        let csv = """
            device,time,lon,lat,accuracy,coord
            a,0,1,1,abc,
            b,0,1,1,5,utm
            c,0,1,1,5,  
            d,0,1,1,,GCJ-02
            e,0,1,1,7, bd09 

            """
        let (p, e) = try read(csv)
        XCTAssertEqual(e, [
            PositionLineError(line: 2, reason: "accuracy is not a number"),
            PositionLineError(line: 3, reason: #"unknown coord "utm" (wgs84, gcj02 or bd09ll)"#),
        ])
        XCTAssertEqual(p.map(\.device), ["c", "d", "e"])
        XCTAssertEqual(p.map(\.coord), [.wgs84, .gcj02, .bd09ll])
        XCTAssertEqual(p.map(\.accuracy), [5, nil, 7])
        let (pj, ej) = try read(
            """
            {"device":"a","time":0,"lon":1,"lat":1,"accuracy":"abc"}
            {"device":"b","time":0,"lon":1,"lat":1,"coord":"BD-09MC"}
            {"device":"c","time":0,"lon":1,"lat":1,"accuracy":3,"coord":"gcj02"}

            """, format: .ndjson)
        XCTAssertEqual(ej, [
            PositionLineError(line: 1, reason: "accuracy is not a number"),
            PositionLineError(line: 2, reason: #"unknown coord "BD-09MC" (wgs84, gcj02 or bd09ll)"#),
        ])
        XCTAssertEqual(pj, [Position(device: "c", time: 0, lon: 1, lat: 1, accuracy: 3, coord: .gcj02)])
    }

    /// A value no field uses is still checked for syntax: a missing ':' or ',' inside a nested
    /// object or array, or one cut short, makes the line bad, naming the byte.
    func testSyntaxErrorsInsideSkippedValuesAreNamed() throws {
        let lines = [
            #"{"device":"a","time":0,"lon":1,"lat":1,"meta":{"k" 1}}"#,
            #"{"device":"b","time":0,"lon":1,"lat":1,"meta":[1 2]}"#,
            #"{"device":"c","time":0,"lon":1,"lat":1,"meta":{"k":1 "j":2}}"#,
            #"{"device":"d","time":0,"lon":1,"lat":1,"meta":[1,"#,
            #"{"device":"f","time":0,"lon":1,"lat":1,"meta":{"k":[1,2]"#,
            #"{"device":"e","time":0,"lon":1,"lat":1,"meta":{"k":[],"j":{}}}"#,
        ]
        let (p, e) = try read(lines.joined(separator: "\n") + "\n", format: .ndjson)
        XCTAssertEqual(p.map(\.device), ["e"])
        XCTAssertEqual(e, [
            PositionLineError(line: 1, reason: "bad JSON at byte 52: expected ':'"),
            PositionLineError(line: 2, reason: "bad JSON at byte 50: expected ',' or ']'"),
            PositionLineError(line: 3, reason: "bad JSON at byte 54: expected ',' or '}'"),
            PositionLineError(line: 4, reason: "JSON ends early: expected a value"),
            PositionLineError(line: 5, reason: "JSON ends early: unclosed object"),
        ])
    }

    /// Every escape RFC 8259 allows decodes to its character, in a key and in a value (upper-
    /// and lower-case hex alike); a `\u` without four hex digits is a bad line.
    func testEveryJSONEscapeDecodes() throws {
        let lines = [
            #"{"d\u0065vice":"a\\b\/c\bd\fe\"f\u00C9\u00e9\uD83D\uDE00","time":0,"lon":1,"lat":1}"#,
            #"{"device":"x\u12G4","time":0,"lon":1,"lat":1}"#,
            #"{"device":"y\u12","time":0,"lon":1,"lat":1}"#,
        ]
        let (p, e) = try read(lines.joined(separator: "\n") + "\n", format: .ndjson)
        XCTAssertEqual(p.map(\.device), ["a\\b/c\u{8}d\u{C}e\"fÉé😀"])
        XCTAssertEqual(e.map(\.line), [2, 3])
        // The reason names the escape's backslash (it named the byte after the string).
        XCTAssertEqual(e.map(\.reason), [#"bad JSON at byte 13: bad \u escape"#, #"bad JSON at byte 13: bad \u escape"#])
        let (_, q) = try read(#"{"device":"ab\qc","time":0,"lon":1,"lat":1}"# + "\n", format: .ndjson)
        XCTAssertEqual(q, [PositionLineError(line: 1, reason: "bad JSON at byte 14: bad escape")])
    }

    /// After an ISO 8601 time only a zone may follow: `Z`, `±hh`, `±hh:mm`, `±hhmm` within
    /// 23:59, or ` UTC`; anything else is a bad line, never a time read without it.
    func testTextAfterAnISOTimeThatIsNoZoneIsABadLine() throws {
        let base = 1_577_836_800.0  // 2020-01-01T00:00:00Z
        let good = [("Z", 0.0), ("+05:30", -19_800), ("-0130", 5_400), ("+05", -18_000), (" UTC", 0)]
        let bad = ["Zx", "+x5", "+24:00", "+05:60", "+05:3", "*05"]
        let rows = (good.map(\.0) + bad).enumerated().map { "v\($0.offset),2020-01-01T00:00:00\($0.element),1,1" }
        let (p, e) = try read("device,time,lon,lat\n" + rows.joined(separator: "\n") + "\n")
        XCTAssertEqual(p.map(\.time), good.map { base + $0.1 })
        XCTAssertEqual(e.map(\.line), Array(2 + good.count..<2 + good.count + bad.count))
        XCTAssertEqual(e.map(\.reason), bad.map { "time \"2020-01-01T00:00:00\($0)\" is neither epoch seconds nor ISO 8601" })
    }
}
