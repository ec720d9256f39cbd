import FenceEngine
@testable import FenceIO
import Foundation
import XCTest

/// The 2008 GeoJSON `crs` member in each form GDAL reads (found by an audit: `"type":"EPSG"`,
/// `"type":"link"` and the name `WGS84` refused the whole file as declaring "the CRS unnamed",
/// with the file name twice in the CLI's message).
final class GeoJSONLegacyCRSTests: XCTestCase {
    /// A 100 m circle at 10 E, 50 N, in WGS84 or in Web Mercator metres.
    static func document(crs: String, mercator: Bool = false) -> String {
        let centre = mercator ? "1113194.9079327357,6446275.841017158" : "10,50"
        return #"{"type":"FeatureCollection","crs":\#(crs),"features":[{"type":"Feature","properties":{"id":"a","radius":100},"#
            + #""geometry":{"type":"Point","coordinates":[\#(centre)]}}]}"#
    }

    func write(_ text: String) throws -> String { try CLI.temp(self, "zones.geojson", text) }

    static var native: FenceInputOptions {
        var o = FenceInputOptions()
        o.reader = .native
        return o
    }

    func testFormsNamingWGS84LoadWithTheBuiltInReader() throws {
        let forms = [
            #"{"type":"EPSG","properties":{"code":4326}}"#,
            #"{"type":"EPSG","properties":{"code":"4326"}}"#,
            #"{"properties":{"code":4326},"type":"epsg"}"#,
            #"{"type":"OGC","properties":{"urn":"urn:ogc:def:crs:OGC:1.3:CRS84"}}"#,
            #"{"type":"link","properties":{"href":"http://spatialreference.org/ref/epsg/4326/proj4/","type":"proj4"}}"#,
            #"{"type":"link","properties":{"href":"https://epsg.io/4326.wkt"}}"#,
            // A registry's address with "www." (coverage audit: never read).
            #"{"type":"link","properties":{"href":"http://www.spatialreference.org/ref/epsg/4326/"}}"#,
            #"{"type":"URL","properties":{"url":"http://www.opengis.net/def/crs/OGC/1.3/CRS84"}}"#,
            #"{"type":"link","properties":{"href":"http://www.opengis.net/def/crs/EPSG/0/4326"}}"#,
            #"{"type":"name","properties":{"name":"WGS84"}}"#,
            #"{"type":"name","properties":{"name":"WGS 84"}}"#,
            #"{"type":"name","properties":{"name":"wgs_1984"}}"#,
            #"{"type":"name","properties":{"name":"EPSG:4326"}}"#,
        ]
        let want = [Fence(id: "a", shape: .circle(center: LonLat(lon: 10, lat: 50), radius: 100))]
        for crs in forms {
            let path = try write(Self.document(crs: crs))
            let auto = try FenceInput.read(path)
            XCTAssertEqual(auto.reader, .native, crs)
            XCTAssertEqual(auto.fences, want, crs)
            XCTAssertEqual(try FenceInput.read(path, options: Self.native).fences, want, crs)
        }
    }

    /// Another CRS named by an EPSG code or an OGC urn goes to OGR under auto, which reads
    /// those forms and reprojects; the built-in reader, asked, refuses.
    func testFormsNamingAnotherCRSGoToOGR() throws {
        for (crs, name) in [
            (#"{"type":"EPSG","properties":{"code":3857}}"#, "EPSG:3857"),
            (#"{"type":"OGC","properties":{"urn":"urn:ogc:def:crs:EPSG::3857"}}"#, "urn:ogc:def:crs:EPSG::3857"),
        ] {
            let path = try write(Self.document(crs: crs, mercator: true))
            let read = try FenceInput.read(path)
            XCTAssertEqual(read.reader, .ogr, crs)
            guard case .circle(let centre, 100) = read.fences.first?.shape else { XCTFail("\(crs): \(read.fences)"); continue }
            XCTAssertEqual(centre.lon, 10, accuracy: 1e-9)
            XCTAssertEqual(centre.lat, 50, accuracy: 1e-9)
            XCTAssertThrowsError(try FenceInput.read(path, options: Self.native)) { error in
                XCTAssertEqual(
                    (error as? FenceError)?.reason,
                    "the document declares the CRS \(name); the built-in reader takes WGS84 longitude/latitude only (read it through OGR to reproject)")
            }
        }
    }

    /// A member neither reader reads as it says is refused by its type, with the way on,
    /// under every reader choice but ogr (GDAL fetches links, and takes the rest as WGS84).
    func testUnreadableMembersAreRefusedByType() throws {
        let reads = #"which the built-in reader cannot read (it reads a "name", an "EPSG" code, an "OGC" urn and links to WGS84); "#
        let ignores = "--fence-reader ogr reads the file as GDAL does, which takes a crs it cannot read as WGS84"
        let fetches = "--fence-reader ogr reads the file as GDAL does, which fetches the link over the network (and takes the data as WGS84 if it cannot)"
        for (crs, reason) in [
            (#"{"type":"foo","properties":{"code":4326}}"#, #"the document has a "crs" member of type "foo", "# + reads + ignores),
            (#"{"type":"EPSG","properties":{}}"#, #"the document has a "crs" member of type "EPSG" without a "code" in its properties, "# + reads + ignores),
            (#"{"type":"name","properties":{"name":7}}"#, #"the document has a "crs" member of type "name" without a "name" in its properties, "# + reads + ignores),
            (#"{}"#, #"the document has a "crs" member without a "type", "# + reads + ignores),
            // Coverage audit: a link without its address, an OGC member without its urn, and a
            // registry address whose code is followed by other text, had no test.
            (#"{"type":"link","properties":{"type":"proj4"}}"#, #"the document has a "crs" member of type "link" without an "href" in its properties, "# + reads + ignores),
            (#"{"type":"OGC","properties":{"code":4326}}"#, #"the document has a "crs" member of type "OGC" without a "urn" in its properties, "# + reads + ignores),
            (
                #"{"type":"link","properties":{"href":"https://epsg.io/4326abc"}}"#,
                #"the document has a "crs" member of type "link" (https://epsg.io/4326abc), "# + reads + fetches
            ),
            (#""EPSG:4326""#, #"the document has a "crs" member that is not an object ("EPSG:4326"), "# + reads + ignores),
            (
                #"{"type":"link","properties":{"href":"http://example.com/zones.prj","type":"esriwkt"}}"#,
                #"the document has a "crs" member of type "link" (http://example.com/zones.prj), "# + reads + fetches
            ),
            (
                #"{"type":"link","properties":{"href":"https://epsg.io/3857"}}"#,
                #"the document has a "crs" member of type "link" to EPSG:3857 (https://epsg.io/3857), "# + reads + fetches
                    + #"; or name it: {"type":"name","properties":{"name":"EPSG:3857"}}"#
            ),
        ] {
            let path = try write(Self.document(crs: crs))
            for options in [FenceInputOptions(), Self.native] {
                XCTAssertThrowsError(try FenceInput.read(path, options: options)) { error in
                    XCTAssertEqual((error as? FenceError)?.reason, reason)
                }
            }
        }
    }

    /// The CLI names the file once.
    func testTheCLINamesTheFileOnce() throws {
        for crs in [#"{"type":"name","properties":{"name":"EPSG:999999"}}"#, #"{"type":"foo"}"#] {
            let path = try write(Self.document(crs: crs))
            let r = try CLI.run(["check", "--fences", path])
            XCTAssertEqual(r.status, 1, r.err)
            XCTAssertEqual(r.err.components(separatedBy: "zones.geojson").count - 1, 1, r.err)
            XCTAssertTrue(r.err.hasPrefix("fence: \(path): malformed-input: the document "), r.err)
        }
    }
}
