import FenceEngine
import Foundation
@testable import FenceIO
import XCTest

/// Fence settings and document shapes the coverage audit found no test reading: a radius that
/// is no number (the check ran for no reader), actions written as a JSON array inside text (as
/// a CSV column holds them) or of another type, and documents that hold no features array.
final class GeoJSONSettingErrorTests: XCTestCase {
    func read(_ doc: String) throws -> FenceReadResult {
        try GeoJSONFences.read(Data(doc.utf8), layer: "t", options: FenceInputOptions())
    }

    func point(_ id: String, _ properties: String) -> String {
        #"{"type":"Feature","id":"\#(id)","properties":{\#(properties)},"geometry":{"type":"Point","coordinates":[1,2]}}"#
    }

    func collection(_ features: [String]) -> String {
        #"{"type":"FeatureCollection","features":["# + features.joined(separator: ",\n") + "]}"
    }

    /// A radius that is no number refuses its fence as `invalid-radius`, naming the value as
    /// written; numeric text is a number (README: "metres (number or numeric text)").
    func testRadiusThatIsNoNumberIsRefusedNamingTheValue() throws {
        let result = try read(collection([
            point("text", #""radius":"abc""#),
            point("unit", #""radius":"12 m""#),
            point("bool", #""radius":true"#),
            point("object", #""radius":{"m":5}"#),
            point("list", #""radius":[5]"#),
            point("numeric-text", #""radius":" 1500 ""#),
            point("number", #""radius":1e3"#),
        ]))
        XCTAssertEqual(result.fences.map(\.id), ["numeric-text", "number"])
        XCTAssertEqual(result.fences.map(\.shape), [.circle(center: LonLat(lon: 1, lat: 2), radius: 1500), .circle(center: LonLat(lon: 1, lat: 2), radius: 1000)])
        XCTAssertEqual(result.rejected.map(\.error.kind), Array(repeating: .invalidRadius, count: 5))
        XCTAssertEqual(result.rejected.map(\.error.fence), ["text", "unit", "bool", "object", "list"])
        XCTAssertEqual(result.rejected.map(\.error.reason), [
            #"radius "abc" is not a number"#,
            #"radius "12 m" is not a number"#,
            "radius true is not a number",
            #"radius {"m":5} is not a number"#,
            "radius [5] is not a number",
        ])
    }

    /// Actions given as text holding a JSON array (what a CSV column of a GeoJSON export holds)
    /// read as the list; a number or an object is refused, naming it.
    func testActionsAsArrayTextAndOfTheWrongType() throws {
        let result = try read(collection([
            point("array-text", #""radius":10,"actions":"[\"enter\", \"dwell\"]""#),
            point("ogr-list-text", #""radius":10,"actions":"(2:exit,cross)""#),
            point("number", #""radius":10,"actions":5"#),
            point("object", #""radius":10,"actions":{"enter":true}"#),
            point("unknown-word", #""radius":10,"actions":"[\"enter\",\"leave\"]""#),
        ]))
        XCTAssertEqual(result.fences.map(\.id), ["array-text", "ogr-list-text"])
        XCTAssertEqual(result.fences.map(\.actions), [[.enter, .dwell], [.exit, .cross]])
        XCTAssertEqual(result.rejected.map(\.error.kind), Array(repeating: .invalidSetting, count: 3))
        XCTAssertEqual(result.rejected.map(\.error.reason), [
            "actions must list enter, exit, dwell or cross (got 5)",
            #"actions must list enter, exit, dwell or cross (got {"enter":true})"#,
            #"actions must list enter, exit, dwell or cross (got "["enter","leave"]")"#,
        ])
    }

    /// A document of white space alone, and a FeatureCollection whose `features` is missing or
    /// not an array, are refused as a whole, each saying so.
    func testDocumentsWithoutAFeaturesArrayAreRefused() {
        func reason(_ doc: String) -> String {
            do {
                let r = try read(doc)
                return "read \(r.fences.count) fences"
            } catch {
                return (error as? FenceError)?.reason ?? "\(error)"
            }
        }
        XCTAssertTrue(reason(" \n\t ").hasPrefix("not valid JSON: the document is empty at line 2, column 3"), reason(" \n\t "))
        XCTAssertEqual(reason(#"{"type":"FeatureCollection"}"#), #"the FeatureCollection has no "features" array"#)
        XCTAssertEqual(reason(#"{"type":"FeatureCollection","features":{"a":[1]}}"#), #"the FeatureCollection has no "features" array"#)
        XCTAssertEqual(reason(#"{"type":"FeatureCollection","features":[]}"#), "read 0 fences")
    }
}
