import FenceEngine
import FenceIO
import XCTest

/// `EventWriter` looks a fence's properties up by the id's bytes (`IDTable`): two canonically
/// equivalent spellings (NFC and NFD) are two fences, each carrying its own.
final class EventWriterPropertiesTests: XCTestCase {
    let nfc = "caf\u{E9}"
    let nfd = "cafe\u{301}"

    func square(_ lon: Double, _ lat: Double, _ side: Double = 1) -> [LonLat] {
        [(0.0, 0.0), (side, 0), (side, side), (0, side), (0, 0)].map { LonLat(lon: lon + $0.0, lat: lat + $0.1) }
    }

    /// Event properties are looked up per fence by bytes: each spelling carries its own.
    func testEventWriterCarriesEachSpellingsOwnProperties() {
        let fences = [
            Fence(id: nfc, shape: .polygons([Polygon(exterior: square(0, 0))]), properties: ["name": "\"nfc\""]),
            Fence(id: nfd, shape: .polygons([Polygon(exterior: square(0, 0))]), properties: ["name": "\"nfd\""]),
        ]
        let writer = EventWriter(format: .ndjson, propertyNames: ["name"], fences: fences)
        var engine = EventEngine()
        _ = engine.add(fences)
        var out: [UInt8] = []
        for e in engine.evaluate([Position(device: "v", time: 0, lon: 0.5, lat: 0.5)]).events { writer.append(e, to: &out) }
        let lines = String(decoding: out, as: UTF8.self).split(separator: "\n")
        XCTAssertEqual(lines.count, 2)
        XCTAssertTrue(lines[0].contains("\"name\":\"nfd\""), String(lines[0]))
        XCTAssertTrue(lines[1].contains("\"name\":\"nfc\""), String(lines[1]))
    }

    /// Two fences of one id: the store keeps the first and refuses the second (`duplicate-id`),
    /// and events carry the first's properties, not the refused one's (a review found the
    /// second's, the table taking every fence read).
    func testARepeatedIDCarriesTheKeptFencesProperties() {
        let fences = [
            Fence(id: "a", shape: .polygons([Polygon(exterior: square(0, 0))]), properties: ["name": "\"kept\""]),
            Fence(id: "a", shape: .polygons([Polygon(exterior: square(5, 5))]), properties: ["name": "\"refused\""]),
        ]
        var engine = EventEngine()
        let (results, _) = engine.add(fences)
        XCTAssertNil(results[0].error)
        XCTAssertEqual(results[1].error?.kind, .duplicateID)
        let writer = EventWriter(format: .ndjson, propertyNames: ["name"], fences: fences)
        var out: [UInt8] = []
        let events = engine.evaluate([Position(device: "v", time: 0, lon: 0.5, lat: 0.5)]).events
        XCTAssertEqual(events.count, 1)
        for e in events { writer.append(e, to: &out) }
        let text = String(decoding: out, as: UTF8.self)
        XCTAssertTrue(text.contains(#""properties":{"name":"kept"}"#), text)
    }

    /// A property named twice is carried once, in NDJSON and CSV (a README audit found a JSON
    /// object with the key twice).
    func testAPropertyNamedTwiceIsCarriedOnce() {
        let fence = Fence(id: "a", shape: .polygons([Polygon(exterior: square(0, 0))]), properties: ["time": "1", "zone": "\"z\""])
        var engine = EventEngine()
        _ = engine.add([fence])
        let event = engine.evaluate([Position(device: "v", time: 0, lon: 0.5, lat: 0.5)]).events[0]
        let ndjson = EventWriter(format: .ndjson, propertyNames: ["time", "zone", "time"], fences: [fence])
        XCTAssertEqual(ndjson.propertyNames, ["time", "zone"])
        var out: [UInt8] = []
        ndjson.append(event, to: &out)
        XCTAssertTrue(String(decoding: out, as: UTF8.self).contains(#""properties":{"time":1,"zone":"z"}}"#), String(decoding: out, as: UTF8.self))
        let csv = EventWriter(format: .csv, propertyNames: ["zone", "zone"], fences: [fence])
        XCTAssertTrue(String(decoding: csv.header, as: UTF8.self).hasSuffix(",inside_s,zone\n"), String(decoding: csv.header, as: UTF8.self))
    }

    /// A property named as one of the event's own CSV columns (any case) is headed
    /// `properties.NAME`: no header name twice (README audit), and the row's values unchanged.
    func testAPropertyNamedAsAColumnIsHeadedApart() throws {
        let fence = Fence(
            id: "a", shape: .polygons([Polygon(exterior: square(0, 0))]), properties: ["time": "1", "Event": "\"x\"", "zone": "2"])
        var engine = EventEngine()
        _ = engine.add([fence])
        let event = engine.evaluate([Position(device: "v", time: 0, lon: 0.5, lat: 0.5)]).events[0]
        let csv = EventWriter(format: .csv, propertyNames: ["time", "zone", "Event"], fences: [fence])
        let header = String(decoding: csv.header, as: UTF8.self).dropLast().split(separator: ",").map(String.init)
        XCTAssertEqual(Array(header.suffix(3)), ["properties.time", "zone", "properties.Event"])
        XCTAssertEqual(Set(header.map { $0.lowercased() }).count, header.count, "a header name twice: \(header)")
        var out: [UInt8] = []
        csv.append(event, to: &out)
        let row = String(decoding: out, as: UTF8.self).dropLast().split(separator: ",", omittingEmptySubsequences: false)
        XCTAssertEqual(row.count, header.count)
        XCTAssertEqual(Array(row.suffix(3)), ["1", "2", "x"])
        // A property already named properties.time, after time: headed apart again.
        let both = EventWriter(format: .csv, propertyNames: ["time", "properties.time", "Properties.Time"], fences: [fence])
        let heads = String(decoding: both.header, as: UTF8.self).dropLast().split(separator: ",").suffix(3).map(String.init)
        XCTAssertEqual(heads, ["properties.time", "properties.properties.time", "properties.properties.Properties.Time"])
    }

    /// CSV cells of each kind of property value, as the cell shows it: a string without its
    /// quotes and with its JSON escapes decoded (then quoted for CSV where it needs it, and
    /// defused where a spreadsheet would run it), anything else as written; a missing one
    /// empty. The cells are made once per fence, so two events read the same cells.
    func testCSVCellsOfEachKindOfValue() throws {
        let fence = Fence(
            id: "a", shape: .polygons([Polygon(exterior: square(0, 0))]),
            properties: [
                "plain": #""pier 7""#, "escaped": #""say \"hi\", \u00e9\\n\n""#, "formula": #""=1+2""#,
                "number": "-12.50", "list": "[1,\"x\"]", "none": "null",
            ])
        var engine = EventEngine()
        _ = engine.add([fence])
        let events = engine.evaluate([
            Position(device: "v", time: 0, lon: 0.5, lat: 0.5), Position(device: "v", time: 9, lon: 5, lat: 5),
        ]).events
        XCTAssertEqual(events.map(\.kind), [.enter, .exit])
        let names = ["plain", "escaped", "formula", "number", "list", "none", "missing"]
        let csv = EventWriter(format: .csv, propertyNames: names, fences: [fence])
        var out: [UInt8] = []
        for e in events { csv.append(e, to: &out) }
        let expected = #"pier 7,"say ""hi"", \#u{e9}\n"#
            + "\n" + #"","'=1+2",-12.50,"[1,""x""]",null,"#
        let rows = String(decoding: out, as: UTF8.self)
        XCTAssertEqual(rows.components(separatedBy: expected).count - 1, 2, rows)
    }

    /// An event of a fence the writer was not given (an exit `fence-removed` for a fence a
    /// state file knew and this run does not load) carries no properties: an empty object in
    /// NDJSON, empty cells in CSV, the columns in their places (coverage audit: never written).
    func testAnEventOfAFenceNotLoadedCarriesNoProperties() {
        let loaded = Fence(id: "a", shape: .polygons([Polygon(exterior: square(0, 0))]), properties: ["name": "\"A\"", "zone": "7"])
        let gone = FenceEvent(time: 60, device: "v", fence: "gone", group: nil, kind: .exit, lon: 1, lat: 2, reason: .fenceRemoved, insideSeconds: 60)
        var out: [UInt8] = []
        EventWriter(format: .ndjson, propertyNames: ["name", "zone"], fences: [loaded]).append(gone, to: &out)
        XCTAssertEqual(
            String(decoding: out, as: UTF8.self),
            #"{"time":"1970-01-01T00:01:00.000Z","device":"v","fence":"gone","event":"exit","lon":1.0,"lat":2.0,"reason":"fence-removed","inside_s":60,"properties":{}}"# + "\n")
        out = []
        EventWriter(format: .csv, propertyNames: ["name", "zone"], fences: [loaded]).append(gone, to: &out)
        XCTAssertEqual(String(decoding: out, as: UTF8.self), "1970-01-01T00:01:00.000Z,v,gone,,exit,1.0,2.0,,fence-removed,60,,\n")
    }
}
