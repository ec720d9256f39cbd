import FenceEngine
import FenceIO
import XCTest

@testable import FenceNATS

/// A fence change's GeoJSON `crs` member is taken as a fence file's is: WGS84 longitude/latitude
/// in a form GDAL reads is read, any other CRS refuses the change (`fence change` before it
/// publishes, each partition when one is in the stream). It was read as longitude/latitude
/// whatever it said, so a change in Web Mercator metres became fences near (0, 0).
final class FenceChangeCRSTests: XCTestCase {
    /// A 0.2 x 0.2 square at (0, 0) with this `crs` member: 0.2 degrees, or 20 cm in EPSG:3857.
    static func square(crs: String) -> [UInt8] {
        Array(
            (#"{"type":"FeatureCollection","crs":\#(crs),"features":[{"type":"Feature","properties":{"id":"sq"},"#
                + #""geometry":{"type":"Polygon","coordinates":[[[0,0],[0.2,0],[0.2,0.2],[0,0.2],[0,0]]]}}]}"#).utf8)
    }

    func testWGS84FormsAreReadAsLonLat() {
        for crs in [
            "null",
            #"{"type":"name","properties":{"name":"urn:ogc:def:crs:OGC:1.3:CRS84"}}"#,
            #"{"type":"name","properties":{"name":"urn:ogc:def:crs:EPSG::4326"}}"#,
            #"{"type":"name","properties":{"name":"EPSG:4326"}}"#,
            #"{"type":"EPSG","properties":{"code":4326}}"#,
            #"{"type":"link","properties":{"href":"http://www.opengis.net/def/crs/OGC/1.3/CRS84"}}"#,
        ] {
            var engine = EventEngine()
            var errors: [String] = []
            _ = FenceChange(.add(geoJSON: Self.square(crs: crs))).apply(to: &engine, errors: &errors)
            XCTAssertEqual(errors, [], crs)
            XCTAssertEqual(engine.store.count, 1, crs)
            XCTAssertEqual(FenceChange.problems(adding: Self.square(crs: crs)), [], crs)
        }
    }

    func testAnotherCRSRefusesTheChange() {
        let wayOn = "a fence change is not reprojected: convert the file first, e.g. ogr2ogr -t_srs EPSG:4326 out.geojson in.geojson"
        for (crs, reason) in [
            (
                #"{"type":"name","properties":{"name":"urn:ogc:def:crs:EPSG::3857"}}"#,
                "the document declares the CRS urn:ogc:def:crs:EPSG::3857; the built-in reader takes WGS84 longitude/latitude only (\(wayOn))"
            ),
            (
                #"{"type":"EPSG","properties":{"code":32632}}"#,
                "the document declares the CRS EPSG:32632; the built-in reader takes WGS84 longitude/latitude only (\(wayOn))"
            ),
            (
                #"{"type":"foo","properties":{"code":4326}}"#,
                #"the document has a "crs" member of type "foo", which the built-in reader cannot read (it reads a "name", an "EPSG" code, "#
                    + #"an "OGC" urn and links to WGS84); "# + wayOn
            ),
        ] {
            let refusal = "malformed-input: " + reason
            var engine = EventEngine()
            var errors: [String] = []
            // As a partition applies one already in the stream: refused, logged, nothing added.
            let events = FenceChange(.add(geoJSON: Self.square(crs: crs))).apply(to: &engine, errors: &errors)
            XCTAssertEqual(errors, [refusal], crs)
            XCTAssertEqual(engine.store.count, 0, crs)
            XCTAssertEqual(events, [], crs)
            // As `fence change` checks it before publishing.
            XCTAssertEqual(FenceChange.problems(adding: Self.square(crs: crs)), [refusal], crs)
        }
    }
}
