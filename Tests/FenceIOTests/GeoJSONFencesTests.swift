import FenceEngine
import Foundation
@testable import FenceIO
import XCTest

final class GeoJSONFencesTests: XCTestCase {
    /// A document that stops inside a value says it is cut short; UTF-16 text is named with
    /// the command that converts it; other bad JSON says only where (an outside audit found a
    /// download cut after 100,000 bytes reported as "expected , or ] in an array").
    func testCutShortAndUTF16DocumentsAreNamed() throws {
        let whole = #"{"type":"FeatureCollection","features":[{"type":"Feature","id":"a","properties":{},"geometry":{"type":"Point","coordinates":[1,2]}}]}"#
        func reason(_ bytes: [UInt8]) -> String {
            do {
                _ = try GeoJSONFences.read(Data(bytes), layer: "t", options: FenceInputOptions())
                return "read"
            } catch {
                return error.reason
            }
        }
        for cut in [20, 60, whole.utf8.count - 2] {
            let r = reason(Array(whole.utf8.prefix(cut)) + Array("\n".utf8))
            XCTAssertTrue(r.hasPrefix("not valid JSON: ") && r.hasSuffix("where the document ends: it is cut short (truncated?)"), "\(cut): \(r)")
        }
        let garbage = reason(Array((whole.dropLast(3) + "x]}").utf8))
        XCTAssertTrue(garbage.hasPrefix("not valid JSON: ") && !garbage.contains("cut short"), garbage)
        var utf16: [UInt8] = [0xFF, 0xFE]
        for u in whole.utf16 { utf16 += [UInt8(u & 0xFF), UInt8(u >> 8)] }
        XCTAssertEqual(reason(utf16), "UTF-16 text (a byte-order mark FF FE): GeoJSON is UTF-8; convert it, e.g. iconv -f UTF-16 -t UTF-8 FILE")
    }

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
             "obj":{"a":[1,2,{"b":"x y"}]},"arr":[1,"2"],"nul":null,"s":"t","n":2.5,"yes":true,
             "ints":[1,2],"flags":[true,false],"strs":["a","b"],"reals":[1.5,2.5]},
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
        XCTAssertEqual(a, [
            "obj": #"{"a":[1,2,{"b":"x y"}]}"#, "arr": #"[1,"2"]"#, "s": #""t""#, "n": "2.5", "yes": "true",
            // OGR's IntegerList was read with the Integer64List getter, as `[]`; booleans as 1 and 0.
            "ints": "[1,2]", "flags": "[true,false]", "strs": #"["a","b"]"#, "reals": "[1.5,2.5]",
        ])
        XCTAssertEqual(b, a)
    }

    /// A setting left blank (`""`, or only spaces) is not set, through either reader: the
    /// built-in reader refused an empty `coord`, `dwell`, `expires` and `radius`, kept an empty
    /// group and took an empty `actions` as none, where OGR took each as unset (independent
    /// audit). Values that are there but wrong are refused with the value quoted.
    func testBlankSettingsAreUnsetThroughEitherReader() throws {
        func circle(_ props: String) -> String {
            #"{"type":"Feature","properties":{"radius":5,"# + props + #"},"geometry":{"type":"Point","coordinates":[116.4,39.9]}}"#
        }
        let doc = "{\"type\":\"FeatureCollection\",\"features\":[" + [
            circle(#""id":"k_coord","coord":"""#), circle(#""id":"k_group","group":"""#),
            circle(#""id":"k_dwell","dwell":" ""#), circle(#""id":"k_expires","expires":"""#),
            circle(#""id":"k_actions","actions":"""#), circle(#""id":"k_full","coord":"gcj02","group":"g","dwell":60,"actions":"exit""#),
            circle(#""id":"""#), circle(#""id":"k_bad","coord":"bd09mc""#), circle(#""id":"k_bad2","dwell":"soon""#),
        ].joined(separator: ",\n") + "]}"
        var results: [[String]] = []
        for (reader, read) in try Self.readThroughBothReaders(doc) {
            XCTAssertEqual(read.fences.map(\.id), ["k_coord", "k_group", "k_dwell", "k_expires", "k_actions", "k_full"], "\(reader)")
            for f in read.fences.prefix(5) {
                XCTAssertEqual(f.coord, .wgs84, "\(reader) \(f.id)")
                XCTAssertNil(f.group, "\(reader) \(f.id)")
                XCTAssertNil(f.dwell, "\(reader) \(f.id)")
                XCTAssertNil(f.expires, "\(reader) \(f.id)")
                XCTAssertNil(f.actions, "\(reader) \(f.id)")
            }
            let full = read.fences[5]
            XCTAssertEqual([full.coord == .gcj02, full.group == "g", full.dwell == 60, full.actions == .exit], [true, true, true, true], "\(reader)")
            results.append(read.rejected.map { "\($0.error.kind) \($0.error.reason)" })
        }
        XCTAssertEqual(results[0], [
            "missingID the feature has no id (property \"id\" or feature id)",
            #"unknownCoordinateSystem unknown coord "bd09mc" (wgs84, gcj02 or bd09ll)"#,
            #"invalidSetting dwell "soon" is not a number of seconds"#,
        ])
        XCTAssertEqual(results[1].count, 3)
        XCTAssertEqual(results[1].dropFirst(), results[0].dropFirst())
    }

    /// An empty polygon (`[]`) adds nothing: a MultiPolygon's empty part is left out and the
    /// rest loads, and a geometry of nothing else is empty, through either reader. The
    /// built-in reader refused the first as malformed where OGR loaded it (independent audit).
    func testEmptyPolygonsReadTheSameThroughEitherReader() throws {
        let square = "[[0,0],[1,0],[1,1],[0,1],[0,0]]"
        func feature(_ id: String, _ type: String, _ coordinates: String) -> String {
            #"{"type":"Feature","properties":{"id":"\#(id)"},"geometry":{"type":"\#(type)","coordinates":\#(coordinates)}}"#
        }
        let doc = #"{"type":"FeatureCollection","features":["# + [
            feature("part", "MultiPolygon", "[[\(square)],[]]"), feature("first", "MultiPolygon", "[[],[\(square)]]"),
            feature("none", "MultiPolygon", "[]"), feature("nones", "MultiPolygon", "[[],[]]"), feature("ringless", "Polygon", "[]"),
        ].joined(separator: ",") + "]}"
        var outcomes: [[String]] = []
        for (reader, read) in try Self.readThroughBothReaders(doc) {
            XCTAssertEqual(read.fences.map(\.id), ["part", "first"], "\(reader)")
            for f in read.fences {
                XCTAssertEqual(f.shape, .polygons([Polygon(exterior: [(0.0, 0.0), (1, 0), (1, 1), (0, 1), (0, 0)].map { LonLat(lon: $0.0, lat: $0.1) })]), "\(reader) \(f.id)")
            }
            outcomes.append(read.rejected.map { "\($0.error.fence ?? "") \($0.error.kind)" })
        }
        XCTAssertEqual(outcomes[0], ["none emptyGeometry", "nones emptyGeometry", "ringless emptyGeometry"])
        XCTAssertEqual(outcomes[1], outcomes[0])
    }

    /// A GeoJSON document read by the built-in reader and by OGR, in that order.
    static func readThroughBothReaders(_ doc: String) throws -> [(FenceInputOptions.Reader, FenceReadResult)] {
        let path = NSTemporaryDirectory() + "fence-both-\(UUID().uuidString).geojson"
        try Data(doc.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try [FenceInputOptions.Reader.native, .ogr].map { reader in
            var options = FenceInputOptions()
            options.reader = reader
            return (reader, try FenceInput.read(path, options: options))
        }
    }

    /// A square feature with these members besides type and geometry, as bytes.
    static func feature(_ members: [UInt8]) -> [UInt8] {
        Array(#"{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1],[0,0]]]},"#.utf8) + members + [125]
    }

    static func collection(_ features: [[UInt8]]) -> Data {
        var bytes = Array(#"{"type":"FeatureCollection","features":["#.utf8)
        for (i, f) in features.enumerated() { bytes += (i == 0 ? [] : [44, 10]) + f }
        return Data(bytes + Array("]}".utf8))
    }

    /// An id, group, property or property name that is not UTF-8, or holds a `\u` escape of half
    /// a surrogate pair, refuses its feature with the reason, named by its id when that is
    /// text; the rest load. Both were repaired to U+FFFD, so "s\xff\xfeq" and "s\xfe\xffq" were
    /// one id and a duplicate (independent audit). Valid text and whole pairs load as they are.
    func testTextThatIsNotUTF8RefusesItsFeature() throws {
        let doc = Self.collection([
            Self.feature(Array(#""properties":{"id":"s"#.utf8) + [0xFF, 0xFE] + Array(#"q"}"#.utf8)),
            Self.feature(Array(#""properties":{"id":"s"#.utf8) + [0xFE, 0xFF] + Array(#"q"}"#.utf8)),
            Self.feature(Array(#""properties":{"id":"g","group":""#.utf8) + [0xC3] + Array(#""}"#.utf8)),
            Self.feature(Array(#""properties":{"id":"p","name":{"a":["x"#.utf8) + [0xFF] + Array(#""]}}"#.utf8)),
            Self.feature(Array(#""id":"b\ud800","properties":{}"#.utf8)),
            Self.feature(Array(#""properties":{"id":"\udc00x"}"#.utf8)),
            Self.feature(Array(#""properties":{"id":"n","note":"\ud800\u0041"}"#.utf8)),
            Self.feature(Array(#""properties":{"id":"k",""#.utf8) + [0xFF] + Array(#"":1}"#.utf8)),
            Self.feature(Array(#""properties":{"id":"a","actions":["enter","\udbff"]}"#.utf8)),
            Self.feature(Array(#""id":"caf\u00e9","properties":{"e":"\ud83d\ude00 \u00e9","r":"日本"}"#.utf8)),
            Self.feature(Array(#""properties":{"id":"e\u0301","group":"\ud83d\ude00"}"#.utf8)),
        ])
        let report = try GeoJSONFences.read(doc)
        XCTAssertEqual(report.fences.map(\.id), ["caf\u{E9}", "e\u{301}"])
        XCTAssertEqual(report.fences[0].properties, ["e": #""\ud83d\ude00 \u00e9""#, "r": #""日本""#])
        XCTAssertEqual(report.fences[1].group, "\u{1F600}")
        XCTAssertEqual(report.errors, [
            FenceError(.malformedInput, fence: "#1", line: 1, reason: #"property "id" is not valid UTF-8"#),
            FenceError(.malformedInput, fence: "#2", line: 2, reason: #"property "id" is not valid UTF-8"#),
            FenceError(.malformedInput, fence: "g", line: 3, reason: #"property "group" is not valid UTF-8"#),
            FenceError(.malformedInput, fence: "p", line: 4, reason: #"property "name" is not valid UTF-8"#),
            FenceError(.malformedInput, fence: "#5", line: 5, reason: #"the feature id holds a lone surrogate escape \ud800"#),
            FenceError(.malformedInput, fence: "#6", line: 6, reason: #"property "id" holds a lone surrogate escape \udc00"#),
            FenceError(.malformedInput, fence: "n", line: 7, reason: #"property "note" holds a lone surrogate escape \ud800"#),
            FenceError(.malformedInput, fence: "k", line: 8, reason: "a property name is not valid UTF-8"),
            FenceError(.malformedInput, fence: "a", line: 9, reason: #"property "actions" holds a lone surrogate escape \udbff"#),
        ])
    }

    /// The escapes no test had sent (coverage audit): `\b`, `\f` and upper-case hex decode in
    /// an id; a lone low surrogate in a property's value refuses the feature, as a lone high
    /// one does.
    func testBackspaceFormFeedUpperHexAndALoneLowSurrogate() throws {
        let doc = Self.collection([
            Self.feature(Array(#""id":"a\b\f\u00C9\u00e9","properties":{"k":"\u00C9"}"#.utf8)),
            Self.feature(Array(#""properties":{"id":"m","note":["x","\uDC00"]}"#.utf8)),
        ])
        let report = try GeoJSONFences.read(doc)
        XCTAssertEqual(report.fences.map(\.id), ["a\u{8}\u{C}\u{C9}\u{E9}"])
        XCTAssertEqual(report.fences.first?.properties, ["k": #""\u00C9""#])
        XCTAssertEqual(report.errors, [
            FenceError(.malformedInput, fence: "m", line: 2, reason: #"property "note" holds a lone surrogate escape \udc00"#),
        ])
    }

    /// A numeric id keeps the number's text as written (RFC 7946 allows a number id): it went
    /// through Double, so 9007199254740993 became "9007199254740992.0", a false duplicate, and
    /// 1e400 became "inf" (independent audit). An ordinary integer id was and stays "12".
    func testNumericIdKeepsItsTextAsWritten() throws {
        let ids = ["9007199254740993", "9007199254740992", "12345678901234567890123", "1e400", "2e400", "12", "-0", "1.50", "1E2"]
        var features = ids.map { Self.feature(Array(#""properties":{"id":\#($0)}"#.utf8)) }
        features.append(Self.feature(Array(#""id":7,"properties":{"group":5.0,"dwell":6e1}"#.utf8)))
        let report = try GeoJSONFences.read(Self.collection(features))
        XCTAssertEqual(report.errors, [])
        XCTAssertEqual(report.fences.map(\.id), ids + ["7"])
        XCTAssertEqual(report.fences.last?.group, "5.0")
        XCTAssertEqual(report.fences.last?.dwell, 60)
        var store = FenceStore()
        XCTAssertEqual(store.add(report.fences).compactMap(\.error), [])
    }

    /// An id must be a string or a number: `true` and `{"a":1}` were taken as the ids "true"
    /// and `{"a":1}` (independent audit). A null id is no id, as before.
    func testIdThatIsNeitherStringNorNumberRefusesItsFeature() throws {
        let report = try GeoJSONFences.read(Self.collection([
            Self.feature(Array(#""properties":{"id":true}"#.utf8)),
            Self.feature(Array(#""id":{"a":1},"properties":{}"#.utf8)),
            Self.feature(Array(#""properties":{"id":["a"]}"#.utf8)),
            Self.feature(Array(#""id":[1,{"b":null}],"properties":null"#.utf8)),
            Self.feature(Array(#""id":false,"properties":{"id":"x"}"#.utf8)),
            Self.feature(Array(#""id":"y","properties":{"id":null}"#.utf8)),
            Self.feature(Array(#""id":null,"properties":{}"#.utf8)),
            Self.feature(Array(("\"id\":" + String(repeating: "[", count: 70) + String(repeating: "]", count: 70) + ",\"properties\":{}").utf8)),
        ]))
        XCTAssertEqual(report.fences.map(\.id), ["x", "y"])
        XCTAssertEqual(report.errors, [
            FenceError(.malformedInput, fence: "#1", line: 1, reason: #"property "id" must be a string or a number, not true"#),
            FenceError(.malformedInput, fence: "#2", line: 2, reason: #"the feature id must be a string or a number, not {"a":1}"#),
            FenceError(.malformedInput, fence: "#3", line: 3, reason: #"property "id" must be a string or a number, not an array"#),
            FenceError(.malformedInput, fence: "#4", line: 4, reason: #"the feature id must be a string or a number, not [1,{"b":null}]"#),
            FenceError(.missingID, fence: "#7", line: 7, reason: #"the feature has no id (property "id" or feature id)"#),
            // Nested past the limit, the nesting is the reason.
            FenceError(.limitExceeded, fence: "#8", line: 8, reason: #""id" is nested 70 levels deep, over the limit of 64 (--max-json-nesting; FenceInputLimits.maxNesting in the library)"#),
        ])
    }

    /// A key given twice in a feature (a member the reader reads, one of its geometry, or any
    /// property) refuses that feature, naming the key and where, and the rest load: the
    /// built-in reader took the last silently (as GDAL does), where the positions reader
    /// refuses a key that counts given twice. A repeat that may hold the id names the feature
    /// by its number. Unread members and keys inside a property's value are not looked at.
    func testARepeatedKeyRefusesItsFeature() throws {
        let square = #"{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1],[0,0]]]}"#
        let doc = Self.collection([
            Self.feature(Array(#""properties":{"id":"a","id":"b"}"#.utf8)),
            Self.feature(Array(#""properties":{"id":"c","group":"g","customID":"x","group":"h"}"#.utf8)),
            Self.feature(Array(#""properties":{"id":"d","name":null,"name":"x"}"#.utf8)),
            Self.feature(Array(#""properties":{"id":"e","name":1,"name":1}"#.utf8)),
            Self.feature(Array(#""properties":{"id":"f"},"geometry":null"#.utf8)),
            Self.feature(Array(#""id":"g","id":"h","properties":{}"#.utf8)),
            Self.feature(Array(#""properties":{"id":"i"},"properties":{"group":"x"}"#.utf8)),
            Self.feature(Array(#""type":"Feature","properties":{"id":"j"}"#.utf8)),
            Array(#"{"type":"Feature","properties":{"id":"k"},"geometry":{"type":"Point","type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}}"#.utf8),
            Array(#"{"type":"Feature","properties":{"id":"l"},"geometry":{"type":"Polygon","coordinates":[],"coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}}"#.utf8),
            Self.feature(Array(#""properties":{"id":"ok","n":{"a":1,"a":2},"m":null},"bbox":[0,0,1,1],"bbox":[0,0,1,1]"#.utf8)),
            Array(#"{"type":"Feature","id":"ok2","geometry":\#(square),"properties":{"id":null,"name":"n"}}"#.utf8),
        ])
        var parallel = FenceInputOptions()
        parallel.threads = 4
        parallel.parallelMinimumBytes = 0
        for options in [FenceInputOptions(), parallel] {
            let read = try GeoJSONFences.read(doc, layer: "d", options: options)
            XCTAssertEqual(read.fences.map(\.id), ["ok", "ok2"])
            XCTAssertEqual(read.fences.first?.properties, ["n": #"{"a":1,"a":2}"#])
            XCTAssertEqual(read.rejected.map(\.error), [
                FenceError(.malformedInput, fence: "#1", line: 1, reason: #"key "id" appears twice in the feature's properties"#),
                FenceError(.malformedInput, fence: "c", line: 2, reason: #"key "group" appears twice in the feature's properties"#),
                FenceError(.malformedInput, fence: "d", line: 3, reason: #"key "name" appears twice in the feature's properties"#),
                FenceError(.malformedInput, fence: "e", line: 4, reason: #"key "name" appears twice in the feature's properties"#),
                FenceError(.malformedInput, fence: "f", line: 5, reason: #"key "geometry" appears twice in the feature"#),
                FenceError(.malformedInput, fence: "#6", line: 6, reason: #"key "id" appears twice in the feature"#),
                FenceError(.malformedInput, fence: "#7", line: 7, reason: #"key "properties" appears twice in the feature"#),
                FenceError(.malformedInput, fence: "#8", line: 8, reason: #"key "type" appears twice in the feature"#),
                FenceError(.malformedInput, fence: "k", line: 9, reason: #"key "type" appears twice in the feature's geometry"#),
                FenceError(.malformedInput, fence: "l", line: 10, reason: #"key "coordinates" appears twice in the feature's geometry"#),
            ])
        }

        // The command line: `fence check` lists the feature, and the rest of the file loads.
        let path = NSTemporaryDirectory() + "fence-repeat-\(UUID().uuidString).geojson"
        try doc.write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let check = try CLI.run(["check", "--fences", path])
        XCTAssertEqual(check.status, 1, check.err)
        XCTAssertTrue(check.out.contains(#"layer fence-repeat-"#) && check.out.contains(#"feature 2: fence c: malformed-input: key "group" appears twice in the feature's properties"#), check.out)
        XCTAssertTrue(check.err.contains("2 good fences"), check.err)
    }

    /// A group or id that is an object, an array or a boolean refuses its feature, naming the
    /// field, through either reader: both wrote it out as text, differently (`{"a":1}` and
    /// `{ "a": 1 }`, `x,y` and `(2:x,y)`; a review). OGR gives such properties as JSON, list
    /// or boolean columns, each read as the built-in reader reads the JSON. A string or a
    /// number is a group as before.
    func testGroupOrIdThatIsNeitherStringNorNumberIsRefusedByEitherReader() throws {
        let square = #"{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1],[0,0]]]}"#
        func feature(_ properties: String) -> String { #"{"type":"Feature","properties":{\#(properties)},"geometry":\#(square)}"# }
        func outcome(_ read: FenceReadResult) -> [String] {
            read.fences.map { "\($0.id) \($0.group ?? "-")" }
                + read.rejected.map { "\($0.error.fence ?? "") \($0.error.kind) \($0.error.reason)".replacingOccurrences(of: "field \"", with: "property \"") }
        }
        // One property of mixed values: GDAL makes it a JSON column.
        let mixed = "{\"type\":\"FeatureCollection\",\"features\":[" + [
            feature(#""id":"a","group":{"a":1}"#), feature(#""id":"b","group":[1,2]"#), feature(#""id":"c","group":["x","y"]"#),
            feature(#""id":"d","group":[]"#), feature(#""id":"e","group":"plain""#), feature(#""id":"f","group":7"#),
            feature(#""id":"g","customID":{"k":[1]}"#), feature(#""id":"h","group":[1,"x"]"#),
        ].joined(separator: ",\n") + "]}"
        let both = try Self.readThroughBothReaders(mixed).map { outcome($0.1) }
        XCTAssertEqual(both[0], [
            "e plain", "f 7",
            #"a invalidSetting property "group" must be a string or a number, not {"a":1}"#,
            #"b invalidSetting property "group" must be a string or a number, not [1,2]"#,
            #"c invalidSetting property "group" must be a string or a number, not an array"#,
            #"d invalidSetting property "group" must be a string or a number, not an array"#,
            #"g invalidSetting property "customID" must be a string or a number, not {"k":[1]}"#,
            #"h invalidSetting property "group" must be a string or a number, not [1,"x"]"#,
        ])
        XCTAssertEqual(both[1], both[0])

        // One value alone, in the column type GDAL gives it (IntegerList, StringList, Integer
        // (Boolean), IntegerList (Boolean), JSON, RealList), as the group and as the id; and
        // a group of strings beside an array of them, which GDAL makes a StringList of one.
        for value in [#"[1,2]"#, #"["x","y"]"#, "true", "[true,false]", #"{"a":[1]}"#, "[1.5,2]"] {
            for role in ["group", "id"] {
                let only = role == "id" ? [feature(#""id":\#(value)"#)] : [feature(#""id":"a","group":\#(value)"#), feature(#""id":"ok""#)]
                let doc = #"{"type":"FeatureCollection","features":["# + only.joined(separator: ",") + "]}"
                let reads = try Self.readThroughBothReaders(doc).map { outcome($0.1) }
                let fence = role == "id" ? "#1" : "a"
                let kind = role == "id" ? "malformedInput" : "invalidSetting"
                let shown = value.hasPrefix("[\"") ? "an array" : value
                let refusal = #"\#(fence) \#(kind) property "\#(role)" must be a string or a number, not \#(shown)"#
                XCTAssertEqual(reads[0], (role == "id" ? [] : ["ok -"]) + [refusal], value)
                // GDAL keeps a real list's numbers, not their text: 2 is 2.0.
                XCTAssertEqual(reads[1], value == "[1.5,2]" ? reads[0].map { $0.replacingOccurrences(of: "2]", with: "2.0]") } : reads[0], value)
            }
        }
        let lists = #"{"type":"FeatureCollection","features":["# + [
            feature(#""id":"a","group":["x","y"]"#), feature(#""id":"b","group":"plain""#), feature(#""id":"c","group":5"#),
        ].joined(separator: ",") + "]}"
        let listReads = try Self.readThroughBothReaders(lists).map { outcome($0.1) }
        XCTAssertEqual(listReads[0], ["b plain", "c 5", #"a invalidSetting property "group" must be a string or a number, not an array"#])
        XCTAssertEqual(listReads[1], listReads[0])
    }

    /// A null or blank `id` property leaves the feature's own id, through either reader: GDAL
    /// puts a feature's id in its "id" column only where the properties have no "id", so OGR
    /// refused `"id":"x","properties":{"id":null}` (missing-id) where the built-in reader
    /// loaded fence x (a review). The OGR reader reads such a feature's own GeoJSON (GDAL's
    /// native data), and also where GDAL's column lost a value's type: a feature id that is an
    /// object or a boolean, an array of one string, a boolean beside strings.
    func testFeatureIdBehindANullIdPropertyIsTheSameThroughEitherReader() throws {
        let square = #"{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1],[0,0]]]}"#
        func feature(_ id: String?, _ properties: String) -> String {
            #"{"type":"Feature",\#(id.map { "\"id\":\($0)," } ?? "")"properties":{\#(properties)},"geometry":\#(square)}"#
        }
        func outcome(_ read: FenceReadResult) -> [String] {
            read.fences.map { "\($0.id) \($0.group ?? "-") \($0.properties)" }
                + read.rejected.map { "\($0.error.fence ?? "") \($0.error.kind) \($0.error.reason)".replacingOccurrences(of: "field \"", with: "property \"") }
        }
        let doc = #"{"type":"FeatureCollection","features":["# + [
            feature(#""x""#, #""id":null,"name":"n1""#), feature("7", #""id":" ""#), feature(#""y""#, #""id":"py""#),
            feature(#""z""#, ""), feature(nil, #""id":null"#), feature(#""  ""#, #""name":"blank""#),
            feature(#"{"a":1}"#, ""), feature("true", ""), feature(#""[x]""#, ""),
        ].joined(separator: ",\n") + "]}"
        let reads = try Self.readThroughBothReaders(doc).map { outcome($0.1) }
        XCTAssertEqual(reads[0], [
            #"x - ["name": "\"n1\""]"#, "7 - [:]", "py - [:]", "z - [:]", "[x] - [:]",
            #"#5 missingID the feature has no id (property "id" or feature id)"#,
            #"#6 missingID the feature has no id (property "id" or feature id)"#,
            #"#7 malformedInput the feature id must be a string or a number, not {"a":1}"#,
            "#8 malformedInput the feature id must be a string or a number, not true",
        ])
        XCTAssertEqual(Array(reads[1].prefix(5)), Array(reads[0].prefix(5)))
        // OGR words a missing id as its column's: the column is there, empty.
        XCTAssertEqual(reads[1].dropFirst(5).map { $0.prefix(12) }, ["#5 missingID", "#6 missingID"] + reads[0].dropFirst(7).map { $0.prefix(12) })
        XCTAssertEqual(Array(reads[1].suffix(2)), Array(reads[0].suffix(2)))

        // Types GDAL's columns lose: an array of one string beside strings, a boolean beside
        // strings, as group and as id.
        let lost = #"{"type":"FeatureCollection","features":["# + [
            feature(#""a""#, #""group":["g"]"#), feature(#""b""#, #""group":"plain""#), feature(#""c""#, #""group":true"#),
            feature(#""d""#, #""group":["g","h"]"#), feature(nil, #""id":["e"]"#), feature(nil, #""id":"f""#), feature(nil, #""id":false"#),
        ].joined(separator: ",\n") + "]}"
        let lostReads = try Self.readThroughBothReaders(lost).map { outcome($0.1) }
        XCTAssertEqual(lostReads[0], [
            "b plain [:]", "f - [:]",
            #"a invalidSetting property "group" must be a string or a number, not an array"#,
            #"c invalidSetting property "group" must be a string or a number, not true"#,
            #"d invalidSetting property "group" must be a string or a number, not an array"#,
            #"#5 malformedInput property "id" must be a string or a number, not an array"#,
            #"#7 malformedInput property "id" must be a string or a number, not false"#,
        ])
        XCTAssertEqual(lostReads[1], lostReads[0])
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
