import FenceEngine
@testable import FenceIO
import XCTest

/// Hostile fence input: each case is refused with a clear error naming its limit, the features
/// around it still load, and the reader's memory stays within what the README states. The
/// large cases run the `fence` binary so its peak resident size can be measured alone.
final class FenceInputLimitTests: XCTestCase {
    /// `.ci/asan` sets FENCE_ASAN: the sanitizer's shadow memory and quarantine inflate the
    /// resident size, so memory bounds are checked in the plain run only.
    static let underAddressSanitizer = ProcessInfo.processInfo.environment["FENCE_ASAN"] != nil

    typealias G = GDALFixtures

    static let follower = G.feature(#""id":"ok","radius":5"#, G.point(0, 0))

    /// Runs `fence check` and returns its output and the peak resident size it reports
    /// (its own VmHWM: a child's rusage would count the test process it was spawned from).
    static func runMeasured(_ arguments: [String]) throws -> (status: Int32, out: String, err: String, maxRSSKiB: Int) {
        let r = try CLI.run(arguments)
        guard let range = r.err.range(of: "peak resident size "),
            let mb = Int(r.err[range.upperBound...].prefix { $0.isNumber })
        else {
            XCTFail("no peak resident size in: \(r.err)")
            return (r.status, r.out, r.err, .max)
        }
        return (r.status, r.out, r.err, mb * 1024)
    }

    static func writeLarge(_ parts: [String], to path: String) throws {
        FileManager.default.createFile(atPath: path, contents: nil)
        let h = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        for p in parts { h.write(Data(p.utf8)) }
        try h.close()
    }

    /// A polygon of ten million vertices (60 MB of GeoJSON): refused at the default limit of a
    /// million positions; at most the limit's 16 MB of coordinates is ever kept.
    func testTenMillionVertexPolygon() throws {
        let dir = try G.folder(self)
        let path = dir + "/big.geojson"
        try Self.writeLarge(
            [
                #"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"id":"big"},"geometry":{"type":"Polygon","coordinates":[["#,
                String(repeating: "[1,2],", count: 9_999_999), "[1,2]]]}},", Self.follower, "]}",
            ], to: path)
        let r = try Self.runMeasured(["check", "--fences", path])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(
            r.err.hasPrefix("fence check: 2 features in 1 layer (native reader), 1 good fences, 1 with problems"), r.err)
        XCTAssertEqual(r.out, "\(path): layer big, feature 1: fence big: limit-exceeded: 10000000 positions exceed the limit of 1000000\n")
        // The file is mapped (its 60 MB of pages count as resident), plus 16 MB of kept
        // coordinates and the process itself: well under 200 MB.
        if !Self.underAddressSanitizer { XCTAssertLessThan(r.maxRSSKiB, 200 * 1024, "peak resident \(r.maxRSSKiB) KiB") }
    }

    /// A MultiPolygon of a million members: refused at 100,000 polygons.
    func testMillionMemberMultiPolygon() throws {
        let dir = try G.folder(self)
        let path = dir + "/multi.geojson"
        try Self.writeLarge(
            [
                #"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"id":"multi"},"geometry":{"type":"MultiPolygon","coordinates":["#,
                String(repeating: "[[[0,0],[1,0],[1,1],[0,0]]],", count: 999_999), "[[[0,0],[1,0],[1,1],[0,0]]]]}},", Self.follower, "]}",
            ], to: path)
        let r = try Self.runMeasured(["check", "--fences", path])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.err.contains("1 good fences, 1 with problems"), r.err)
        XCTAssertEqual(
            r.out,
            "\(path): layer multi, feature 1: fence multi: limit-exceeded: 1000000 polygons exceed the limit of 100000\n")
        if !Self.underAddressSanitizer { XCTAssertLessThan(r.maxRSSKiB, 200 * 1024, "peak resident \(r.maxRSSKiB) KiB") }
    }

    /// Nesting 10,000 deep (and a million deep) in a property, in the coordinates and in an
    /// unknown member: never a recursion, the feature refused, the others loaded.
    func testDeepNesting() throws {
        func deep(_ n: Int) -> String { String(repeating: "[", count: n) + String(repeating: "]", count: n) }
        let doc = G.collection([
            G.feature(#""id":"a","radius":5,"x":"# + deep(10_000), G.point(0, 0)),
            Self.follower,
            G.feature(#""id":"b","radius":5"#, "{\"type\":\"Point\",\"coordinates\":\(deep(10_000))}"),
            "{\"type\":\"Feature\",\"extra\":\(deep(1_000_000)),\"properties\":{\"id\":\"c\",\"radius\":5},\"geometry\":{\"type\":\"Point\",\"coordinates\":[1,1]}}",
            G.feature(#""id":"d","radius":5,"y":{"z":{"w":[1]}}"#, G.point(0, 0)),
        ])
        let read = try GeoJSONFences.read(Data(doc.utf8), layer: "deep", options: FenceInputOptions())
        XCTAssertEqual(read.fences.map(\.id), ["ok", "d"])
        XCTAssertEqual(read.fences[1].properties["y"], #"{"z":{"w":[1]}}"#)
        XCTAssertEqual(
            read.rejected.map { "\($0)" },
            [
                "layer deep, feature 1: fence a: limit-exceeded: \"x\" is nested 10000 levels deep, over the limit of 64 (--max-json-nesting; FenceInputLimits.maxNesting in the library)",
                "layer deep, feature 3: fence b: malformed-input: the Point's coordinates are not [lon, lat]",
                "layer deep, feature 4: fence c: limit-exceeded: \"extra\" is nested 1000000 levels deep, over the limit of 64 (--max-json-nesting; FenceInputLimits.maxNesting in the library)",
            ])
        // The limit is configurable.
        var options = FenceInputOptions()
        options.limits.maxNesting = 2
        let strict = try GeoJSONFences.read(Data(doc.utf8), layer: "deep", options: options)
        XCTAssertEqual(strict.fences.map(\.id), ["ok"])
        XCTAssertEqual(
            strict.rejected.last.map { "\($0)" },
            "layer deep, feature 5: fence d: limit-exceeded: \"y\" is nested 3 levels deep, over the limit of 2 (--max-json-nesting; FenceInputLimits.maxNesting in the library)")
        // Through the CLI: --max-json-nesting.
        let dir = try G.folder(self)
        try G.write(doc, to: dir + "/deep.geojson")
        let cli = try CLI.run(["check", "--fences", dir + "/deep.geojson", "--max-json-nesting", "2"])
        XCTAssertTrue(cli.out.contains("fence d: limit-exceeded: \"y\" is nested 3 levels deep, over the limit of 2"), cli.out)
        // OGR's GeoJSON driver (json-c) refuses the whole document, with its reason.
        XCTAssertThrowsError(try OGRFences.read(dir + "/deep.geojson")) { error in
            let reason = (error as? FenceError)?.reason ?? ""
            XCTAssertTrue(reason.contains("Too many nested objects and/or arrays"), reason)
        }
    }

    /// The geometry limits are options, in the library and on the command line, and the store
    /// is given the same ones.
    func testGeometryLimitsAreConfigurable() throws {
        var options = FenceInputOptions()
        options.limits.geometry.maxPositions = 4
        let doc = G.collection([G.feature(#""id":"sq""#, G.polygon([OGRFormatTests.square]))])
        let read = try GeoJSONFences.read(Data(doc.utf8), layer: "l", options: options)
        XCTAssertEqual(read.rejected.map(\.error.reason), ["5 positions exceed the limit of 4"])
        let dir = try G.folder(self)
        try G.write(doc, to: dir + "/sq.geojson")
        XCTAssertEqual(
            try CLI.run(["check", "--fences", dir + "/sq.geojson", "--max-fence-positions", "4"]).out,
            "\(dir)/sq.geojson: layer sq, feature 1: fence sq: limit-exceeded: 5 positions exceed the limit of 4\n")
        let twin = G.collection([G.feature(#""id":"twin""#, G.multiPolygon([[OGRFormatTests.west], [OGRFormatTests.east]]))])
        try G.write(twin, to: dir + "/twin.geojson")
        for reader in ["native", "ogr"] {
            XCTAssertEqual(
                try CLI.run(["check", "--fences", dir + "/twin.geojson", "--max-fence-polygons", "1", "--fence-reader", reader]).out,
                "\(dir)/twin.geojson: layer twin, feature 1\(reader == "ogr" ? " (FID 0)" : ""): fence twin: limit-exceeded: 2 polygons exceed the limit of 1\n")
        }
    }
}
