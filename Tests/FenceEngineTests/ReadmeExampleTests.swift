import FenceEngine
import XCTest

/// The README's library examples, as written there, so the README stays true.
final class ReadmeExampleTests: XCTestCase {
    func testContainmentExample() {
        var store = FenceStore()
        let results = store.add([
            .circle(id: "depot", lon: -74.0, lat: 40.7, radius: 500),
            .polygon(id: "yard", exterior: [
                LonLat(lon: 0, lat: 0), LonLat(lon: 1, lat: 0), LonLat(lon: 1, lat: 1), LonLat(lon: 0, lat: 0),
            ]),
        ])
        XCTAssertTrue(results.allSatisfy { $0.error == nil })
        XCTAssertEqual(store.ids(covering: LonLat(lon: 0.5, lat: 0.2)), ["yard"])
        let coverage = store.covering([LonLat(lon: -74.0, lat: 40.7)], threads: 2)
        XCTAssertEqual(coverage[0].map { store.id(of: $0) }, ["depot"])
    }

    func testEventsExample() throws {
        var settings = EventSettings()
        settings.dwell = 300
        settings.hysteresisMargin = 25
        var engine = try EventEngine(settings: settings)
        _ = engine.add([.circle(id: "depot", lon: -74.0, lat: 40.7, radius: 500)])
        let result = engine.evaluate([
            Position(device: "truck-7", time: 1_700_000_000, lon: -74.02, lat: 40.7),
            Position(device: "truck-7", time: 1_700_000_060, lon: -74.0, lat: 40.7),
        ], threads: 2)
        XCTAssertEqual(result.events.map(\.kind), [.enter])
        XCTAssertEqual(result.events.first?.device, "truck-7")
        XCTAssertEqual(engine.devices(insideOf: "depot"), ["truck-7"])
        XCTAssertEqual(engine.fences(insideOf: "truck-7"), ["depot"])
        let exits = engine.remove(id: "depot")
        XCTAssertEqual(exits.map(\.reason), [.fenceRemoved])
        let state = engine.snapshot().encoded()
        XCTAssertEqual(try TrackerSnapshot(decoding: state), engine.snapshot())
    }
}
