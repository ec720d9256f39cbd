import FenceEngine
@testable import FenceIO
import XCTest

/// Layers in other CRSs arrive in WGS84 longitude/latitude. The oracle is independent of PROJ:
/// spherical Web Mercator's closed formula, and UTM's central meridian, where the projection
/// is exact (easting 500,000 m; northing 5,538,630.703 m at 50°N on the WGS84 ellipsoid).
final class OGRReprojectionTests: XCTestCase {
    typealias G = GDALFixtures

    /// EPSG:3857 from longitude/latitude, by the formula.
    static func mercator(_ lon: Double, _ lat: Double) -> (Double, Double) {
        let r = 6_378_137.0
        return (r * lon * .pi / 180, r * log(tan(.pi / 4 + lat * .pi / 360)))
    }

    func assertClose(_ shape: FenceShape?, _ rings: [[(Double, Double)]], tolerance: Double, file: StaticString = #filePath, line: UInt = #line) {
        guard case .polygons(let polygons) = shape else { return XCTFail("not polygons: \(String(describing: shape))", file: file, line: line) }
        XCTAssertEqual(polygons.count, rings.count, file: file, line: line)
        for (p, ring) in zip(polygons, rings) {
            XCTAssertEqual(p.exterior.count, ring.count, file: file, line: line)
            for (got, want) in zip(p.exterior, ring) {
                XCTAssertEqual(got.lon, want.0, accuracy: tolerance, "lon", file: file, line: line)
                XCTAssertEqual(got.lat, want.1, accuracy: tolerance, "lat", file: file, line: line)
            }
        }
    }

    static let lonLatRing = [(10.0, 50.0), (11.0, 50.0), (11.0, 51.0), (10.0, 51.0), (10.0, 50.0)]

    /// A GeoJSON file in EPSG:3857 written by the formula (the 2008 `crs` member), and its
    /// GeoPackage with the CRS assigned (not transformed) by ogr2ogr.
    func mercatorSources() throws -> (geojson: String, gpkg: String) {
        try G.requireOgr2ogr()
        let dir = try G.folder(self)
        let ring = Self.lonLatRing.map { Self.mercator($0.0, $0.1) }
        let centre = Self.mercator(10, 50)
        let doc = G.collection(
            [
                G.feature(#""id":"zone""#, G.polygon([ring])),
                G.feature(#""id":"depot","radius":250"#, G.point(centre.0, centre.1)),
            ], crs: "urn:ogc:def:crs:EPSG::3857")
        try G.write(doc, to: dir + "/mercator.geojson")
        try G.convert(["-a_srs", "EPSG:3857", dir + "/mercator.gpkg", dir + "/mercator.geojson"])
        return (dir + "/mercator.geojson", dir + "/mercator.gpkg")
    }

    func testWebMercatorLayerIsReprojected() throws {
        let (geojson, gpkg) = try mercatorSources()
        for source in [gpkg, geojson] {
            // A GeoJSON file declaring another CRS goes to OGR under the automatic choice.
            let read = try FenceInput.read(source)
            XCTAssertEqual(read.reader, .ogr, source)
            XCTAssertEqual(read.fences.map(\.id), ["zone", "depot"], source)
            assertClose(read.fences.first?.shape, [Self.lonLatRing], tolerance: 1e-9)
            guard case .circle(let centre, let radius) = read.fences.last?.shape else { return XCTFail("depot is no circle") }
            XCTAssertEqual(centre.lon, 10, accuracy: 1e-9)
            XCTAssertEqual(centre.lat, 50, accuracy: 1e-9)
            XCTAssertEqual(radius, 250, "a radius is metres on the ground, never reprojected")
        }
        // The built-in reader, asked explicitly, refuses rather than misread projected metres.
        var native = FenceInputOptions()
        native.reader = .native
        XCTAssertThrowsError(try FenceInput.read(geojson, options: native)) { error in
            XCTAssertEqual(
                (error as? FenceError)?.reason,
                "the document declares the CRS urn:ogc:def:crs:EPSG::3857; the built-in reader takes WGS84 longitude/latitude only (read it through OGR to reproject)")
        }
    }

    /// A GeoJSON file declaring a CRS that GDAL does not know is refused by name. OGR's
    /// GeoJSON driver would read it as WGS84, silently (found by an independent audit).
    /// A name that is no authority name (a path, a URL) is refused before OSR sees it.
    func testUnknownDeclaredCRSIsRefused() throws {
        for (name, why) in [("EPSG:999999", "which GDAL does not know"), ("/etc/passwd", "which is not an authority name")] {
            let text = """
                {"type":"FeatureCollection","crs":{"type":"name","properties":{"name":"\(name)"}},"features":[
                {"type":"Feature","properties":{"id":"a"},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1],[0,0]]]}}]}
                """
            let path = NSTemporaryDirectory() + "fence-unknown-crs-\(UUID().uuidString).geojson"
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            defer { try? FileManager.default.removeItem(atPath: path) }
            XCTAssertThrowsError(try FenceInput.read(path)) { error in
                let reason = (error as? FenceError)?.reason ?? "\(error)"
                XCTAssertTrue(reason.contains("declares the CRS \(name), \(why)"), reason)
            }
        }
    }

    /// UTM zone 32N, from a FlatGeobuf that declares it and from a CSV that declares nothing
    /// (`assumedCRS`, the CLI's --fence-crs).
    func testUTMLayerIsReprojected() throws {
        try G.requireOgr2ogr()
        let dir = try G.folder(self)
        let csv = """
            id,radius,WKT
            square,,"POLYGON ((500000 5538630.70286747,500000 0,500000.5 0,500000 5538630.70286747))"
            pin,100,"POINT (500000 5538630.70286747)"

            """
        try G.write(csv, to: dir + "/utm.csv")
        var options = FenceInputOptions()
        options.assumedCRS = "EPSG:32632"
        let read = try FenceInput.read(dir + "/utm.csv", options: options)
        guard case .polygons(let p) = read.fences.first?.shape else { return XCTFail("no polygon") }
        XCTAssertEqual(p[0].exterior[0].lon, 9, accuracy: 1e-9)
        XCTAssertEqual(p[0].exterior[0].lat, 50, accuracy: 1e-9)
        XCTAssertEqual(p[0].exterior[1].lon, 9, accuracy: 1e-12)
        XCTAssertEqual(p[0].exterior[1].lat, 0, accuracy: 1e-12)
        XCTAssertEqual(read.fences.last?.id, "pin")
        guard case .circle(let centre, 100) = read.fences.last?.shape else { return XCTFail("pin is no 100 m circle") }
        XCTAssertEqual(centre.lon, 9, accuracy: 1e-9)
        XCTAssertEqual(centre.lat, 50, accuracy: 1e-9)
        // Without the assumption the same numbers are not longitude/latitude: refused per
        // feature as it is read, with the way out (a missing .prj is the usual cause).
        let plain = try FenceInput.read(dir + "/utm.csv")
        XCTAssertEqual(plain.fences.count, 0)
        XCTAssertEqual(plain.rejected.map(\.error.kind), [.coordinateOutOfRange, .coordinateOutOfRange])
        for r in plain.rejected {
            XCTAssertTrue(r.error.reason.hasPrefix("coordinates span x 500000"), r.error.reason)
            XCTAssertTrue(r.error.reason.contains("the layer declares no CRS") && r.error.reason.contains("--fence-crs"), r.error.reason)
        }
        // In range (a small projected extent), the numbers are taken as degrees, as documented.
        try G.write("id,WKT\nsmall,\"POLYGON ((5 5,6 5,6 6,5 5))\"\n", to: dir + "/small.csv")
        XCTAssertEqual(try FenceInput.read(dir + "/small.csv").fences.map(\.id), ["small"])
        // A file that declares the CRS needs no assumption.
        try G.convert(["-a_srs", "EPSG:32632", "-lco", "SPATIAL_INDEX=NO", dir + "/utm.fgb", dir + "/utm.csv"])
        let fgb = try FenceInput.read(dir + "/utm.fgb")
        XCTAssertEqual(fgb.fences.first?.shape, read.fences.first?.shape)
        // An assumption OSR cannot read is a clear error.
        options.assumedCRS = "EPSG:999999"
        XCTAssertThrowsError(try FenceInput.read(dir + "/utm.csv", options: options)) { error in
            XCTAssertTrue((error as? FenceError)?.reason.hasPrefix("unknown CRS EPSG:999999: ") == true, "\(error)")
            XCTAssertEqual((error as? FenceError)?.kind, .invalidSetting, "\(error)")
        }
    }

    /// EPSG:4326 and ETRS89 (EPSG:4258) are latitude-first by authority; fences still come out
    /// longitude-first (OAMS_TRADITIONAL_GIS_ORDER).
    func testGeographicLayersKeepLongitudeFirst() throws {
        try G.requireOgr2ogr()
        let dir = try G.folder(self)
        try G.write(G.collection([G.feature(#""id":"zone""#, G.polygon([Self.lonLatRing]))]), to: dir + "/z.geojson")
        try G.convert(["-a_srs", "EPSG:4326", dir + "/wgs84.gpkg", dir + "/z.geojson"])
        try G.convert(["-a_srs", "EPSG:4258", dir + "/etrs89.gpkg", dir + "/z.geojson"])
        XCTAssertEqual(
            try FenceInput.read(dir + "/wgs84.gpkg").fences.first?.shape, .polygons([Polygon(exterior: G.lonLats(Self.lonLatRing))]),
            "same CRS: not transformed at all")
        assertClose(try FenceInput.read(dir + "/etrs89.gpkg").fences.first?.shape, [Self.lonLatRing], tolerance: 1e-6)
    }

    /// A polygon across the antimeridian in a Pacific-centred Mercator (EPSG:3832) arrives cut
    /// into a MultiPolygon at ±180, and covers both sides.
    func testAntimeridianIsWrapped() throws {
        try G.requireOgr2ogr()
        let dir = try G.folder(self)
        let ring = [(170.0, 10.0), (190.0, 10.0), (190.0, 20.0), (170.0, 20.0), (170.0, 10.0)]
        try G.write(G.collection([G.feature(#""id":"pacific""#, G.polygon([ring]))]), to: dir + "/p.geojson")
        try G.convert(["-t_srs", "EPSG:3832", dir + "/p.gpkg", dir + "/p.geojson"])
        let read = try FenceInput.read(dir + "/p.gpkg")
        guard case .polygons(let parts) = read.fences.first?.shape else { return XCTFail("no polygons") }
        XCTAssertEqual(parts.count, 2)
        let ranges = parts.map { p in (p.exterior.map(\.lon).min()!, p.exterior.map(\.lon).max()!) }.sorted { $0.0 < $1.0 }
        XCTAssertEqual(ranges[0].0, -180, accuracy: 1e-9)
        XCTAssertEqual(ranges[0].1, -170, accuracy: 1e-7)
        XCTAssertEqual(ranges[1].0, 170, accuracy: 1e-7)
        XCTAssertEqual(ranges[1].1, 180, accuracy: 1e-9)
        var store = FenceStore()
        XCTAssertNil(store.add(read.fences).first?.error)
        XCTAssertEqual(store.ids(covering: LonLat(lon: 179.5, lat: 15)), ["pacific"])
        XCTAssertEqual(store.ids(covering: LonLat(lon: -179.5, lat: 15)), ["pacific"])
        XCTAssertEqual(store.ids(covering: LonLat(lon: 0, lat: 15)), [])
    }
}
