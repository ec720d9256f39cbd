import FenceEngine
@testable import FenceIO
import Foundation
import XCTest

/// Input is data: ids and properties with quotes, commas, line breaks, control characters,
/// non-ASCII and spreadsheet formulas come out of every output format as the same text, and a
/// spreadsheet opening the CSV shows them instead of running them.
final class EscapingTests: XCTestCase {
    static let devices = [
        "dev \"1\", north\nline 2 ünï 🚢",
        "=HYPERLINK(\"http://example.invalid\",\"x\")",
        "-73.9",
        "@SUM(A1)",
        "+1+1",
        "\t=1",
        "\u{1B}[31mred\r",
        "sep\u{2028}arated",
        "plain",
    ]
    static let fenceID = "port \"A\", pier 7\nquay ø"
    static let group = "=1+2"

    /// What a spreadsheet should show for a text cell: formulas behind a `'`.
    static func shown(_ s: String) -> String {
        guard let f = s.utf8.first, [61, 43, 45, 64, 9, 13].contains(f), !OutputEscaping.isPlainNumber(s) else { return s }
        return "'" + s
    }

    func testCSVFieldRule() {
        XCTAssertEqual(OutputEscaping.csvField("plain"), "plain")
        XCTAssertEqual(OutputEscaping.csvField("ünï 🚢"), "ünï 🚢")
        XCTAssertEqual(OutputEscaping.csvField("a,b"), "\"a,b\"")
        XCTAssertEqual(OutputEscaping.csvField("a\nb"), "\"a\nb\"")
        // Every control character: CSV cannot escape them, a quoted field at least keeps them in it.
        XCTAssertEqual(OutputEscaping.csvField("a\u{1B}[31mb"), "\"a\u{1B}[31mb\"")
        XCTAssertEqual(OutputEscaping.csvField("a\u{0}b\u{7F}"), "\"a\u{0}b\u{7F}\"")
        XCTAssertEqual(OutputEscaping.csvField("a\u{9B}31m"), "\"a\u{9B}31m\"")
        XCTAssertEqual(OutputEscaping.csvField("é\u{A0}"), "é\u{A0}")
        XCTAssertEqual(OutputEscaping.csvField("=1+2"), "\"'=1+2\"")
        XCTAssertEqual(OutputEscaping.csvField("@x"), "\"'@x\"")
        XCTAssertEqual(OutputEscaping.csvField("\t=1"), "\"'\t=1\"")
        XCTAssertEqual(OutputEscaping.csvField("\r=1"), "\"'\r=1\"")
        XCTAssertEqual(OutputEscaping.csvField("-1+1"), "\"'-1+1\"")
        // Plain decimal numbers are data; what Double(_:) also takes (inf, nan, hex) is not.
        for number in ["-73.9", "+1", "-0", "-2.5e-3", "-.5", "+7E+2"] { XCTAssertEqual(OutputEscaping.csvField(number), number) }
        for text in ["-inf", "-nan", "-0x1p3", "+infinity", "- 1", "-1 ", "-", "+", "-e5", "-1e"] {
            XCTAssertEqual(OutputEscaping.csvField(text), "\"'\(text)\"", text)
        }
        for s in Self.devices + [Self.fenceID, Self.group, "", "\"", "\"\""] {
            let rows = Self.parseCSV(OutputEscaping.csvField(s) + "\n")
            XCTAssertEqual(rows, [[Self.shown(s)]], s)
        }
    }

    func testJSONStringRoundTrips() throws {
        for s in Self.devices + [Self.fenceID, "\u{0}\u{7F}\u{85}\u{2029}", "\\\"/"] {
            let literal = OutputEscaping.jsonString(s)
            XCTAssertFalse(literal.contains("\n") || literal.contains("\u{2028}") || literal.contains("\u{2029}"), literal)
            let back = try JSONSerialization.jsonObject(with: Data(literal.utf8), options: [.fragmentsAllowed]) as? String
            XCTAssertEqual(back, s)
        }
        XCTAssertEqual(OutputEscaping.jsonString("a\u{2028}b\u{2029}"), #""a\u2028b\u2029""#)
    }

    func testMessagesShowControlCharactersEscaped() {
        let e = FenceError(.invalidRadius, fence: "a\nb\u{1B}[2J\u{202E}", line: 3, reason: "radius \"x\ty\" is not a number")
        XCTAssertEqual(e.description, #"line 3: fence a\nb\u{1B}[2J\u{202E}: invalid-radius: radius "x\ty" is not a number"#)
        XCTAssertEqual(PositionLineError(line: 2, reason: "time \"\u{1B}]0;owned\u{7}\" is bad").description, #"line 2: time "\u{1B}]0;owned\u{7}" is bad"#)
        XCTAssertEqual(FenceError.printable("ünï 🚢 ok"), "ünï 🚢 ok")
    }

    // MARK: - Every output format of the CLI

    func fixtures() throws -> (fences: String, positions: String) {
        let fence: [String: Any] = [
            "type": "Feature",
            "properties": ["id": Self.fenceID, "radius": 1000, "group": Self.group, "note": "-cmd|' /C calc'!A0", "depth": -12.5],
            "geometry": ["type": "Point", "coordinates": [0, 0]],
        ]
        let doc = try JSONSerialization.data(withJSONObject: ["type": "FeatureCollection", "features": [fence]])
        let fences = try CLI.temp(self, "fences.geojson", String(decoding: doc, as: UTF8.self))
        var lines: [String] = []
        for d in Self.devices {
            let id = OutputEscaping.jsonString(d)
            lines.append(#"{"device":\#(id),"time":0,"lon":0,"lat":0}"#)
            lines.append(#"{"device":\#(id),"time":700,"lon":-73.9,"lat":40.7}"#)
        }
        return (fences, try CLI.temp(self, "positions.ndjson", lines.joined(separator: "\n") + "\n"))
    }

    func testEvalNDJSON() throws {
        let (fences, positions) = try fixtures()
        let r = try CLI.run(["eval", "--fences", fences, "--positions", positions, "--properties", "note,depth"])
        XCTAssertEqual(r.status, 0, r.err)
        let records = try r.out.split(separator: "\n").map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        XCTAssertEqual(records.count, 2 * Self.devices.count, "one line per event: no id broke a line")
        XCTAssertEqual(Set(records.map { $0["device"] as! String }), Set(Self.devices))
        for rec in records {
            XCTAssertEqual(rec["fence"] as? String, Self.fenceID)
            XCTAssertEqual(rec["group"] as? String, Self.group)
            let props = rec["properties"] as! [String: Any]
            XCTAssertEqual(props["note"] as? String, "-cmd|' /C calc'!A0")
            XCTAssertEqual(props["depth"] as? Double, -12.5)
        }
    }

    /// A property value written with raw U+2028 / U+2029 in the fence file comes out escaped,
    /// as every other NDJSON string (the built-in reader copied it as written: a consumer
    /// splitting lines on U+2028 broke the record; found by an independent audit).
    func testRawLineSeparatorsInPropertiesAreEscaped() throws {
        let fences = """
            {"type":"FeatureCollection","features":[{"type":"Feature","properties":{"id":"f","radius":1000,"note":"a\u{2028}b\u{2029}c","tags":["x\u{2028}"]},"geometry":{"type":"Point","coordinates":[0,0]}}]}
            """
        let path = try CLI.temp(self, "ls.geojson", fences)
        let r = try CLI.run(["eval", "--fences", path, "--positions", "-", "--properties", "note,tags"], stdin: "device,time,lon,lat\nd,0,0,0\n")
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertFalse(r.out.contains("\u{2028}") || r.out.contains("\u{2029}"), r.out)
        XCTAssertTrue(r.out.contains(#""note":"a\u2028b\u2029c""#), r.out)
        let record = try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as! [String: Any]
        let props = record["properties"] as! [String: Any]
        XCTAssertEqual(props["note"] as? String, "a\u{2028}b\u{2029}c")
        XCTAssertEqual(props["tags"] as? [String], ["x\u{2028}"])
    }

    func testEvalCSV() throws {
        let (fences, positions) = try fixtures()
        let r = try CLI.run(["eval", "--fences", fences, "--positions", positions, "--format", "csv", "--properties", "note,depth"])
        XCTAssertEqual(r.status, 0, r.err)
        let rows = Self.parseCSV(r.out)
        XCTAssertEqual(rows.first, ["time", "device", "fence", "group", "event", "lon", "lat", "initial", "reason", "inside_s", "note", "depth"])
        XCTAssertEqual(rows.count, 1 + 2 * Self.devices.count)
        XCTAssertEqual(Set(rows.dropFirst().map { $0[1] }), Set(Self.devices.map(Self.shown)))
        for row in rows.dropFirst() {
            XCTAssertEqual(row.count, 12, "\(row)")
            XCTAssertEqual(row[2], Self.fenceID)
            XCTAssertEqual(row[3], "'=1+2")
            XCTAssertEqual(row[10], "'-cmd|' /C calc'!A0")
            XCTAssertEqual(row[11], "-12.5", "a number property stays a number")
            XCTAssertTrue(row[5] == "0.0" || row[5] == "-73.9", "lon stays a number: \(row[5])")
        }
        // A negative number in a numeric column is written bare, not quoted.
        XCTAssertTrue(r.out.contains(",exit,-73.9,40.7,,,700"), r.out)
    }

    func testContainsAndNearestInBothFormats() throws {
        let (fences, positions) = try fixtures()
        let c = try CLI.run(["contains", "--fences", fences, "--positions", positions])
        XCTAssertEqual(c.status, 0, c.err)
        let rows = Self.parseCSV(c.out)
        XCTAssertEqual(rows.count, 2 * Self.devices.count)
        XCTAssertEqual(Set(rows.map { $0[0] }), Set(Self.devices.map(Self.shown)))
        XCTAssertEqual(rows.filter { $0[2] == Self.fenceID }.count, Self.devices.count)

        let cj = try CLI.run(["contains", "--fences", fences, "--positions", positions, "--format", "ndjson"])
        let records = try cj.out.split(separator: "\n").map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        XCTAssertEqual(records.count, 2 * Self.devices.count)
        XCTAssertEqual(Set(records.map { $0["device"] as! String }), Set(Self.devices))
        XCTAssertEqual(records.filter { ($0["fences"] as! [String]) == [Self.fenceID] }.count, Self.devices.count)

        let n = try CLI.run(["nearest", "--fences", fences, "--positions", positions])
        XCTAssertEqual(n.status, 0, n.err)
        let nrows = Self.parseCSV(n.out)
        XCTAssertEqual(nrows.count, 1 + 2 * Self.devices.count)
        XCTAssertEqual(Set(nrows.dropFirst().map { $0[0] }), Set(Self.devices.map(Self.shown)))
        XCTAssertTrue(nrows.dropFirst().allSatisfy { $0.count == 5 && $0[2] == Self.fenceID }, "\(nrows)")

        let nj = try CLI.run(["nearest", "--fences", fences, "--positions", positions, "--format", "ndjson"])
        let nrecords = try nj.out.split(separator: "\n").map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        XCTAssertEqual(Set(nrecords.map { $0["device"] as! String }), Set(Self.devices))
        XCTAssertTrue(nrecords.allSatisfy { $0["fence"] as? String == Self.fenceID })
    }

    /// `contains`' CSV list of ids stays a list: a `;` or `\` in an id is escaped with `\`, so
    /// one fence `a;b` is not two fences `a` and `b` (an outside audit found both printed
    /// `a;b`). Split on unescaped `;` and unescaped, the list gives the ids back.
    func testContainsCSVListKeepsIdsWithSemicolons() throws {
        let ids = ["a;b", "a", "b", #"c\d"#, #"e\;f"#, "g,h"]
        let features = ids.map { id -> String in
            let json = String(data: try! JSONSerialization.data(withJSONObject: [id], options: []), encoding: .utf8)!.dropFirst().dropLast()
            return #"{"type":"Feature","id":\#(json),"properties":{},"geometry":{"type":"Point","coordinates":[10,20]}}"#
        }
        let fences = try CLI.temp(self, "semi.geojson", #"{"type":"FeatureCollection","features":["# + features.map { $0.replacingOccurrences(of: #""properties":{}"#, with: #""properties":{"radius":100}"#) }.joined(separator: ",") + "]}")
        let positions = try CLI.temp(self, "semi.csv", "device,time,lon,lat\nv,0,10,20\n")
        let r = try CLI.run(["contains", "--fences", fences, "--positions", positions])
        XCTAssertEqual(r.status, 0, r.err)
        let cell = Self.parseCSV(r.out)[0][2]
        var items: [String] = []
        var current = ""
        var escaped = false
        for ch in cell {
            if escaped { current.append(ch); escaped = false } else if ch == "\\" { escaped = true } else if ch == ";" {
                items.append(current)
                current = ""
            } else { current.append(ch) }
        }
        items.append(current)
        XCTAssertEqual(items, ids.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }, cell)
        // One id alone is escaped too: `a;b` by itself is not `a` and `b`.
        let one = try CLI.temp(self, "one.geojson", #"{"type":"FeatureCollection","features":["# + features[0].replacingOccurrences(of: #""properties":{}"#, with: #""properties":{"radius":100}"#) + "]}")
        XCTAssertEqual(Self.parseCSV(try CLI.run(["contains", "--fences", one, "--positions", positions]).out)[0][2], #"a\;b"#)
    }

    /// Problems name fences and echo input on one line each, with control characters escaped:
    /// nothing from the input reaches a terminal as a control sequence.
    func testCheckAndErrorsStayOneLineEach() throws {
        let doc = """
            {"type":"FeatureCollection","features":[
             {"type":"Feature","properties":{"id":"bad\\nid\\u001b[2J","radius":-1},"geometry":{"type":"Point","coordinates":[0,0]}},
             {"type":"Feature","properties":{"id":"coord\\r","coord":"mars\\u001b]0;x\\u0007"},"geometry":{"type":"Point","coordinates":[0,0]}}
            ]}
            """
        let path = try CLI.temp(self, "bad.geojson", doc)
        let r = try CLI.run(["check", "--fences", path])
        XCTAssertEqual(r.status, 1)
        let lines = r.out.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.isEmpty }
        XCTAssertEqual(lines.count, 2, r.out)
        XCTAssertTrue(r.out.contains(#"fence bad\nid\u{1B}[2J: invalid-radius"#), r.out)
        XCTAssertFalse(r.out.contains("\u{1B}") || r.out.contains("\r") || r.out.contains("\u{7}"), r.out)
        // A bow-tie repaired by MakeValid is reported by id on one line too.
        let bowtie = try CLI.temp(
            self,
            "bowtie.geojson",
            #"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"id":"bow\ntie"},"geometry":{"type":"Polygon","coordinates":[[[0,0],[2,2],[2,0],[0,2],[0,0]]]}}]}"#)
        let repaired = try CLI.run(["check", "--fences", bowtie, "--repair"])
        XCTAssertEqual(repaired.out.split(separator: "\n").count, 1, repaired.out)
        XCTAssertTrue(repaired.out.contains(#"fence bow\ntie: repaired by MakeValid"#), repaired.out)

        let (fences, _) = try fixtures()
        let bad = try CLI.run(
            ["eval", "--fences", fences, "--positions", "-", "--max-bad", "1"], stdin: "device,time,lon,lat\nx,\u{1B}[2J\u{7},0,0\n")
        XCTAssertTrue(bad.err.contains(#"time "\u{1B}[2J\u{7}" is neither"#), bad.err)
        XCTAssertFalse(bad.err.contains("\u{1B}"), bad.err)
    }

    /// RFC 4180: records of fields, quoted fields may hold commas, quotes ("") and line breaks.
    static func parseCSV(_ text: String) -> [[String]] {
        var rows: [[String]] = []
        var row: [String] = []
        var field = ""
        var quoted = false
        var chars = Array(text.unicodeScalars)[...]
        while let c = chars.popFirst() {
            if quoted {
                if c == "\"" {
                    if chars.first == "\"" {
                        field.unicodeScalars.append("\"")
                        chars.removeFirst()
                    } else {
                        quoted = false
                    }
                } else {
                    field.unicodeScalars.append(c)
                }
            } else if c == "\"" && field.isEmpty {
                quoted = true
            } else if c == "," {
                row.append(field)
                field = ""
            } else if c == "\n" {
                row.append(field)
                rows.append(row)
                row = []
                field = ""
            } else {
                field.unicodeScalars.append(c)
            }
        }
        if !field.isEmpty || !row.isEmpty {
            row.append(field)
            rows.append(row)
        }
        return rows
    }
}
