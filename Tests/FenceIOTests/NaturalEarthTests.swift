@testable import FenceEngine
@testable import FenceIO
import Foundation
import SeededRandom
import XCTest

/// Real polygons: Natural Earth's 1:110m countries (Tests/Fixtures/naturalearth_lowres.geojson.gz,
/// read as it is, compressed), with MultiPolygons, holes (Lesotho in South Africa), Fiji and
/// Russia cut at the antimeridian, Antarctica reaching -90, and one invalid country (Sudan,
/// as GEOS says). The oracle is GEOS prepared `covers` on geometries built straight from the
/// input coordinates, with a position on ±180 also asked under its other name (the engine's
/// rule for the line): no grid, no edge index, no R-tree.
final class NaturalEarthTests: XCTestCase {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/naturalearth_lowres.geojson.gz").path

    struct Oracle {
        let context = GEOSContext()
        var fences: [(id: String, box: (minX: Double, minY: Double, maxX: Double, maxY: Double), prepared: GEOSPreparedGeometry)] = []

        /// GEOS's reason the fence is invalid, or nil; a valid one is kept for `ids`.
        mutating func add(_ fence: Fence) -> String? {
            guard case .polygons(let polygons) = fence.shape else { return "not a polygon" }
            var coords: [Double] = []
            var rings: [(count: Int, isExterior: Bool)] = []
            for p in polygons {
                for (r, ring) in p.rings.enumerated() {
                    for q in ring { coords += [q.lon, q.lat] }
                    rings.append((ring.count, r == 0))
                }
            }
            let context = context
            guard let g = coords.withUnsafeBufferPointer({ context.makePolygonal(coords: $0, rings: rings) }) else { return "GEOS could not build it" }
            if let reason = context.invalidityReason(g) { return reason }
            let xs = stride(from: 0, to: coords.count, by: 2).map { coords[$0] }
            let ys = stride(from: 1, to: coords.count, by: 2).map { coords[$0] }
            fences.append((fence.id, (xs.min()!, ys.min()!, xs.max()!, ys.max()!), GEOSPreparedGeometry(g)!))
            return nil
        }

        func ids(covering p: LonLat) -> [String] {
            var names = [p]
            if abs(p.lon) == 180 { names.append(LonLat(lon: -p.lon, lat: p.lat)) }
            return fences.filter { f in
                names.contains { q in
                    q.lon >= f.box.minX && q.lon <= f.box.maxX && q.lat >= f.box.minY && q.lat <= f.box.maxY
                        && f.prepared.covers(x: q.lon, y: q.lat)!
                }
            }.map(\.id).sorted()
        }
    }

    func testCountriesLoadAndCoverWhatGEOSSays() throws {
        let read = try FenceInput.read(Self.fixture)
        XCTAssertEqual(read.reader, .native)
        XCTAssertEqual(read.fences.count, 177)
        var oracle = Oracle()
        var store = FenceStore()
        let results = store.add(read.fences)
        for (fence, result) in zip(read.fences, results) {
            let reason = oracle.add(fence)
            // Accepted exactly when GEOS finds the input valid, refused with GEOS's reason.
            XCTAssertEqual(result.error == nil, reason == nil, "\(fence.id): engine \(String(describing: result.error)), GEOS \(reason ?? "valid")")
            if let reason, let error = result.error { XCTAssertTrue(error.reason.hasPrefix(reason.prefix(17)), "\(fence.id): \(error) / \(reason)") }
        }
        XCTAssertEqual(results.filter { $0.error != nil }.map(\.id), ["Sudan"])

        var rng = SplitMix64(seed: 110)
        var points: [LonLat] = []
        for _ in 0..<20_000 { points.append(LonLat(lon: rng.uniform(-180, 180), lat: rng.uniform(-90, 90))) }
        // On the antimeridian under both names, and just off it.
        for _ in 0..<2_000 {
            let lat = rng.uniform(-90, 90)
            let off = [0, 1e-12, 1e-9, 1e-6, 1e-3][Int(rng.next() % 5)]
            points.append(LonLat(lon: rng.next() % 2 == 0 ? 180 - off : -180 + off, lat: lat))
        }
        // Each country's vertices and edge midpoints as they are, and nudged by 1e-10 to 1e-4
        // degrees: the cases the grids and the edge index decide at their edges.
        for fence in read.fences {
            guard case .polygons(let polygons) = fence.shape else { continue }
            for ring in polygons.flatMap(\.rings) {
                let step = max(1, ring.count / 30)
                for i in stride(from: 0, to: ring.count - 1, by: step) {
                    let a = ring[i]
                    let b = ring[i + 1]
                    let mid = LonLat(lon: (a.lon + b.lon) / 2, lat: (a.lat + b.lat) / 2)
                    for c in [a, mid] {
                        points.append(c)
                        for _ in 0..<3 {
                            let d = pow(10, rng.uniform(-10, -4))
                            let angle = rng.uniform(0, 2 * .pi)
                            let q = LonLat(lon: c.lon + d * cos(angle), lat: c.lat + d * sin(angle))
                            if abs(q.lon) <= 180 && abs(q.lat) <= 90 { points.append(q) }
                        }
                    }
                }
            }
        }
        var mismatches: [String] = []
        for p in points {
            let got = store.ids(covering: p).sorted()
            let want = oracle.ids(covering: p)
            if got != want { mismatches.append("\(p): engine \(got), GEOS \(want)") }
        }
        XCTAssertGreaterThan(points.count, 30_000)
        print("NaturalEarthTests: \(points.count) positions")
        XCTAssertEqual(mismatches.count, 0, "\(mismatches.prefix(10))")
        // The batch path on two workers gives the same pairs.
        let coverage = store.covering(points, threads: 2)
        for (k, p) in points.enumerated() where k % 7 == 0 {
            XCTAssertEqual(coverage[k].map { store.slotSettings[Int($0.rawValue)].id }.sorted(), oracle.ids(covering: p), "\(p)")
        }
    }

    /// The same countries through GDAL: written in a Pacific-centred Mercator (EPSG:3832,
    /// without Antarctica, which Mercator cannot hold), read back through OGR, reprojected
    /// to WGS84 and cut again at the antimeridian (`WRAPDATELINE` and the reader's cleanup of
    /// its runs on the line). Fiji's and Russia's parts share an edge along 180 there (each
    /// was cut at it), which is invalid as GEOS sees it, and they are refused with Sudan.
    /// Every other country covers what the original does, away from its boundary by more
    /// than the round trip's noise (1 m).
    func testCountriesReprojectedThroughGDALCoverTheSame() throws {
        try GDALFixtures.requireOgr2ogr()
        let dir = try GDALFixtures.folder(self)
        try GDALFixtures.convert(["-t_srs", "EPSG:3832", "-where", "iso_a3 <> 'ATA'", dir + "/ne3832.gpkg", "/vsigzip/" + Self.fixture])
        let read = try FenceInput.read(dir + "/ne3832.gpkg")
        XCTAssertEqual(read.reader, .ogr)
        XCTAssertEqual(read.fences.count, 176)
        var projected = FenceStore()
        let results = projected.add(read.fences)
        XCTAssertEqual(results.filter { $0.error != nil }.map(\.id).sorted(), ["Fiji", "Russia", "Sudan"])
        let original = try FenceInput.read(Self.fixture)
        var oracle = Oracle()
        var store = FenceStore()
        store.add(original.fences)
        let refused: Set<String> = ["Fiji", "Russia", "Sudan", "Antarctica"]
        for fence in original.fences where !refused.contains(fence.id) { _ = oracle.add(fence) }
        var rng = SplitMix64(seed: 3832)
        var compared = 0
        var nearBoundary = 0
        var mismatches: [String] = []
        for _ in 0..<20_000 {
            let p = LonLat(lon: rng.uniform(-180, 180), lat: rng.uniform(-84, 84))
            let got = projected.ids(covering: p).sorted()
            let want = oracle.ids(covering: p)
            if got == want {
                compared += 1
            } else if abs(store.nearestBoundary(to: p).distance) < 1 {
                nearBoundary += 1
            } else {
                mismatches.append("\(p): through GDAL \(got), original \(want)")
            }
        }
        XCTAssertEqual(mismatches.count, 0, "\(mismatches.prefix(10))")
        XCTAssertGreaterThan(compared, 19_900, "\(nearBoundary) within 1 m of a boundary")
    }

    /// Fiji, Russia, New Zealand and the USA in a Pacific-centred Mercator with their parts
    /// joined across 180 (Tests/Fixtures/ne_pacific_3832_joined.gpkg, from an independent
    /// audit): GDAL's cut back at the antimeridian snapped vertices near the line onto it and
    /// left zero-width spikes, and Fiji and Russia were refused as self-intersecting. They load,
    /// and cover what Natural Earth's originals do, on both sides of the line.
    func testPacificCountriesJoinedAcrossTheLineLoad() throws {
        let path = URL(fileURLWithPath: Self.fixture).deletingLastPathComponent().appendingPathComponent("ne_pacific_3832_joined.gpkg").path
        let read = try FenceInput.read(path)
        XCTAssertEqual(read.reader, .ogr)
        let ids = ["Fiji", "New Zealand", "Russia", "United States of America"]
        XCTAssertEqual(read.fences.map(\.id).sorted(), ids)
        var joined = FenceStore()
        XCTAssertEqual(joined.add(read.fences).compactMap(\.error), [])
        let originals = try FenceInput.read(Self.fixture).fences.filter { ids.contains($0.id) }
        var oracle = Oracle()
        var store = FenceStore()
        store.add(originals)
        for fence in originals { XCTAssertNil(oracle.add(fence)) }
        var rng = SplitMix64(seed: 180)
        var compared = 0
        var mismatches: [String] = []
        for k in 0..<22_000 {
            let lat = rng.uniform(-50, 72)
            let lon = k < 20_000 ? (rng.next() % 2 == 0 ? rng.uniform(165, 180) : rng.uniform(-180, -165)) : (k % 2 == 0 ? 180 : -180)
            let p = LonLat(lon: lon, lat: lat)
            let got = joined.ids(covering: p).sorted()
            let want = oracle.ids(covering: p)
            if got == want {
                compared += 1
            } else if abs(store.nearestBoundary(to: p).distance) >= 1 {
                mismatches.append("\(p): joined \(got), original \(want)")
            }
        }
        XCTAssertEqual(mismatches.count, 0, "\(mismatches.prefix(10))")
        XCTAssertGreaterThan(compared, 21_900)
    }
}
