import FenceEngine
import FenceIO
import Foundation
import XCTest

/// Test data in every OGR format, made at test time by GDAL itself (`ogr2ogr`) from GeoJSON
/// written here, so no binary fixture is committed.
enum GDALFixtures {
    static let ogr2ogr = "/usr/bin/ogr2ogr"

    /// Skips the test when gdal-bin is missing (.ci/setup installs it).
    static func requireOgr2ogr() throws {
        guard FileManager.default.isExecutableFile(atPath: ogr2ogr) else {
            throw XCTSkip("ogr2ogr is not installed (apt-get install gdal-bin); the OGR format tests need it to make their fixtures")
        }
    }

    /// A fresh temporary folder, removed when `test` ends.
    static func folder(_ test: XCTestCase) throws -> String {
        let dir = NSTemporaryDirectory() + "fence-ogr-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        test.addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        return dir
    }

    static func write(_ text: String, to path: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    /// Runs ogr2ogr; fails the test with its output when it fails.
    static func convert(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: ogr2ogr)
        p.arguments = arguments
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        let message = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        if p.terminationStatus != 0 {
            XCTFail("ogr2ogr \(arguments.joined(separator: " ")) failed: \(String(decoding: message, as: UTF8.self))", file: file, line: line)
            throw XCTSkip("no fixture")
        }
    }

    /// A GeoJSON FeatureCollection of the given features (each a JSON object text).
    static func collection(_ features: [String], crs: String? = nil) -> String {
        let member = crs.map { ",\"crs\":{\"type\":\"name\",\"properties\":{\"name\":\"\($0)\"}}" } ?? ""
        return "{\"type\":\"FeatureCollection\"\(member),\"features\":[\n" + features.joined(separator: ",\n") + "\n]}"
    }

    static func feature(_ properties: String, _ geometry: String) -> String {
        "{\"type\":\"Feature\",\"properties\":{\(properties)},\"geometry\":\(geometry)}"
    }

    static func polygon(_ rings: [[(Double, Double)]]) -> String {
        "{\"type\":\"Polygon\",\"coordinates\":" + ringsJSON(rings) + "}"
    }

    static func multiPolygon(_ polygons: [[[(Double, Double)]]]) -> String {
        "{\"type\":\"MultiPolygon\",\"coordinates\":[" + polygons.map(ringsJSON).joined(separator: ",") + "]}"
    }

    static func point(_ x: Double, _ y: Double) -> String {
        "{\"type\":\"Point\",\"coordinates\":[\(x),\(y)]}"
    }

    static func ringsJSON(_ rings: [[(Double, Double)]]) -> String {
        "[" + rings.map { "[" + $0.map { "[\($0.0),\($0.1)]" }.joined(separator: ",") + "]" }.joined(separator: ",") + "]"
    }

    static func lonLats(_ ring: [(Double, Double)]) -> [LonLat] { ring.map { LonLat(lon: $0.0, lat: $0.1) } }
}
