import FenceEngine
@testable import FenceIO
import Foundation
import XCTest

/// GeoJSON text sequences read by the built-in reader (found by an audit: a GeoJSONSeq named
/// `.geojson` or `.json` was refused whole, with "expected a JSON object at line 1, column 1"
/// for its invisible RS; `.geojsonl` went to OGR, whose GeoJSONSeq driver replaced the ids of
/// a file with ids of mixed types by its own feature numbers, silently).
final class GeoJSONSeqTests: XCTestCase {
    typealias G = GDALFixtures

    static let rs = "\u{1E}"

    static func circle(_ id: String, radius: Int = 5, lon: Double = 0) -> String {
        #"{"type":"Feature","id":\#(id),"properties":{"radius":\#(radius)},"geometry":{"type":"Point","coordinates":[\#(lon),0]}}"#
    }

    static func read(_ text: String) throws -> FenceReadResult {
        try GeoJSONFences.read(Data(text.utf8), layer: "seq", options: FenceInputOptions())
    }

    static func described(_ read: FenceReadResult) -> [String] { read.rejected.map { "\($0)" } }

    /// RFC 8142 records: each RS, a Feature, a line end; one spread over lines; an empty record.
    /// Ids keep their spelling, whatever their mix of types.
    func testRecordSeparatedFeatures() throws {
        let pretty = "{\n  \"type\": \"Feature\",\n  \"id\": \"A7\",\n  \"properties\": {\"radius\": 5},\n  \"geometry\": {\"type\": \"Point\", \"coordinates\": [1, 0]}\n}"
        let text = Self.rs + Self.circle("101") + "\n" + Self.rs + pretty + "\n" + Self.rs + "\n" + Self.rs + Self.circle("1.50", lon: 2) + "\n"
        let read = try Self.read(text)
        XCTAssertEqual(read.rejected, [])
        XCTAssertEqual(read.fences.map(\.id), ["101", "A7", "1.50"])
        XCTAssertEqual(read.origins.map(\.index), [1, 2, 3])
        XCTAssertEqual(read.fences[1].shape, .circle(center: LonLat(lon: 1, lat: 0), radius: 5))
        // A UTF-8 byte order mark, then the RS.
        XCTAssertEqual(try Self.read("\u{FEFF}" + text).fences.map(\.id), ["101", "A7", "1.50"])
    }

    /// One Feature per line (GDAL's GeoJSONSeq without RS, ndjson dumps), CRLF and blank lines
    /// included, and Features printed over several lines one after the other (`jq` without -c).
    func testOneFeaturePerLine() throws {
        let lines = [Self.circle("\"a\""), "", "  ", Self.circle("7", lon: 1), Self.circle("\"c\"", lon: 2)]
        for end in ["\n", "\r\n"] {
            let read = try Self.read(lines.joined(separator: end) + end)
            XCTAssertEqual(read.rejected, [])
            XCTAssertEqual(read.fences.map(\.id), ["a", "7", "c"])
            XCTAssertEqual(read.origins.map(\.index), [1, 2, 3])
            XCTAssertEqual(read.layers, ["seq"])
        }
        let pretty = "{\n  \"type\": \"Feature\",\n  \"id\": \"p\",\n  \"properties\": {\"radius\": 5},\n  \"geometry\": {\"type\": \"Point\", \"coordinates\": [1, 0]}\n}\n"
        XCTAssertEqual(try Self.read(pretty + pretty.replacingOccurrences(of: "\"p\"", with: "\"q\"")).fences.map(\.id), ["p", "q"])
        // Two on one line, no line end after the last.
        XCTAssertEqual(try Self.read(Self.circle("1") + Self.circle("2")).fences.map(\.id), ["1", "2"])
    }

    /// A record that is not JSON is one rejected feature naming its line; the rest load.
    func testABadRecordIsOneRejectedFeature() throws {
        let cut = #"{"type":"Feature","id":"b","geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0]"#
        let lines = [Self.circle("\"a\""), "GARBAGE LINE", cut, Self.circle("\"c\""), "[1,2]", Self.circle("\"d\"")]
        let read = try Self.read(lines.joined(separator: "\n") + "\n")
        XCTAssertEqual(read.fences.map(\.id), ["a", "c", "d"])
        XCTAssertEqual(read.origins.map(\.index), [1, 4, 6])
        XCTAssertEqual(Self.described(read), [
            "layer seq, feature 2: fence #2: malformed-input: the record at line 2 is not valid JSON: expected a JSON value at line 2, column 1; "
                + "the line is skipped",
            "layer seq, feature 3: fence #3: malformed-input: the record at line 3 is not valid JSON: expected , or ] in an array at line 4, column 1; "
                + "the line is skipped",
            "layer seq, feature 5: fence #5: malformed-input: not a GeoJSON Feature",
        ])
        // RS records: a bad one ends at the next RS, whatever its lines.
        let records = Self.rs + Self.circle("\"a\"") + "\n" + Self.rs + cut + "\nmore\nlines\n" + Self.rs + Self.circle("\"c\"") + "\n" + Self.rs + "{"
        let rsRead = try Self.read(records)
        XCTAssertEqual(rsRead.fences.map(\.id), ["a", "c"])
        XCTAssertEqual(Self.described(rsRead), [
            "layer seq, feature 2: fence #2: malformed-input: the record at line 2 is not valid JSON: expected , or ] in an array at line 3, column 1; "
                + "lines 2-4 are skipped",
            "layer seq, feature 4: fence #4: malformed-input: the record at line 6 is not valid JSON: expected a string at line 6, column 3; "
                + "the rest of the file is skipped",
        ])
    }

    /// Without RS, a bad record skips every line up to the next one whose first byte past
    /// white space is `{` (an indented one too), or to the end when none follows; an RS at a
    /// line's start also starts a record (coverage audit: only the next line had been tried).
    func testABadRecordSkipsToTheNextObjectLine() throws {
        let lines = [
            Self.circle("\"a\""), #"{"type":"Feature","id":"b" "properties":{}"#, #"  "x": 1,"#, "  }", "   " + Self.circle("\"c\""),
            Self.circle("\"d\"").replacingOccurrences(of: "Point", with: "Point\""), "\t" + Self.rs + Self.circle("\"e\""), #"{"type":"#,
            "not json", "]",
        ]
        let read = try Self.read(lines.joined(separator: "\n") + "\n")
        XCTAssertEqual(read.fences.map(\.id), ["a", "c", "e"])
        XCTAssertEqual(read.origins.map(\.index), [1, 3, 5])
        XCTAssertEqual(Self.described(read), [
            "layer seq, feature 2: fence #2: malformed-input: the record at line 2 is not valid JSON: expected , or } in an object at line 2, column 28; "
                + "lines 2-4 are skipped",
            "layer seq, feature 4: fence #4: malformed-input: the record at line 6 is not valid JSON: expected , or } in an object at line 6, column 80; "
                + "the line is skipped",
            "layer seq, feature 6: fence #6: malformed-input: the record at line 8 is not valid JSON: expected a JSON value at line 9, column 1; "
                + "the rest of the file is skipped",
        ])
    }

    /// What was refused as a whole still is: a FeatureCollection followed by anything, a
    /// Feature followed by text on its own line, a first record that is not JSON.
    func testWholeDocumentsAreStillRefusedAsTheyWere() {
        let collection = G.collection([Self.circle("1")])
        for (text, reason) in [
            (collection + "\n" + Self.circle("2"), "not valid JSON: unexpected text after the JSON document at line 4, column 1"),
            (Self.circle("1") + " x\n", "not valid JSON: unexpected text after the JSON document at line 1, column 103"),
            ("GARBAGE\n" + Self.circle("1"), "not valid JSON: expected a JSON object at line 1, column 1"),
        ] {
            XCTAssertThrowsError(try Self.read(text)) { error in XCTAssertEqual((error as? FenceError)?.reason, reason) }
        }
    }

    /// `.geojsonl` and `.geojsons` go to the built-in reader under `auto`, compressed too, and
    /// keep ids of mixed types; standard input may start with RS.
    func testGeoJSONSeqFilesGoToTheBuiltInReader() throws {
        XCTAssertTrue(FenceInput.usesNativeReader("zones.geojsonl"))
        XCTAssertTrue(FenceInput.usesNativeReader("ZONES.GEOJSONS"))
        XCTAssertTrue(FenceInput.usesNativeReader("zones.geojsonl.gz"))
        XCTAssertFalse(FenceInput.usesNativeReader("/vsizip/zones.zip/zones.geojsonl"))
        let text = [Self.circle("101"), Self.circle("\"A7\"", lon: 1), Self.circle("102", lon: 2)].joined(separator: "\n") + "\n"
        let path = try CLI.temp(self, "zones.geojsonl", text)
        let read = try FenceInput.read(path)
        XCTAssertEqual(read.reader, .native)
        XCTAssertEqual(read.layers, ["zones"])
        XCTAssertEqual(read.fences.map(\.id), ["101", "A7", "102"])
        let rsPath = String(path.dropLast()) + "s"
        try Data((Self.rs + text.replacingOccurrences(of: "\n", with: "\n" + Self.rs)).utf8).write(to: URL(fileURLWithPath: rsPath))
        XCTAssertEqual(try FenceInput.read(rsPath).fences.map(\.id), ["101", "A7", "102"])

        let positions = try CLI.temp(self, "p.csv", "device,time,lon,lat\nv,0,1,0\n")
        let contains = try CLI.run(["contains", "--fences", path, "--positions", positions])
        XCTAssertEqual(contains.status, 0, contains.err)
        XCTAssertEqual(contains.out, "v,1970-01-01T00:00:00.000Z,A7\n")
        let piped = try CLI.run(["contains", "--fences", "-", "--positions", positions], stdin: Self.rs + text)
        XCTAssertEqual(piped.status, 0, piped.err)
        XCTAssertEqual(piped.out, "v,1970-01-01T00:00:00.000Z,A7\n")
    }

    /// The line counter of bad records against the scanner's count from the start, at random
    /// offsets going both ways, over many seeds.
    func testLineCounterAgreesWithCountingFromTheStart() {
        for seed in 1...40 {
            var random = LCG(UInt64(seed))
            let count = 1 + Int(random.next() * 300)
            let text = (0..<count).map { _ in random.next() < 0.2 ? UInt8(10) : UInt8(97) }
            text.withUnsafeBufferPointer { bytes in
                let scanner = JSONScanner(bytes)
                var counter = GeoJSONDocument.LineCounter(bytes)
                for _ in 0..<100 {
                    let offset = Int(random.next() * Double(count + 1))
                    let got = counter.lineAndColumn(offset)
                    let want = scanner.lineAndColumn(offset)
                    XCTAssertTrue(got == want, "seed \(seed), offset \(offset): \(got) != \(want)")
                }
            }
        }
    }
}
