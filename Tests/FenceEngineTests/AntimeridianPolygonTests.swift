@testable import FenceEngine
import XCTest

/// A polygon cut at the antimeridian arrives as a MultiPolygon (RFC 7946 3.1.9).
final class AntimeridianPolygonTests: XCTestCase {
    func ring(_ pts: [(Double, Double)]) -> [LonLat] { pts.map { LonLat(lon: $0.0, lat: $0.1) } }

    func testCutPolygonCoversBothSides() throws {
        let west = Polygon(exterior: ring([(170, -20), (180, -20), (180, -10), (170, -10), (170, -20)]))
        let east = Polygon(exterior: ring([(-180, -20), (-170, -20), (-170, -10), (-180, -10), (-180, -20)]))
        var store = FenceStore()
        try store.add(Fence(id: "am", shape: .polygons([west, east])))
        // Two far-apart parts get one index box each, not one box around the whole world.
        XCTAssertEqual(store.tree.count, 2)
        for (lon, lat) in [(175.0, -15.0), (-175.0, -15.0), (180.0, -15.0), (-180.0, -15.0), (179.999, -10.0)] {
            XCTAssertEqual(store.ids(covering: LonLat(lon: lon, lat: lat)), ["am"], "(\(lon), \(lat))")
        }
        for (lon, lat) in [(0.0, -15.0), (160.0, -15.0), (-160.0, -15.0), (180.0, -21.0)] {
            XCTAssertEqual(store.ids(covering: LonLat(lon: lon, lat: lat)), [], "(\(lon), \(lat))")
        }
        let stats = store.probeStatistics([LonLat(lon: 0, lat: -15)])
        XCTAssertEqual(stats.candidatesPerPosition, 0)
    }
}
