import FenceEngine
@testable import FenceIO
import SeededRandom
import XCTest

/// GDAL's antimeridian cut (`WRAPDATELINE`) snaps vertices within a fraction of a millimetre
/// of ±180 onto the line, which can leave a ring running down the line and back up, or a
/// western piece with a vertex at +180: invalid, though the user's polygon was valid
/// (independent audit on Natural Earth's Fiji and Russia in EPSG:3832). The reader drops the
/// vertices inside each run on the line (`OGRReprojection.withoutRunsOnAntimeridian`), and
/// nothing else: polygons GDAL leaves valid stay as they are.
final class AntimeridianCutTests: XCTestCase {
    typealias G = GDALFixtures

    func cleaned(_ ring: [(Double, Double)]) -> [(x: Double, y: Double)]? {
        OGRReprojection.withoutRunsOnAntimeridian(xs: ArraySlice(ring.map(\.0)), ys: ArraySlice(ring.map(\.1)))
    }

    func points(_ ring: [(x: Double, y: Double)]?) -> [[Double]]? { ring.map { $0.map { [$0.x, $0.y] } } }

    func testRunsOnTheLineAreCutToTheirEnds() {
        // Down the line and back up (GDAL's output for the audit's triangle): the spike goes.
        XCTAssertEqual(
            points(cleaned([(-180, -16.55), (-180, -16.56), (-180, -16.53), (-179.9, -16.50), (-180, -16.55)])),
            [[-179.9, -16.50], [-180, -16.55], [-180, -16.53], [-179.9, -16.50]])
        // A western piece stepping to +180 and back at one latitude (Fiji's): the run cut.
        XCTAssertEqual(
            points(cleaned([(-180, -16.06), (-179.8, -16.02), (-179.9, -16.50), (-180, -16.55), (-180, -16.07), (180, -16.07), (-180, -16.06)])),
            [[-179.8, -16.02], [-179.9, -16.50], [-180, -16.55], [-180, -16.06], [-179.8, -16.02]])
        // A run that begins on one name of the line and ends on the other is left alone.
        XCTAssertNil(cleaned([(170, 0), (-180, 0), (180, 5), (180, 10), (170, 10), (170, 0)]))
        // A step to the other name at another latitude really spans the map: left alone.
        XCTAssertNil(cleaned([(-179, 0), (-180, 0), (180, 5), (-180, 10), (-179, 10), (-179, 0)]))
        // Only exact ±180 is on the line (GDAL's cut writes it so): noise is a vertex like any.
        XCTAssertNil(cleaned([(179.99999999999997, 1), (180, 3), (179.99999999999997, 1), (170, 2), (179.99999999999997, 1)]))
        // Nothing to drop: each run has at most its two ends. Among them, edges spanning 180
        // degrees or more that end on the line (an independent review's rectangles): valid
        // polygons GDAL leaves as they are, and so must the reader.
        XCTAssertNil(cleaned([(170, 0), (180, 0), (180, 10), (170, 10), (170, 0)]))
        XCTAssertNil(cleaned([(-10, -10), (180, -10), (180, 10), (-10, 10), (-10, -10)]))
        XCTAssertNil(cleaned([(10, -10), (-180, -10), (-180, 10), (10, 10), (10, -10)]))
        XCTAssertNil(cleaned([(-180, -10), (0, -10), (180, -10), (180, 10), (0, 10), (-180, 10), (-180, -10)]))
        XCTAssertNil(cleaned([(0, 0), (1, 0), (1, 1), (0, 0)]))
        // A ring that really crosses the line only loses the collinear vertex of its run;
        // one lying on the line is not touched.
        XCTAssertEqual(
            points(cleaned([(170, 0), (180, 0), (180, 1), (180, 2), (-170, 2), (-170, 0), (170, 0)])),
            [[170, 0], [180, 0], [180, 2], [-170, 2], [-170, 0], [170, 0]])
        XCTAssertNil(cleaned([(180, 0), (180, 1), (180, 2), (180, 0)]))
        // A monotone run keeps its ends: collinear vertices go, nothing moves.
        XCTAssertEqual(
            points(cleaned([(170, 0), (180, 0), (180, 4), (180, 10), (170, 10), (170, 0)])),
            [[170, 0], [180, 0], [180, 10], [170, 10], [170, 0]])
    }

    /// Random pieces of a polygon cut at the line, with the run along the line given extra
    /// vertices (back and forth along it, some written as the other name of the line): the
    /// cleaned piece loads and covers exactly what the piece without them covers.
    func testCleanedPiecesCoverWhatThePieceDoes() throws {
        for seed in 0..<200 {
            var rng = SplitMix64(seed: UInt64(seed) &* 0x9E37_79B9 &+ 7)
            let west = seed % 2 == 0
            let line = west ? -180.0 : 180.0
            let inward = west ? 1.0 : -1.0
            // A star-like piece ending on the line: vertices inland, then a run down the line.
            let lat0 = rng.uniform(-60, 60)
            let top = lat0 + rng.uniform(0.5, 3)
            var piece: [(Double, Double)] = [(line, lat0)]
            let inland = 3 + Int(rng.next() % 8)
            for k in 0..<inland {
                let f = Double(k + 1) / Double(inland + 1)
                piece.append((line + inward * rng.uniform(0.1, 2), lat0 + f * (top - lat0)))
            }
            piece.append((line, top))
            let plain = piece + [piece[0]]
            // The same piece with its run on the line given wandering vertices.
            // Some as GDAL writes a western piece's step to +180: the other name, at the
            // latitude of the vertex before it.
            var noisy = piece
            for _ in 0..<(1 + Int(rng.next() % 4)) {
                let lat = min(max(rng.uniform(lat0 - 0.001, top + 0.001), lat0), top)
                noisy.append((line, lat))
                if rng.next() % 3 == 0 { noisy.append((-line, lat)) }
            }
            noisy.append(piece[0])
            guard let cleaned = cleaned(noisy) else { return XCTFail("seed \(seed): nothing cleaned in \(noisy)") }
            let ring = cleaned.map { LonLat(lon: $0.x, lat: $0.y) }
            var store = FenceStore()
            let result = store.add([.polygon(id: "cleaned", exterior: ring), .polygon(id: "plain", exterior: G.lonLats(plain))])
            XCTAssertNil(result[0].error, "seed \(seed): \(cleaned)")
            XCTAssertNil(result[1].error, "seed \(seed)")
            for _ in 0..<200 {
                let p = LonLat(lon: line + inward * rng.uniform(-0.1, 2.2), lat: rng.uniform(lat0 - 0.1, top + 0.1))
                let ids = store.ids(covering: p)
                XCTAssertEqual(ids.contains("cleaned"), ids.contains("plain"), "seed \(seed) at \(p)")
            }
        }
    }

    /// The audit's case end to end: a valid triangle in EPSG:3832 with a vertex 0.2 mm east of
    /// the antimeridian was refused as a self-intersection after the cut; it now loads, and
    /// covers both sides.
    func testTriangleNearTheLineLoads() throws {
        try G.requireOgr2ogr()
        let dir = try G.folder(self)
        let ring = [
            (3_348_783.122, -1_850_775.644), (3_339_584.724, -1_856_942.014), (3_268_801.409, -1_885_369.435),
            (3_348_783.122, -1_850_775.644),
        ]
        try G.write(G.collection([G.feature(#""id":"tri""#, G.polygon([ring]))], crs: "urn:ogc:def:crs:EPSG::3832"), to: dir + "/tri.geojson")
        try G.convert(["-a_srs", "EPSG:3832", dir + "/tri.gpkg", dir + "/tri.geojson"])
        let read = try FenceInput.read(dir + "/tri.gpkg")
        XCTAssertEqual(read.fences.map(\.id), ["tri"])
        var store = FenceStore()
        XCTAssertNil(store.add(read.fences).first?.error)
        // The centroids of the two pieces (the eastern one a sliver), and a point beside it.
        XCTAssertEqual(store.ids(covering: LonLat(lon: -179.972, lat: -16.531)), ["tri"])
        XCTAssertEqual(store.ids(covering: LonLat(lon: 179.788, lat: -16.631)), ["tri"])
        XCTAssertEqual(store.ids(covering: LonLat(lon: 179.9, lat: -16.2)), [])
    }
}
