import FenceEngine
@testable import FenceIO
import Foundation
import XCTest

/// A driver that loses features on the way (skips a line, stops early without a word) is
/// reported at the place it happened, and what it read before still loads (found by an
/// independent audit: a GeoJSONSeq file with a bad line and a FlatGeobuf cut inside its
/// spatial index both passed `fence check` with nothing said).
final class OGRReadingLossTests: XCTestCase {
    typealias G = GDALFixtures

    static func line(_ id: String, radius: Int = 5) -> String {
        #"{"type":"Feature","properties":{"id":"\#(id)","radius":\#(radius)},"geometry":{"type":"Point","coordinates":[0,0]}}"#
    }

    /// A bad line in a GeoJSONSeq file: not JSON at all on the second line (GDAL then gave
    /// the file to its GeoJSON driver, which read the first object only), a record cut short,
    /// and a bad last line. Each is reported where it sits; every good line loads. (The
    /// built-in reader reads `.geojsonl` under `auto`: `GeoJSONSeqTests` has its own; this is
    /// OGR's, with `--fence-reader ogr`.)
    func testGeoJSONSeqBadLineIsReported() throws {
        let dir = try G.folder(self)
        let a = Self.line("a"), c = Self.line("c"), d = Self.line("d")
        let cases: [(String, [String], [String], Int, String)] = [
            ("garbage", [a, "GARBAGE LINE", c, d], ["a", "c", "d"], 2, "JSON parsing error: unexpected character"),
            ("cut", [a, #"{"type":"Feature","properties":{"id":"b"},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0]"#, c], ["a", "c"], 2,
             "JSON parsing error: continue"),
            ("last", [a, c, "GARBAGE"], ["a", "c"], 3, "JSON parsing error: unexpected character"),
        ]
        for (name, lines, loaded, index, message) in cases {
            let path = dir + "/\(name).geojsonl"
            try G.write(lines.joined(separator: "\n") + "\n", to: path)
            var options = FenceInputOptions()
            options.reader = .ogr
            let read = try FenceInput.read(path, options: options)
            XCTAssertEqual(read.reader, .ogr, name)
            XCTAssertEqual(read.fences.map(\.id), loaded, name)
            XCTAssertEqual(read.rejected.count, 1, "\(name): \(read.rejected)")
            guard let r = read.rejected.first else { continue }
            XCTAssertEqual(r.origin.layer, name)
            XCTAssertEqual(r.origin.index, index, name)
            XCTAssertEqual(r.error.kind, .malformedInput, name)
            XCTAssertTrue(r.error.reason.contains(message), "\(name): \(r.error.reason)")
            if name == "last" {
                XCTAssertEqual(r.error.reason, "reading stopped after feature 2: \(message) (at offset 0)")
            } else {
                XCTAssertTrue(
                    r.error.reason.hasPrefix("GDAL failed after feature 1 and read on to this one; anything it skipped is not loaded: "),
                    r.error.reason)
            }
        }
        // The CLI's verdict: a problem, exit 1, and fence c (which covers (0, 0) too) is there.
        let positions = try CLI.temp(self, "origin.csv", "device,time,lon,lat\nd,0,0,0\n")
        let check = try CLI.run(["check", "--fences", dir + "/garbage.geojsonl", "--fence-reader", "ogr"])
        XCTAssertEqual(check.status, 1, check.err)
        XCTAssertEqual(
            check.out,
            "\(dir)/garbage.geojsonl: layer garbage, feature 2 (FID 1): malformed-input: GDAL failed after feature 1 and read on to this one; "
                + "anything it skipped is not loaded: JSON parsing error: unexpected character (at offset 0)\n")
        let eval = try CLI.run(["eval", "--fences", dir + "/garbage.geojsonl", "--positions", positions, "--fence-reader", "ogr"])
        XCTAssertEqual(eval.status, 1, eval.err)
        XCTAssertEqual(eval.out.split(separator: "\n").count, 3, "enter a, c and d: \(eval.out)")
    }

    /// A FlatGeobuf cut inside its spatial index: GDAL 3.6 reads no feature and says nothing;
    /// the header's count tells. Cut among the features instead, GDAL says why it stopped,
    /// and the features before the cut load.
    func testTruncatedFlatGeobufIsReported() throws {
        try G.requireOgr2ogr()
        let dir = try G.folder(self)
        let features = (0..<200).map { i in G.feature(#""id":"p\#(i)","radius":100"#, G.point(Double(i) * 0.01, Double(i) * 0.01)) }
        try G.write(G.collection(features), to: dir + "/ports.geojson")
        try G.convert([dir + "/ports.fgb", dir + "/ports.geojson"])
        let whole = try Data(contentsOf: URL(fileURLWithPath: dir + "/ports.fgb"))
        // Magic bytes (8), header length (4, little-endian), header, then the index.
        let headerLength = whole[8..<12].enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
        let indexStart = 12 + headerLength
        try whole.prefix(indexStart + 100).write(to: URL(fileURLWithPath: dir + "/index_cut.fgb"))
        try whole.prefix(whole.count - 500).write(to: URL(fileURLWithPath: dir + "/tail_cut.fgb"))

        let intact = try FenceInput.read(dir + "/ports.fgb")
        XCTAssertEqual(intact.fences.count, 200)
        XCTAssertEqual(intact.rejected, [])

        let index = try FenceInput.read(dir + "/index_cut.fgb")
        XCTAssertEqual(index.fences.count, 0)
        // The layer keeps the name in the header, whatever the file is called.
        XCTAssertEqual(
            index.rejected.map(\.description),
            [
                "layer ports, feature 1: malformed-input: only 0 of the 200 features the layer announces were read; "
                    + "GDAL ended the layer without a word (a truncated or damaged file?)"
            ])

        let tail = try FenceInput.read(dir + "/tail_cut.fgb")
        XCTAssertGreaterThan(tail.fences.count, 150, "the features before the cut load")
        XCTAssertLessThan(tail.fences.count, 200)
        let n = tail.fences.count
        XCTAssertEqual(tail.fences.map(\.id), Array(intact.fences.map(\.id).prefix(n)))
        XCTAssertEqual(tail.rejected.count, 1)
        XCTAssertEqual(tail.rejected.first?.origin.index, n + 1)
        XCTAssertTrue(
            tail.rejected.first?.error.reason.hasPrefix("reading stopped after feature \(n) of the 200 the layer announces: ") == true,
            "\(tail.rejected)")

        let check = try CLI.run(["check", "--fences", dir + "/index_cut.fgb"])
        XCTAssertEqual(check.status, 1, check.err)
        XCTAssertTrue(check.err.hasPrefix("fence check: 1 features in 1 layer (ogr reader), 0 good fences, 1 with problems"), check.err)
    }

    /// A Shapefile announces its deleted dBase records too, and reading skips them: no loss,
    /// nothing to report (why `OGRLayer.announcedFeatureCount` leaves Shapefile out).
    func testShapefileDeletedRecordIsNoLoss() throws {
        try G.requireOgr2ogr()
        let dir = try G.folder(self)
        try G.write(G.collection([G.feature(#""id":"gone","radius":5"#, G.point(0, 0)), G.feature(#""id":"kept","radius":5"#, G.point(1, 1))]), to: dir + "/two.geojson")
        try FileManager.default.createDirectory(atPath: dir + "/shp", withIntermediateDirectories: true)
        try G.convert([dir + "/shp/two.shp", dir + "/two.geojson"])
        // dBase: the header's length at bytes 8-9; each record starts with a flag, "*" = deleted.
        var dbf = try Data(contentsOf: URL(fileURLWithPath: dir + "/shp/two.dbf"))
        let headerLength = Int(dbf[8]) | Int(dbf[9]) << 8
        dbf[headerLength] = UInt8(ascii: "*")
        try dbf.write(to: URL(fileURLWithPath: dir + "/shp/two.dbf"))
        let read = try FenceInput.read(dir + "/shp/two.shp")
        XCTAssertEqual(read.fences.map(\.id), ["kept"])
        XCTAssertEqual(read.rejected, [])
    }
}
