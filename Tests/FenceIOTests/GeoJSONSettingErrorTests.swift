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
        // Said plainly: neither a place in it nor "cut short (truncated?)", which read as if
        // some of it had come.
        XCTAssertEqual(reason(" \n\t "), "the document is empty (white space only)")
        XCTAssertEqual(reason(""), "the document is empty")
        XCTAssertEqual(reason(#"{"type":"FeatureCollection"}"#), #"the FeatureCollection has no "features" array"#)
        XCTAssertEqual(reason(#"{"type":"FeatureCollection","features":{"a":[1]}}"#), #"the FeatureCollection has no "features" array"#)
        XCTAssertEqual(reason(#"{"type":"FeatureCollection","features":[]}"#), "read 0 fences")
    }

    /// The OGR reader refuses what the built-in reader refuses, with the same kinds and
    /// reasons: a radius that is no number, and a geometry past the position or polygon limit
    /// (coverage audit: OGR's radius and limit refusals had never run).
    func testBothReadersRefuseABadRadiusAndAGeometryPastTheLimitsAlike() throws {
        let ring5 = "[[0,0],[1,0],[1,1],[0,1],[0,0]]"
        let ring6 = "[[0,0],[1,0],[2,1],[1,1],[0,1],[0,0]]"
        func polygon(_ id: String, _ type: String, _ coordinates: String) -> String {
            #"{"type":"Feature","id":"\#(id)","properties":{},"geometry":{"type":"\#(type)","coordinates":\#(coordinates)}}"#
        }
        let doc = collection([
            point("text", #""radius":"abc""#),
            point("unit", #""radius":"12 m""#),
            point("ok-circle", #""radius":"15""#),
            polygon("five", "Polygon", "[\(ring5)]"),
            polygon("six", "Polygon", "[\(ring6)]"),
            polygon("two", "MultiPolygon", "[[\(ring5)],[\(ring5)]]"),
        ])
        let path = NSTemporaryDirectory() + "setting-errors-\(UUID().uuidString).geojson"
        try Data(doc.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        var described: [[String]] = []
        for reader in [FenceInputOptions.Reader.native, .ogr] {
            var options = FenceInputOptions()
            options.reader = reader
            options.limits.geometry.maxPositions = 5
            options.limits.geometry.maxPolygons = 1
            let read = try FenceInput.read(path, options: options)
            XCTAssertEqual(read.fences.map(\.id), ["ok-circle", "five"], "\(reader)")
            described.append(read.rejected.map { "\($0.origin.index) \($0.error.fence ?? "-") \($0.error.kind) \($0.error.reason)" })
        }
        XCTAssertEqual(described[0], [
            #"1 text invalidRadius radius "abc" is not a number"#,
            #"2 unit invalidRadius radius "12 m" is not a number"#,
            "5 six limitExceeded 6 positions exceed the limit of 5",
            "6 two limitExceeded 2 polygons exceed the limit of 1",
        ])
        XCTAssertEqual(described[1], described[0])
    }

    /// Values shown in a reason are cut at 40 characters (a repeated key, a group that is an
    /// object); nesting past the limit in a feature id, or in `properties` that is no object,
    /// refuses the feature naming where (coverage audit: none of these had run).
    func testLongValuesAreShortenedAndDeepNestingIsNamed() throws {
        let longKey = String(repeating: "k", count: 45)
        let longGroup = #"{"a":"\#(String(repeating: "x", count: 50))"}"#
        let deep = String(repeating: "[", count: 5) + String(repeating: "]", count: 5)
        let doc = collection([
            point("repeated", #""radius":10,"\#(longKey)":1,"\#(longKey)":2"#),
            point("group", #""radius":10,"group":\#(longGroup)"#),
            #"{"type":"Feature","id":\#(deep),"properties":{"radius":10},"geometry":{"type":"Point","coordinates":[1,2]}}"#,
            #"{"type":"Feature","id":"props","properties":\#(deep),"geometry":{"type":"Point","coordinates":[1,2]}}"#,
            point("fine", #""radius":10,"deep":[[[1]]]"#),
        ])
        var options = FenceInputOptions()
        options.limits.maxNesting = 4
        let read = try GeoJSONFences.read(Data(doc.utf8), layer: "t", options: options)
        XCTAssertEqual(read.fences.map(\.id), ["fine"])
        let nesting = "levels deep, over the limit of 4 (--max-json-nesting; FenceInputLimits.maxNesting in the library)"
        XCTAssertEqual(read.rejected.map { "\($0.error.kind) \($0.error.reason)" }, [
            #"malformedInput key "\#(String(repeating: "k", count: 40))..." appears twice in the feature's properties"#,
            #"invalidSetting property "group" must be a string or a number, not {"a":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx..."#,
            #"limitExceeded "id" is nested 5 "# + nesting,
            #"limitExceeded "properties" is nested 5 "# + nesting,
        ])
    }
}
