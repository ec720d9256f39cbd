import FenceEngine
@testable import FenceIO
import XCTest

/// Fences from a real PostgreSQL + PostGIS through OGR's `PG:` driver: mapped columns, a
/// timestamptz expiry, points with a radius, a rejected self-intersection, and a table in UTM.
final class PostGISTests: XCTestCase {
    func testFencesFromPostGIS() throws {
        let server = try PostGISServer()
        addTeardownBlock { server.stop() }
        try server.sql(
            """
            CREATE EXTENSION postgis;
            CREATE TABLE zones (
                gid serial PRIMARY KEY, name text, zone_group text, radius_m double precision, stay_s integer,
                until timestamptz, note text, geom geometry(Geometry, 4326));
            INSERT INTO zones (name, zone_group, radius_m, stay_s, until, note, geom) VALUES
              ('yard', 'depots', NULL, 60, '2021-01-01 01:00:00+01', 'gate 4',
               ST_GeomFromText('POLYGON((0 0,4 0,4 4,0 4,0 0),(1 1,1 2,2 2,2 1,1 1))', 4326)),
              ('depot', NULL, 250, NULL, NULL, NULL, ST_GeomFromText('POINT(0.5 0.25)', 4326)),
              ('bowtie', NULL, NULL, NULL, NULL, NULL, ST_GeomFromText('POLYGON((0 0,2 2,2 0,0 2,0 0))', 4326)),
              ('buoy', NULL, NULL, NULL, NULL, NULL, ST_GeomFromText('POINT(1 1)', 4326));
            CREATE TABLE utm_zones (id text PRIMARY KEY, geom geometry(Polygon, 32632));
            INSERT INTO utm_zones VALUES
              ('meridian', ST_GeomFromText('POLYGON((500000 0,500001 0,500000 5538630.70286747,500000 0))', 32632));
            """)
        var options = FenceInputOptions()
        options.layers = ["zones"]
        options.fields.set(.id, to: "name")
        options.fields.set(.group, to: "zone_group")
        options.fields.set(.radius, to: "radius_m")
        options.fields.set(.dwell, to: "stay_s")
        options.fields.set(.expires, to: "until")
        let (read, rejected) = try OGRFormatTests.load(server.connection, options)
        XCTAssertEqual(read.reader, .ogr)
        XCTAssertEqual(read.fences.map(\.id), ["yard", "depot"])
        let yard = read.fences[0]
        XCTAssertEqual(yard.group, "depots")
        XCTAssertEqual(yard.dwell, 60)
        XCTAssertEqual(yard.expires, 1_609_459_200, "timestamptz with its zone")
        XCTAssertEqual(yard.properties["note"], "\"gate 4\"")
        XCTAssertEqual(
            OGRFormatTests.canonical(yard.shape),
            OGRFormatTests.canonical(
                .polygons([Polygon(exterior: GDALFixtures.lonLats(OGRFormatTests.square), holes: [GDALFixtures.lonLats(OGRFormatTests.hole)])])))
        XCTAssertEqual(read.fences[1].shape, .circle(center: LonLat(lon: 0.5, lat: 0.25), radius: 250))
        XCTAssertEqual(
            rejected.map { "\($0)" },
            [
                "layer zones, feature 3 (FID 3): fence bowtie: invalid-geometry: Self-intersection at (1.0, 1.0)",
                "layer zones, feature 4 (FID 4): fence buoy: invalid-radius: a Point fence needs a radius in metres (field \"radius_m\")",
            ])

        // Another table, in UTM zone 32N: reprojected on the way in.
        options = FenceInputOptions()
        options.layers = ["utm_zones"]
        let utm = try FenceInput.read(server.connection, options: options)
        guard case .polygons(let p) = utm.fences.first?.shape else { return XCTFail("no UTM fence") }
        XCTAssertEqual(utm.fences.first?.id, "meridian")
        XCTAssertEqual(p[0].exterior[0].lon, 9, accuracy: 1e-12)
        XCTAssertEqual(p[0].exterior[0].lat, 0, accuracy: 1e-12)
        XCTAssertEqual(p[0].exterior[2].lon, 9, accuracy: 1e-9)
        XCTAssertEqual(p[0].exterior[2].lat, 50, accuracy: 1e-9)

        // The CLI reads the same connection string with the same options.
        let cli = try CLI.run([
            "check", "--fences", server.connection + " password=secret", "--layer", "zones", "--id-field", "name", "--group-field", "zone_group",
            "--radius-field", "radius_m", "--dwell-field", "stay_s", "--expires-field", "until",
        ])
        XCTAssertEqual(cli.status, 1)
        let source = "PG:host=127.0.0.1 port=\(server.port) dbname=postgres user=postgres password=***"
        XCTAssertEqual(
            cli.out,
            """
            \(source): layer zones, feature 3 (FID 3): fence bowtie: invalid-geometry: Self-intersection at (1.0, 1.0)
            \(source): layer zones, feature 4 (FID 4): fence buoy: invalid-radius: a Point fence needs a radius in metres (field "radius_m")

            """)
        XCTAssertTrue(cli.err.contains("fence check: 4 features in 1 layer (ogr reader), 2 good fences, 2 with problems"), cli.err)
    }
}
