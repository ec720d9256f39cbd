import FenceEngine
import Foundation
@testable import FenceIO
import XCTest

/// Polygon and MultiPolygon coordinates of the wrong shape, found by the coverage audit with no
/// test: each refuses its feature with the place named (which polygon, ring and position), and
/// the rest of the document loads (SPEC "Bad fences never enter the store silently"). A third
/// (Z) coordinate is checked as a JSON number and dropped.
final class GeoJSONCoordinateErrorTests: XCTestCase {
    static let square = "[[0,0],[1,0],[1,1],[0,1],[0,0]]"

    func feature(_ id: String, _ type: String, _ coordinates: String) -> String {
        #"{"type":"Feature","id":"\#(id)","properties":{},"geometry":{"type":"\#(type)","coordinates":\#(coordinates)}}"#
    }

    func read(_ features: [String]) throws -> FenceReadResult {
        let doc = #"{"type":"FeatureCollection","features":["# + features.joined(separator: ",\n") + "]}"
        return try GeoJSONFences.read(Data(doc.utf8), layer: "t", options: FenceInputOptions())
    }

    func testCoordinatesOfTheWrongShapeNameThePlace() throws {
        let sq = Self.square
        let result = try read([
            feature("ok", "Polygon", "[\(sq)]"),
            feature("text", "Polygon", #""0 0, 1 0""#),
            feature("position", "Polygon", #"[[[0,0],[1,0],"p",[0,1],[0,0]]]"#),
            feature("ring", "Polygon", "[\(sq), 5]"),
            feature("polygon", "MultiPolygon", "[[\(sq)], 7]"),
            feature("multiring", "MultiPolygon", #"[[\#(sq)], [\#(sq), {"a":1}]]"#),
            feature("multiposition", "MultiPolygon", "[[\(sq)], [[[0,0],[1,0],[1,1],[0,1],[true,0]]]]"),
            feature("last", "MultiPolygon", "[[\(sq)]]"),
        ])
        XCTAssertEqual(result.fences.map(\.id), ["ok", "last"])
        XCTAssertEqual(result.rejected.map(\.origin.index), [2, 3, 4, 5, 6, 7])
        XCTAssertEqual(result.rejected.map(\.error.kind), Array(repeating: .malformedInput, count: 6))
        XCTAssertEqual(result.rejected.map(\.error.reason), [
            "the coordinates are not an array",
            "ring 1 position 3 is not [lon, lat]",
            "ring 2 is not an array",
            "polygon 2 is not an array of rings",
            "ring 2 is not an array",
            "polygon 2 ring 1 position 5 is not [lon, lat]",
        ])
    }

    /// A Z coordinate in any JSON number form is read past and dropped; one that is not a JSON
    /// number (`1.`, `1e`, `01`, `-`) makes the document invalid JSON, naming where.
    func testZCoordinatesAreCheckedAndDropped() throws {
        let withZ = try read([feature("z", "Polygon", "[[[0,0,1.5e+2],[1,0,-2E-1],[1,1,0],[0,1,7e3],[0,0,12.25]]]")])
        XCTAssertEqual(withZ.rejected.count, 0)
        XCTAssertEqual(withZ.fences.map(\.id), ["z"])
        guard case .polygons(let polygons) = withZ.fences.first?.shape else { return XCTFail("not a polygon") }
        XCTAssertEqual(polygons.first?.exterior.map { [$0.lon, $0.lat] }, [[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]])
        for bad in ["1.", "1e", "1e+", "01", "-"] {
            XCTAssertThrowsError(try read([feature("z", "Polygon", "[[[0,0,\(bad)],[1,0],[1,1],[0,1],[0,0]]]")]), bad) { error in
                let reason = (error as? FenceError)?.reason ?? "\(error)"
                XCTAssertTrue(reason.hasPrefix("not valid JSON: malformed number at line 1, column "), "\(bad): \(reason)")
            }
        }
    }
}
