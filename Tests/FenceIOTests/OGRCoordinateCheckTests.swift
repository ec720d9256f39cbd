import FenceEngine
@testable import FenceIO
import Foundation
import XCTest

/// Coordinates a layer's CRS cannot hold are refused per feature before GDAL transforms them,
/// never wrapped onto another longitude, and never hang (found by an independent audit: x =
/// 1e18 m in EPSG:3857 hung inside GDAL's transformation, x = 1e12 m loaded at a made-up
/// longitude). The oracle is Web Mercator's closed formula and its bound, x = ±20,037,508 m.
final class OGRCoordinateCheckTests: XCTestCase {
    typealias G = GDALFixtures

    static let mercator = OGRReprojectionTests.mercator

    /// Runs `fence` with a watchdog: a run past `seconds` is killed and fails the test instead
    /// of hanging it. Returns the status, the outputs and the time taken.
    static func runFence(_ args: [String], seconds: Double = 20, file: StaticString = #filePath, line: UInt = #line) throws -> (
        status: Int32, out: String, err: String, elapsed: Double
    ) {
        let p = Process()
        p.executableURL = CLI.binary
        p.arguments = args
        let dir = NSTemporaryDirectory() + "fence-watchdog-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Files, not pipes: a killed child must not leave the reader waiting.
        FileManager.default.createFile(atPath: dir + "/out", contents: nil)
        FileManager.default.createFile(atPath: dir + "/err", contents: nil)
        p.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: dir + "/out"))
        p.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: dir + "/err"))
        let start = Date()
        try p.run()
        while p.isRunning && Date().timeIntervalSince(start) < seconds { usleep(20_000) }
        if p.isRunning {
            p.terminate()
            p.waitUntilExit()
            XCTFail("fence \(args.joined(separator: " ")) still ran after \(seconds) s: killed", file: file, line: line)
        }
        p.waitUntilExit()
        let elapsed = Date().timeIntervalSince(start)
        let out = (try? String(contentsOfFile: dir + "/out", encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: dir + "/err", encoding: .utf8)) ?? ""
        return (p.terminationStatus, out, err, elapsed)
    }

    /// x = 1e18 m in EPSG:3857, through a GeoJSON file declaring the CRS and through a CSV
    /// with `--fence-crs`: that feature is refused at once with its coordinate; the other loads.
    func testHugeCoordinateIsRefusedQuicklyAndTheRestLoad() throws {
        let dir = try G.folder(self)
        let centre = Self.mercator(10, 50)
        let doc = G.collection(
            [
                #"{"type":"Feature","properties":{"id":"huge","radius":10},"geometry":{"type":"Point","coordinates":[1e18,0]}}"#,
                G.feature(#""id":"depot","radius":250"#, G.point(centre.0, centre.1)),
            ], crs: "EPSG:3857")
        try G.write(doc, to: dir + "/huge.geojson")
        try G.write("id,radius,WKT\nhuge,10,\"POINT (1e18 0)\"\ndepot,250,\"POINT (\(centre.0) \(centre.1))\"\n", to: dir + "/huge.csv")
        let refusal = "coordinate-out-of-range: coordinate (1e+18, 0.0) is beyond ±1e10, where no coordinate system places a point on Earth; "
            + "not reprojected from EPSG:3857 (WGS 84 / Pseudo-Mercator)"
        for (args, origin) in [
            (["check", "--fences", dir + "/huge.geojson"], "layer huge, feature 1 (FID 0)"),
            (["check", "--fences", dir + "/huge.csv", "--fence-crs", "EPSG:3857"], "layer huge, feature 1 (FID 1)"),
        ] {
            let run = try Self.runFence(args)
            XCTAssertEqual(run.status, 1, run.err)
            XCTAssertEqual(run.out, "\(args[2]): \(origin): fence huge: \(refusal)\n")
            XCTAssertTrue(run.err.hasPrefix("fence check: 2 features in 1 layer (ogr reader), 1 good fences, 1 with problems"), run.err)
            // A debug build refuses it in about 0.2 s, mostly start-up; GDAL took 5 s for 1e17.
            XCTAssertLessThan(run.elapsed, 5, "\(args)")
        }
    }

    /// Past Web Mercator's ±20,037,508 m but under the magnitude bound, a coordinate maps to a
    /// longitude that does not map back: refused, not wrapped (x = 3e7 used to load at
    /// 90.5°W; a polygon drawn across the antimeridian to x = 21,150,203 m loaded turned
    /// inside out, from 170°E to 170°W the long way round).
    func testCoordinatesPastTheCRSAreRefusedNotWrapped() throws {
        let dir = try G.folder(self)
        let centre = Self.mercator(10, 50)
        let across = [(170.0, 10.0), (190.0, 10.0), (190.0, 20.0), (170.0, 20.0), (170.0, 10.0)].map { Self.mercator($0.0, $0.1) }
        let doc = G.collection(
            [
                #"{"type":"Feature","properties":{"id":"far","radius":10},"geometry":{"type":"Point","coordinates":[1e12,0]}}"#,
                G.feature(#""id":"wrapped","radius":10"#, G.point(3e7, 0)),
                G.feature(#""id":"across""#, G.polygon([across])),
                G.feature(#""id":"inside","radius":10"#, G.point(20_000_000, 0)),
                G.feature(#""id":"depot","radius":250"#, G.point(centre.0, centre.1)),
            ], crs: "EPSG:3857")
        try G.write(doc, to: dir + "/past.geojson")
        let read = try FenceInput.read(dir + "/past.geojson")
        XCTAssertEqual(read.fences.map(\.id), ["inside", "depot"])
        guard case .circle(let inside, _) = read.fences.first?.shape else { return XCTFail("no inside circle") }
        XCTAssertEqual(inside.lon, 20_000_000 / 6_378_137 * 180 / .pi, accuracy: 1e-9, "near the edge, still Web Mercator's")
        XCTAssertEqual(read.rejected.map(\.origin.index), [1, 2, 3])
        XCTAssertEqual(read.rejected.map(\.error.kind), [.coordinateOutOfRange, .coordinateOutOfRange, .coordinateOutOfRange])
        XCTAssertEqual(read.rejected.map(\.error.fence), ["far", "wrapped", "across"])
        let reasons = read.rejected.map(\.error.reason)
        guard reasons.count == 3 else { return }
        XCTAssertTrue(reasons[0].hasPrefix("coordinate (1000000000000.0, 0.0) is beyond ±1e10"), reasons[0])
        XCTAssertTrue(
            reasons[1].hasPrefix(
                "coordinate (30000000.0, 0.0) is outside what EPSG:3857 (WGS 84 / Pseudo-Mercator) can represent: it becomes longitude -90.505"),
            reasons[1])
        XCTAssertTrue(reasons[1].contains("which maps back to (-10075016.68"), reasons[1])
        XCTAssertTrue(reasons[2].hasPrefix("coordinate (\(across[1].0), \(across[1].1)) is outside what EPSG:3857"), reasons[2])
    }

    /// A geographic layer holds longitudes in ±180 and latitudes in ±90 (1e-9° more is noise,
    /// taken as the bound), whatever its CRS: x = 190 in EPSG:4258 was folded to -170 where
    /// EPSG:4326 refused it (independent audit). A NaN (hex WKB in a CSV: WKT has no NaN) is
    /// refused before GDAL sees it.
    func testGeographicRangeAndNonFiniteCoordinates() throws {
        let dir = try G.folder(self)
        try G.write(
            "id,radius,WKT\npacific,10,\"POINT (190 10)\"\nspun,10,\"POINT (1000000 10)\"\nwest,10,\"POINT (-180.000001 0)\"\n"
                + "pole,10,\"POINT (0 90.5)\"\nedge,10,\"POINT (180.0000000005 -90)\"\nfine,10,\"POINT (179.5 10)\"\n",
            to: dir + "/geo.csv")
        for crs in ["EPSG:4258", "EPSG:4269", "EPSG:4979", "EPSG:4326"] {
            var options = FenceInputOptions()
            options.assumedCRS = crs
            let read = try FenceInput.read(dir + "/geo.csv", options: options)
            // EPSG:4326 is not reprojected: the store refuses what the reader passes on.
            var store = FenceStore()
            let added = store.add(read.fences)
            XCTAssertEqual(zip(read.fences, added).filter { $0.1.error == nil }.map(\.0.id), ["edge", "fine"], crs)
            let refused = read.rejected.map { ($0.error.fence ?? "", $0.error.kind) } + added.compactMap { r in r.error.map { (r.id, $0.kind) } }
            XCTAssertEqual(refused.map(\.0).sorted(), ["pacific", "pole", "spun", "west"], crs)
            XCTAssertEqual(Set(refused.map(\.1)), [.coordinateOutOfRange], crs)
            guard case .circle(let centre, 10)? = store.fence(id: "fine")?.shape else { return XCTFail("no circle in \(crs)") }
            XCTAssertEqual(centre.lon, 179.5, accuracy: 1e-6, crs)
            if crs == "EPSG:4258" {
                XCTAssertEqual(
                    read.rejected.first?.error.reason,
                    "coordinate (190.0, 10.0) of EPSG:4258 (ETRS89) is past longitude ±180 or latitude ±90; not folded onto another longitude")
            }
        }
        var options = FenceInputOptions()

        // POINT (NaN 0) as ISO WKB, little-endian.
        try G.write("id,radius,WKT\nnan,10,0101000000000000000000F87F0000000000000000\n", to: dir + "/nan.csv")
        options.assumedCRS = "EPSG:3857"
        let nan = try FenceInput.read(dir + "/nan.csv", options: options)
        XCTAssertEqual(nan.fences.count, 0)
        XCTAssertEqual(nan.rejected.map(\.error.kind), [.coordinateOutOfRange])
        XCTAssertEqual(nan.rejected.map(\.error.reason), ["coordinate (nan, 0.0) is not a finite number"])
    }
}
