import FenceEngine
@testable import FenceIO
import Foundation
import XCTest

/// Properties of typed columns in a source OGR reads without a GeoJSON copy of each feature
/// (a GeoPackage made by `ogr2ogr` from GeoJSON): each carried as the JSON of its value. The
/// coverage audit found OGR's real, boolean, date-time, date and JSON columns carried by no
/// test outside GeoJSON (where the feature's own text is taken: `OGRPropertyParityTests`).
final class OGRColumnPropertiesTests: XCTestCase {
    typealias G = GDALFixtures

    func testTypedColumnsAreCarriedAsJSON() throws {
        try G.requireOgr2ogr()
        let dir = try G.folder(self)
        let features = [
            G.feature(
                #""id":"a","radius":10,"n":7,"big":12345678901234,"real":2.5,"flag":true,"when":"2021-06-01T12:30:00.5+02:00","day":"2020-01-31","text":"x","obj":{"k":[1,"v"]}"#,
                G.point(1, 2)),
            G.feature(
                #""id":"b","radius":10,"n":-3,"big":1,"real":2,"flag":false,"when":"1999-12-31T23:59:59Z","day":"1969-07-20","text":"","obj":[]"#,
                G.point(3, 4)),
            G.feature(#""id":"c","radius":10"#, G.point(5, 6)),
        ]
        try G.write(G.collection(features), to: dir + "/in.geojson")
        try G.convert(["-f", "GPKG", dir + "/zones.gpkg", dir + "/in.geojson", "-nln", "zones"])
        let read = try FenceInput.read(dir + "/zones.gpkg")
        XCTAssertEqual(read.reader, .ogr)
        XCTAssertEqual(read.rejected.count, 0)
        XCTAssertEqual(read.fences.map(\.id), ["a", "b", "c"])
        XCTAssertEqual(read.fences[0].properties, [
            "n": "7", "big": "12345678901234", "real": "2.5", "flag": "true", "when": #""2021-06-01T10:30:00.500Z""#,
            "day": #""2020-01-31""#, "text": #""x""#, "obj": #"{"k":[1,"v"]}"#,
        ])
        XCTAssertEqual(read.fences[1].properties, [
            "n": "-3", "big": "1", "real": "2.0", "flag": "false", "when": #""1999-12-31T23:59:59.000Z""#,
            "day": #""1969-07-20""#, "text": #""""#, "obj": "[]",
        ])
        // Null columns are absent properties, as a GeoJSON feature without them.
        XCTAssertEqual(read.fences[2].properties, [:])
    }
}
