import FenceEngine
@testable import FenceIO
import Foundation
import XCTest

/// A CSV without a header line (T-Drive's `id,datetime,lon,lat` rows, say), read with its
/// columns named (`PositionReader(columns:)`, `fence --columns`): the first line is data, and
/// everything else is as for a CSV with that header.
final class HeaderlessCSVTests: XCTestCase {
    func read(_ text: String, columns: [String]?, format: PositionReader.Format? = nil) throws -> ([Position], [PositionLineError]) {
        let path = NSTemporaryDirectory() + "headerless-\(UUID().uuidString)"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try PositionReader(path: path, format: format, columns: columns).readAll()
    }

    func testRowsReadAsUnderTheSameHeader() throws {
        let rows = "1,2008-02-02 15:36:08,116.51172,39.92123\n1,2008-02-02 15:46:08,116.51135,39.93883\n2,0,0.5,0.5\n"
        let (p, e) = try read(rows, columns: ["id", "datetime", "lon", "lat"])
        XCTAssertEqual(e, [])
        let (withHeader, _) = try read("id,datetime,lon,lat\n" + rows, columns: nil)
        XCTAssertEqual(p, withHeader)
        XCTAssertEqual(p.count, 3)
        XCTAssertEqual(p[0], Position(device: "1", time: 1_201_966_568, lon: 116.51172, lat: 39.92123))
    }

    func testDelimiterIsTheFirstLinesAndOtherColumnsAreKeptOut() throws {
        for (delimiter, text) in [("\t", "x\t7\t10\t20\t5\n"), (";", "x;7;10;20;5\n"), (",", "x,7,10,20,5\n")] {
            let (p, e) = try read(text, columns: ["device", "time", "lon", "lat", "speed"])
            XCTAssertEqual(e, [], delimiter)
            XCTAssertEqual(p, [Position(device: "x", time: 7, lon: 10, lat: 20)], delimiter)
        }
        // Named `accuracy`, a column is read as accuracy, as under a header.
        let (p, _) = try read("x,7,10,20,5\n", columns: ["device", "time", "lon", "lat", "accuracy"])
        XCTAssertEqual(p.first?.accuracy, 5)
    }

    func testFirstLineIsLineOneAndCanBeBad() throws {
        let (p, e) = try read("a,NaN,1,2\nb,3,1,2\nc,4,1\n", columns: ["device", "time", "lon", "lat"])
        XCTAssertEqual(p.map(\.device), ["b"])
        XCTAssertEqual(e.map(\.line), [1, 3])
    }

    func testByteOrderMarkIsNotData() throws {
        let (p, e) = try read("\u{FEFF}dev,5,1,2\n", columns: ["device", "time", "lon", "lat"])
        XCTAssertEqual(e, [])
        XCTAssertEqual(p.first?.device, "dev")
    }

    func testColumnsMakeTheInputCSV() throws {
        // Columns make it CSV whatever the format said: a JSON object after the first line is a
        // bad CSV line (a first line that is one refuses the input, below).
        let (p, e) = try read("b,1,2,3\n{\"device\":\"a\"}\n", columns: ["device", "time", "lon", "lat"], format: .ndjson)
        XCTAssertEqual(p.map(\.device), ["b"])
        XCTAssertEqual(e.map(\.line), [2])
    }

    /// The first line's delimiter is the one that splits it, outside quotes, into as many
    /// fields as columns were named.
    func testDelimiterIgnoresQuotedText() throws {
        let (p, e) = try read("\"a;b;c;d;e\",2008-02-02 15:36:08,1,1\nz,0,2,2\n", columns: ["id", "datetime", "lon", "lat"])
        XCTAssertEqual(e, [])
        XCTAssertEqual(p.map(\.device), ["a;b;c;d;e", "z"])
        let (q, f) = try read("dev\t\"a,b,c,d,e\"\t5\t1\t1\n", columns: ["device", "note", "time", "lon", "lat"])
        XCTAssertEqual(f, [])
        XCTAssertEqual(q.first?.time, 5)
    }

    func testNDJSONInputWithColumnsIsRefusedAsAWhole() {
        XCTAssertThrowsError(try read("{\"device\":\"a\",\"time\":1,\"lon\":2,\"lat\":3}\n", columns: ["device", "time", "lon", "lat"])) { error in
            XCTAssertTrue("\(error)".contains("looks like NDJSON"), "\(error)")
        }
    }

    func testALineOfOnlyAByteOrderMarkIsBlank() throws {
        let (p, e) = try read("\u{FEFF}\r\nb,3,1,2\n", columns: ["device", "time", "lon", "lat"])
        XCTAssertEqual(e, [])
        XCTAssertEqual(p.map(\.device), ["b"])
    }

    func testFieldCountMessagesNameTheColumns() throws {
        let (_, e) = try read("a,1,2,3,4\nb,1,2\n", columns: ["device", "time", "lon", "lat"])
        XCTAssertEqual(e.map(\.line), [1, 2])
        XCTAssertTrue(e[0].reason.contains("--columns' 4 fields"), e[0].reason)
        XCTAssertTrue(e[1].reason.contains("3 fields where the columns named are 4"), e[1].reason)
    }

    func testColumnsLackingAFieldAreRefused() {
        XCTAssertNoThrow(try PositionReader.checkColumns(["mmsi", "basedatetime", "x", "y", "sog"]))
        XCTAssertThrowsError(try PositionReader.checkColumns(["device", "when", "lon", "lat"])) { error in
            XCTAssertTrue("\(error)".contains("lack time"), "\(error)")
        }
        XCTAssertThrowsError(try PositionReader.checkColumns([])) { error in
            XCTAssertTrue("\(error)".contains("lack device"), "\(error)")
        }
    }

    /// The reader refuses what `checkColumns` refuses up front, for a library caller that did
    /// not ask it: columns lacking a field refuse the whole input at its first line, naming
    /// the columns (not a CSV header). An empty input with columns is empty, without the hint
    /// about a header line (coverage audit: neither path had run).
    func testReaderRefusesColumnsLackingAFieldAndAnEmptyInput() throws {
        XCTAssertThrowsError(try read("a,7,1,2\nb,8,1,2\n", columns: ["device", "when", "lon", "lat"])) { error in
            let e = error as? FenceError
            XCTAssertEqual(e?.line, 1)
            XCTAssertEqual(e?.reason.hasPrefix(#"the columns "device,when,lon,lat" lacks time"#), true, "\(error)")
            XCTAssertEqual(e?.reason.contains("CSV header"), false, "\(error)")
        }
        // Rows of empty cells are no lines (README), before the data as after it: an input of
        // nothing else is empty, and they do not choose the delimiter of the data after them.
        for empty in ["", "\n\n", ",,,\n", "\u{FEFF},,,\r\n\n;;;\n\t\t\t\n"] {
            XCTAssertThrowsError(try read(empty, columns: ["device", "time", "lon", "lat"]), empty.debugDescription) { error in
                XCTAssertEqual((error as? FenceError)?.reason, "the input is empty", empty.debugDescription)
            }
        }
        let (p, e) = try read(",,,\nb\t3\t1\t2\n\t\t\t\nc\t4\t1\t2\n", columns: ["device", "time", "lon", "lat"])
        XCTAssertEqual(e, [])
        XCTAssertEqual(p.map(\.device), ["b", "c"])
    }

    /// Without columns, a headerless file is refused as a whole, and the message says how to
    /// read it.
    func testHeaderlessFileWithoutColumnsPointsToThem() throws {
        XCTAssertThrowsError(try read("1,2008-02-02 15:36:08,116.51172,39.92123\n", columns: nil)) { error in
            XCTAssertTrue("\(error)".contains("--columns"), "\(error)")
        }
    }

    func testCLIReadsAHeaderlessFile() throws {
        let fences = try CLI.temp(self, "fences.geojson", CLI.fences)
        let rows = try CLI.temp(self, "rows.txt", "v1,0,0,0\nv1,60,0.03,0.01\n")
        let headed = try CLI.temp(self, "headed.csv", "device,time,lon,lat\nv1,0,0,0\nv1,60,0.03,0.01\n")
        let named = try CLI.run(["eval", "--fences", fences, "--positions", rows, "--columns", "device, time, lon, lat"])
        let plain = try CLI.run(["eval", "--fences", fences, "--positions", headed])
        XCTAssertEqual(named.status, 0, named.err)
        XCTAssertEqual(named.out, plain.out)
        XCTAssertFalse(named.out.isEmpty)
        for command in ["contains", "nearest"] {
            let a = try CLI.run([command, "--fences", fences, "--positions", rows, "--columns", "device,time,lon,lat"])
            let b = try CLI.run([command, "--fences", fences, "--positions", headed])
            XCTAssertEqual(a.status, 0, a.err)
            XCTAssertEqual(a.out, b.out, command)
        }
        let missing = try CLI.run(["eval", "--fences", fences, "--positions", rows, "--columns", "device,lon,lat"])
        XCTAssertEqual(missing.status, 2)
        XCTAssertTrue(missing.err.contains("--columns") && missing.err.contains("lack time"), missing.err)
        let ndjson = try CLI.run(["eval", "--fences", fences, "--positions", rows, "--columns", "device,time,lon,lat", "--input-format", "ndjson"])
        XCTAssertEqual(ndjson.status, 2, ndjson.err)
        let quoted = try CLI.run(["eval", "--fences", fences, "--positions", rows, "--columns", "\"device\",time,lon,\"lat\""])
        XCTAssertEqual(quoted.out, plain.out)
        // publish checks its options before connecting: a usage error, not "no server".
        let publish = try CLI.run(["publish", "--nats", "nats://127.0.0.1:1", "--positions", rows, "--columns", "a,b"])
        XCTAssertEqual(publish.status, 2, publish.err)
        XCTAssertTrue(publish.err.contains("--columns"), publish.err)
    }
}
