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

    /// Longitude 180 and -180 name one line. A polygon whose edge is at 180 covers a position
    /// given as -180 on that edge, and the other way round, in every path that tests
    /// containment: one position, a batch (on 1 and 2 threads), the direct test and events.
    func testAPositionOnTheAntimeridianIsCoveredUnderEitherName() throws {
        var store = FenceStore()
        let added = store.add([
            Fence(id: "east-edge", shape: .polygons([Polygon(exterior: ring([(170, 0), (180, 0), (180, 10), (170, 10), (170, 0)]))])),
            Fence(id: "west-edge", shape: .polygons([Polygon(exterior: ring([(-180, 0), (-170, 0), (-170, 10), (-180, 10), (-180, 0)]))])),
            // Near the antimeridian but not on it: covers neither name.
            Fence(id: "near", shape: .polygons([Polygon(exterior: ring([(-179.5, 0), (-170, 0), (-170, 10), (-179.5, 10), (-179.5, 0)]))])),
            Fence(id: "circle", shape: .circle(center: LonLat(lon: 180, lat: 5), radius: 1000)),
        ])
        XCTAssertEqual(added.compactMap(\.error), [])
        let both = ["circle", "east-edge", "west-edge"]
        let cases: [(LonLat, [String])] = [
            (LonLat(lon: 180, lat: 5), both), (LonLat(lon: -180, lat: 5), both),
            (LonLat(lon: 180, lat: 0), ["east-edge", "west-edge"]), (LonLat(lon: -180, lat: 10), ["east-edge", "west-edge"]),
            (LonLat(lon: -180, lat: 10.5), []), (LonLat(lon: 180, lat: -0.5), []),
            (LonLat(lon: 179.9, lat: 5), ["east-edge"]), (LonLat(lon: -179.9, lat: 5), ["west-edge"]),
        ]
        for (p, want) in cases {
            XCTAssertEqual(store.ids(covering: p), want, "\(p)")
            let direct = store.allHandles().filter { store.fence($0, covers: p) }.map { store.id(of: $0) }.sorted()
            XCTAssertEqual(direct, want, "direct \(p)")
        }
        // The batch path, with enough positions to be cut into chunks.
        let positions = (0..<20_000).map { cases[$0 % cases.count].0 }
        for threads in [1, 2] {
            let coverage = store.covering(positions, threads: threads)
            for (i, p) in positions.enumerated() {
                let got = coverage[i].map { store.id(of: $0) }.sorted()
                if got != cases[i % cases.count].1 {
                    XCTFail("batch, \(threads) threads, position \(i) \(p): \(got)")
                    break
                }
            }
        }
        var engine = EventEngine(store: store)
        let result = engine.evaluate([
            Position(device: "a", time: 0, lon: 175, lat: 5), Position(device: "a", time: 10, lon: -180, lat: 5),
            Position(device: "b", time: 0, lon: -180, lat: 5),
        ])
        let entered = result.events.filter { $0.kind == .enter }.map { "\($0.device) \($0.fence) \($0.time)" }
        // Device a walks from (175, 5) onto the line as -180; b starts on it.
        XCTAssertEqual(entered, ["a east-edge 0.0", "b circle 0.0", "b east-edge 0.0", "b west-edge 0.0", "a circle 10.0", "a west-edge 10.0"])
        XCTAssertFalse(result.events.contains { $0.kind == .exit })
    }

    /// Coordinates within 1e-9 degrees past the range (reprojection noise: Natural Earth's
    /// Russia reaches 180.00000000000006) are taken as the bound; further out is refused.
    func testCoordinatesWithinNoiseOfTheRangeAreTheBound() throws {
        let noisy = 180.00000000000006
        var store = FenceStore()
        let results = store.add([
            Fence(id: "russia-like", shape: .polygons([Polygon(exterior: ring([(170, 60), (noisy, 60), (noisy, 70), (170, 70), (170, 60)]))])),
            .circle(id: "pole", lon: 0, lat: 90 + 1e-12, radius: 1000),
            Fence(id: "too-far", shape: .polygons([Polygon(exterior: ring([(170, 0), (180.000001, 0), (180.000001, 5), (170, 5), (170, 0)]))])),
        ])
        XCTAssertNil(results[0].error)
        XCTAssertNil(results[1].error)
        XCTAssertEqual(results[2].error?.kind, .coordinateOutOfRange)
        XCTAssertEqual(store.ids(covering: LonLat(lon: 180, lat: 65)), ["russia-like"])
        XCTAssertEqual(store.ids(covering: LonLat(lon: -180, lat: 65)), ["russia-like"])
        XCTAssertEqual(store.ids(covering: LonLat(lon: 0, lat: 90)), ["pole"])
    }

    /// The same tolerance on the negative side: -180 and -90 less a trace are the bound, a
    /// coordinate further out is refused (coverage audit: only +180 and +90 were tested).
    func testCoordinatesWithinNoisePastTheNegativeBoundsAreTheBound() throws {
        let noisy = -180 - 1e-12
        var store = FenceStore()
        let results = store.add([
            Fence(id: "chukotka-like", shape: .polygons([Polygon(exterior: ring([(noisy, 60), (-170, 60), (-170, 70), (noisy, 70), (noisy, 60)]))])),
            .circle(id: "south-pole", lon: 0, lat: -90 - 1e-12, radius: 1000),
            .circle(id: "edge", lon: -180 - 0.5e-9, lat: -90 + 0.5, radius: 1000),
            Fence(id: "too-far", shape: .polygons([Polygon(exterior: ring([(-180.000001, 0), (-170, 0), (-170, 5), (-180.000001, 5), (-180.000001, 0)]))])),
            .circle(id: "too-far-south", lon: 0, lat: -90 - 2e-9, radius: 1000),
        ])
        XCTAssertEqual(results.map(\.error?.kind), [nil, nil, nil, .coordinateOutOfRange, .coordinateOutOfRange])
        XCTAssertEqual(store.ids(covering: LonLat(lon: -180, lat: 65)), ["chukotka-like"])
        XCTAssertEqual(store.ids(covering: LonLat(lon: 180, lat: 65)), ["chukotka-like"])
        XCTAssertEqual(store.ids(covering: LonLat(lon: 0, lat: -90)), ["south-pole"])
        guard case .circle(let centre, _)? = store.fence(id: "edge")?.shape else { return XCTFail("edge is not a circle") }
        XCTAssertEqual(centre.lon, -180)
    }
}
