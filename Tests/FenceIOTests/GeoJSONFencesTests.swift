import FenceEngine
import Foundation
@testable import FenceIO
import XCTest

final class GeoJSONFencesTests: XCTestCase {
    func testFeaturesBecomeFencesAndBadOnesAreReported() throws {
        let doc = """
            {"type":"FeatureCollection","features":[
             {"type":"Feature","properties":{"id":"port","radius":1500,"group":"US","name":"NY"},
              "geometry":{"type":"Point","coordinates":[-74.0,40.7]}},
             {"type":"Feature","id":7,"properties":{"actions":"enter,exit","dwell":60,"expires":"2021-01-01T00:00:00Z"},
              "geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}},
             {"type":"Feature","properties":{"id":"multi","coord":"gcj02"},
              "geometry":{"type":"MultiPolygon","coordinates":[[[[0,0],[1,0],[1,1],[0,0]]],[[[5,5],[6,5],[6,6],[5,5]]]]}},
             {"type":"Feature","properties":{"id":"noradius"},"geometry":{"type":"Point","coordinates":[0,0]}},
             {"type":"Feature","properties":{"id":"line"},"geometry":{"type":"LineString","coordinates":[[0,0],[1,1]]}},
             {"type":"Feature","properties":{"id":"badcoord","coord":"mars"},"geometry":{"type":"Point","coordinates":[0,0]}},
             {"type":"Feature","properties":{},"geometry":{"type":"Point","coordinates":[0,0]}}
            ]}
            """
        let report = try GeoJSONFences.read(Data(doc.utf8))
        XCTAssertEqual(report.fences.map(\.id), ["port", "7", "multi"])
        XCTAssertEqual(report.fences[0].shape, .circle(center: LonLat(lon: -74, lat: 40.7), radius: 1500))
        XCTAssertEqual(report.fences[0].group, "US")
        XCTAssertEqual(report.fences[0].properties["name"], "\"NY\"")
        XCTAssertEqual(report.fences[1].actions, [.enter, .exit])
        XCTAssertEqual(report.fences[1].dwell, 60)
        XCTAssertEqual(report.fences[1].expires, 1_609_459_200)
        XCTAssertEqual(report.fences[2].coord, .gcj02)
        guard case .polygons(let parts) = report.fences[2].shape else { return XCTFail() }
        XCTAssertEqual(parts.count, 2)
        XCTAssertEqual(report.errors.map(\.kind), [.invalidRadius, .malformedInput, .unknownCoordinateSystem, .missingID])
        XCTAssertEqual(report.errors.map(\.line), [4, 5, 6, 7])
        XCTAssertEqual(report.errors[0].fence, "noradius")
    }

    /// A well-formed number past Double's range (1e400) refuses the feature holding it, not
    /// the document, as OGR does (found by an independent audit).
    func testANumberPastDoubleRefusesItsFeatureOnly() throws {
        let doc = """
            {"type":"FeatureCollection","features":[
             {"type":"Feature","properties":{"id":"a"},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1e400,0],[1,1],[0,1],[0,0]]]}},
             {"type":"Feature","properties":{"id":"b","radius":-1e400},"geometry":{"type":"Point","coordinates":[0,0]}},
             {"type":"Feature","properties":{"id":"c"},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1],[0,0]]]}}
            ]}
            """
        let report = try GeoJSONFences.read(Data(doc.utf8))
        var store = FenceStore()
        let added = store.add(report.fences)
        XCTAssertEqual(store.allHandles().map { store.id(of: $0) }, ["c"])
        let refused = report.errors.compactMap(\.fence) + added.filter { $0.error != nil }.map(\.id)
        XCTAssertEqual(Set(refused), ["a", "b"])
    }

    /// Properties come out the same through either reader: nested values as compact JSON
    /// (OGR's JSON columns were quoted as strings), null as no property (the built-in reader
    /// kept `null`, OGR dropped it; found by an independent audit).
    func testPropertiesAreTheSameThroughEitherReader() throws {
        let doc = """
            {"type":"FeatureCollection","features":[{"type":"Feature","properties":{"id":"f","radius":1000,
             "obj":{"a":[1,2,{"b":"x y"}]},"arr":[1,"2"],"nul":null,"s":"t","n":2.5,"yes":true},
             "geometry":{"type":"Point","coordinates":[0,0]}}]}
            """
        let path = NSTemporaryDirectory() + "fence-props-\(UUID().uuidString).geojson"
        try Data(doc.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        var native = FenceInputOptions()
        native.reader = .native
        var ogr = FenceInputOptions()
        ogr.reader = .ogr
        let a = try FenceInput.read(path, options: native).fences[0].properties
        let b = try FenceInput.read(path, options: ogr).fences[0].properties
        XCTAssertEqual(a, ["obj": #"{"a":[1,2,{"b":"x y"}]}"#, "arr": #"[1,"2"]"#, "s": #""t""#, "n": "2.5", "yes": "true"])
        XCTAssertEqual(b, a)
    }

    func testNotGeoJSONIsRefusedAsAWhole() {
        XCTAssertThrowsError(try GeoJSONFences.read(Data("{\"type\":\"FeatureCollection\"".utf8)))
        XCTAssertThrowsError(try GeoJSONFences.read(Data("[1,2]".utf8)))
    }

    func testOutputEscaping() {
        XCTAssertEqual(OutputEscaping.csvField("plain"), "plain")
        XCTAssertEqual(OutputEscaping.csvField("a,b"), "\"a,b\"")
        XCTAssertEqual(OutputEscaping.csvField("say \"hi\""), "\"say \"\"hi\"\"\"")
        XCTAssertEqual(OutputEscaping.csvField("=SUM(A1)"), "\"'=SUM(A1)\"")
        XCTAssertEqual(OutputEscaping.csvField("-12.5"), "-12.5")
        XCTAssertEqual(OutputEscaping.jsonString("a\"b\\c\nd\u{1}é"), "\"a\\\"b\\\\c\\nd\\u0001é\"")
    }
}
