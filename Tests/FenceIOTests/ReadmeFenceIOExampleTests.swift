import FenceEngine
import FenceIO
import XCTest

/// The README's FenceIO example, as written there (with a GeoPackage standing in for the
/// database: the same call reads both).
final class ReadmeFenceIOExampleTests: XCTestCase {
    func testFenceInputExample() throws {
        try GDALFixtures.requireOgr2ogr()
        let dir = try GDALFixtures.folder(self)
        try GDALFixtures.write(
            GDALFixtures.collection([
                GDALFixtures.feature(#""name":"yard""#, GDALFixtures.polygon([OGRFormatTests.square])),
                GDALFixtures.feature(#""name":"spare""#, GDALFixtures.polygon([OGRFormatTests.square])),
                GDALFixtures.feature(#""name":"bowtie""#, GDALFixtures.polygon([[(0, 0), (2, 2), (2, 0), (0, 2), (0, 0)]])),
            ]), to: dir + "/zones.geojson")
        try GDALFixtures.convert([dir + "/gis.gpkg", dir + "/zones.geojson"])

        var options = FenceInputOptions()
        options.fields.set(.id, to: "name")  // the CLI's --id-field name
        options.layers = ["zones"]
        let read = try FenceInput.read(dir + "/gis.gpkg", options: options)
        var fences = FenceStore()
        let results = fences.add(read.fences)
        var printed: [String] = []
        for r in read.rejected + read.rejections(from: results) { printed.append("\(r)") }
        XCTAssertEqual(printed, ["layer zones, feature 3 (FID 3): fence bowtie: invalid-geometry: Self-intersection at (1.0, 1.0)"])
        XCTAssertEqual(fences.count, 2)
    }
}
