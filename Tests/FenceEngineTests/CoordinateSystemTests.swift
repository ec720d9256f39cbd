import Foundation
import XCTest

@testable import FenceEngine

final class CoordinateSystemTests: XCTestCase {
    typealias Conv = CoordinateConversion

    /// Ground distance in metres between two nearby points (local flat approximation with
    /// WGS84 radii of curvature; relative error far below 1 % for the millimetres measured here).
    static func metres(_ p: (lon: Double, lat: Double), _ q: (lon: Double, lat: Double)) -> Double {
        let a = 6378137.0
        let e2 = 0.00669437999014
        let phi = (p.lat + q.lat) / 2 * .pi / 180
        let w = 1 - e2 * sin(phi) * sin(phi)
        let m = a * (1 - e2) / (w * w.squareRoot())
        let n = a / w.squareRoot()
        let dn = (q.lat - p.lat) * .pi / 180 * m
        let de = (q.lon - p.lon) * .pi / 180 * n * cos(phi)
        return (dn * dn + de * de).squareRoot()
    }

    func assertClose(
        _ got: (lon: Double, lat: Double), _ lon: Double, _ lat: Double, degrees tol: Double,
        _ what: String, file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertEqual(got.lon, lon, accuracy: tol, "\(what): lon", file: file, line: line)
        XCTAssertEqual(got.lat, lat, accuracy: tol, "\(what): lat", file: file, line: line)
    }

    // MARK: - Names

    func testNamesParseCaseInsensitively() {
        let accepted: [(String, CoordinateSystem)] = [
            ("wgs84", .wgs84), ("WGS84", .wgs84), ("WGS-84", .wgs84), ("wgs_84", .wgs84),
            (" Wgs84 ", .wgs84), ("gcj02", .gcj02), ("GCJ02", .gcj02), ("gcj-02", .gcj02),
            ("GCJ-02", .gcj02), ("bd09ll", .bd09ll), ("BD09LL", .bd09ll), ("bd09", .bd09ll),
            ("BD-09", .bd09ll), ("bd-09ll", .bd09ll), ("BD-09LL", .bd09ll),
        ]
        for (name, system) in accepted {
            XCTAssertEqual(CoordinateSystem(name: name), system, name)
        }
        for name in [
            "", "wgs", "wgs83", "gcj", "gcj-2", "bd09mc", "bd-09mc", "bd09ll2", "epsg:4326", "mars",
        ] {
            XCTAssertNil(CoordinateSystem(name: name), name)
        }
        for system in CoordinateSystem.allCases {
            XCTAssertEqual(CoordinateSystem(name: system.rawValue), system)
        }
    }

    // MARK: - China's box

    func testBoxEdgesCountAsInside() {
        XCTAssertFalse(Conv.isOutsideChina(lon: 72.004, lat: 30))
        XCTAssertTrue(Conv.isOutsideChina(lon: 72.0039, lat: 30))
        XCTAssertFalse(Conv.isOutsideChina(lon: 137.8347, lat: 30))
        XCTAssertTrue(Conv.isOutsideChina(lon: 137.8348, lat: 30))
        XCTAssertFalse(Conv.isOutsideChina(lon: 100, lat: 0.8293))
        XCTAssertTrue(Conv.isOutsideChina(lon: 100, lat: 0.8292))
        XCTAssertFalse(Conv.isOutsideChina(lon: 100, lat: 55.8271))
        XCTAssertTrue(Conv.isOutsideChina(lon: 100, lat: 55.8272))
        XCTAssertTrue(Conv.isOutsideChina(lon: -74.006, lat: 40.7128))  // New York
        XCTAssertTrue(Conv.isOutsideChina(lon: .infinity, lat: 30))
    }

    // MARK: - Published reference points

    /// googollee/eviltransform, `go/transform_test.go` and `python/test.py` (same table):
    /// `{wgsLat, wgsLng, gcjLat, gcjLng}` for Shanghai, Shenzhen and Beijing, produced by the
    /// Krasovsky formula.
    static let evilTransform: [(wgsLon: Double, wgsLat: Double, gcjLon: Double, gcjLat: Double)] = [
        (121.5272106, 31.1774276, 121.531541859215, 31.17530398364597),  // shanghai
        (113.912316, 22.543847, 113.9171764808363, 22.540796131694766),  // shenzhen
        (116.377817, 39.911954, 116.38404722455657, 39.91334545536069),  // beijing
    ]

    func testEvilTransformReferencePoints() {
        for p in Self.evilTransform {
            let gcj = Conv.wgs84ToGCJ02(lon: p.wgsLon, lat: p.wgsLat)
            assertClose(gcj, p.gcjLon, p.gcjLat, degrees: 1e-12, "wgs->gcj \(p)")
            // eviltransform's own exact inverse is only held to 0.5 m; ours to 1 mm.
            let wgs = Conv.gcj02ToWGS84(lon: p.gcjLon, lat: p.gcjLat)
            XCTAssertLessThan(Self.metres(wgs, (p.wgsLon, p.wgsLat)), 0.001, "gcj->wgs \(p)")
            XCTAssertEqual(Conv.toWGS84(lon: p.gcjLon, lat: p.gcjLat, from: .gcj02).lon, wgs.lon)
        }
    }

    /// wandergis/coordtransform, `test/app.js`: every conversion applied to (116.404, 39.915)
    /// with the results it prints. Its `bd09togcj02` and `gcj02towgs84` are the one-step
    /// approximations, so those two are only close to our exact inverses.
    func testWandergisReferencePoint() {
        assertClose(
            Conv.wgs84ToGCJ02(lon: 116.404, lat: 39.915), 116.41024449916938, 39.91640428150164,
            degrees: 1e-12, "wgs84togcj02")
        assertClose(
            Conv.gcj02ToBD09(lon: 116.404, lat: 39.915), 116.41036949371029, 39.92133699351021,
            degrees: 1e-12, "gcj02tobd09")

        let gcj = Conv.bd09ToGCJ02(lon: 116.404, lat: 39.915)
        let approxGCJ = (lon: 116.39762729119315, lat: 39.90865673957631)  // bd09togcj02
        XCTAssertLessThan(Self.metres(gcj, approxGCJ), 0.1)
        XCTAssertGreaterThan(Self.metres(gcj, approxGCJ), 0.01, "ours is not the one-step formula")
        assertClose(
            Conv.gcj02ToBD09(lon: gcj.lon, lat: gcj.lat), 116.404, 39.915, degrees: 1e-10,
            "bd exact")

        let wgs = Conv.gcj02ToWGS84(lon: 116.404, lat: 39.915)
        let approxWGS = (lon: 116.39775550083061, lat: 39.91359571849836)  // gcj02towgs84
        XCTAssertLessThan(Self.metres(wgs, approxWGS), 2)
        assertClose(
            Conv.wgs84ToGCJ02(lon: wgs.lon, lat: wgs.lat), 116.404, 39.915, degrees: 1e-10,
            "gcj exact")
    }

    /// dromara/hutool,
    /// `hutool-core/src/test/java/org/dromara/hutool/core/data/CoordinateUtilTest.java`:
    /// `wgs84toBd09Test` at (116.404, 39.915) and `wgs84toBd09Test2`, whose expected value the
    /// file credits to the tool.lu converter.
    func testHutoolWGS84ToBD09() {
        assertClose(
            Conv.fromWGS84(lon: 116.404, lat: 39.915, to: .bd09ll), 116.41662724378733,
            39.922699552216216, degrees: 1e-12, "wgs84toBd09Test")
        assertClose(
            Conv.fromWGS84(lon: 122.99395597, lat: 44.99804071, to: .bd09ll), 123.00636516028885,
            45.00636909189589, degrees: 1e-12, "wgs84toBd09Test2")
        // Same file, bd09toWgs84Test: hutool chains the two one-step approximations.
        let wgs = Conv.toWGS84(lon: 116.404, lat: 39.915, from: .bd09ll)
        XCTAssertLessThan(Self.metres(wgs, (116.3913836995125, 39.907253214522164)), 2)
        assertClose(
            Conv.fromWGS84(lon: wgs.lon, lat: wgs.lat, to: .bd09ll), 116.404, 39.915,
            degrees: 1e-10, "exact")
    }

    /// Alibaba Cloud address-purification API reference, "TransferCoord" (coordinate system
    /// conversion) example: GCJ02 120.026268,30.279164 gives BD09 120.032768,30.285238 and
    /// WGS84 120.021519,30.281543, printed to 6 decimals. The BD-09 value is the published
    /// formula; the WGS84 value is a one-step approximation, about 1.7 m from the exact inverse.
    func testAliyunDocumentationExample() {
        let bd = Conv.gcj02ToBD09(lon: 120.026268, lat: 30.279164)
        assertClose(bd, 120.032768, 30.285238, degrees: 5e-7 + 1e-12, "BD09 to 6 decimals")
        let wgs = Conv.gcj02ToWGS84(lon: 120.026268, lat: 30.279164)
        let published = (lon: 120.021519, lat: 30.281543)
        XCTAssertLessThan(Self.metres(wgs, published), 2.5)
        // The published value does not map back onto the input; ours does.
        let back = Conv.wgs84ToGCJ02(lon: published.lon, lat: published.lat)
        XCTAssertGreaterThan(Self.metres(back, (120.026268, 30.279164)), 0.5)
        let exactBack = Conv.wgs84ToGCJ02(lon: wgs.lon, lat: wgs.lat)
        XCTAssertLessThan(Self.metres(exactBack, (120.026268, 30.279164)), 0.001)
    }

    /// Values returned by the map providers' own web services for WGS84 (116.481499, 39.990475),
    /// as quoted in the comments of a public Spring Boot example
    /// (`com.anydong.example.springboot.util.CoordinateTransformUtilTests`): Amap's convert API
    /// gives GCJ-02 (116.487585177952, 39.991754014757); Baidu's geoconv API (from=3, to=5) gives
    /// BD-09 (116.48806956500994, 39.9963310359532) for the same numbers read as GCJ-02. The
    /// published BD-09 formula reproduces Baidu's service to 1e-10 degrees; the published GCJ-02
    /// formula lands 3 cm from Amap's service.
    func testProviderServiceValues() {
        assertClose(
            Conv.gcj02ToBD09(lon: 116.481499, lat: 39.990475), 116.48806956500994, 39.9963310359532,
            degrees: 1e-10, "Baidu geoconv GCJ-02 to BD-09")
        let gcj = Conv.wgs84ToGCJ02(lon: 116.481499, lat: 39.990475)
        XCTAssertLessThan(
            Self.metres(gcj, (116.487585177952, 39.991754014757)), 0.05, "Amap convert")
    }

    // MARK: - Round trips over many seeds

    /// Largest GCJ-02 and BD-09 offset seen over the box, to size the margin the round trips
    /// keep from the box edge (a point pushed across the edge cannot come back).
    static let edgeMargin = 0.05

    func testOffsetsStaySmallSoRoundTripsAwayFromTheEdgeStayInside() {
        var rng = TestRandom(seed: 1)
        var worst = 0.0
        for _ in 0..<100_000 {
            let lon = Double.random(in: 72.004...137.8347, using: &rng)
            let lat = Double.random(in: 0.8293...55.8271, using: &rng)
            let bd = Conv.fromWGS84(lon: lon, lat: lat, to: .bd09ll)
            worst = max(worst, abs(bd.lon - lon), abs(bd.lat - lat))
        }
        XCTAssertLessThan(worst, Self.edgeMargin)
    }

    func testRoundTripsInsideChinaWithinOneMillimetre() {
        var worstGCJ = 0.0
        var worstBD = 0.0
        var worstBDGCJ = 0.0
        for seed in UInt64(1)...20 {
            var rng = TestRandom(seed: seed)
            for _ in 0..<10_000 {
                let m = Self.edgeMargin
                let w = (
                    lon: Double.random(in: (72.004 + m)...(137.8347 - m), using: &rng),
                    lat: Double.random(in: (0.8293 + m)...(55.8271 - m), using: &rng)
                )
                let g = Conv.fromWGS84(lon: w.lon, lat: w.lat, to: .gcj02)
                let wg = Conv.toWGS84(lon: g.lon, lat: g.lat, from: .gcj02)
                worstGCJ = max(worstGCJ, Self.metres(w, wg))

                let b = Conv.fromWGS84(lon: w.lon, lat: w.lat, to: .bd09ll)
                let wb = Conv.toWGS84(lon: b.lon, lat: b.lat, from: .bd09ll)
                worstBD = max(worstBD, Self.metres(w, wb))

                let gb = Conv.bd09ToGCJ02(lon: b.lon, lat: b.lat)
                worstBDGCJ = max(worstBDGCJ, Self.metres(g, gb))
            }
        }
        XCTAssertLessThan(worstGCJ, 0.001, "wgs->gcj->wgs")
        XCTAssertLessThan(worstBD, 0.001, "wgs->bd->wgs")
        XCTAssertLessThan(worstBDGCJ, 0.001, "gcj->bd->gcj")
        // Measured: all three about 1e-5 m (the 1e-10 degree stopping tolerance).
        XCTAssertLessThan(max(worstGCJ, worstBD, worstBDGCJ), 5e-5)
    }

    func testInverseImagesMapBackWithinTolerance() {
        // Start from arbitrary converted points (not images of WGS84 points) anywhere in the box.
        var rng = TestRandom(seed: 99)
        for _ in 0..<20_000 {
            let p = (
                lon: Double.random(in: 72.004...137.8347, using: &rng),
                lat: Double.random(in: 0.8293...55.8271, using: &rng)
            )
            let w = Conv.gcj02ToWGS84(lon: p.lon, lat: p.lat)
            let d = Conv.gcjOffset(lon: w.lon, lat: w.lat)
            XCTAssertLessThanOrEqual(
                max(abs(w.lon + d.lon - p.lon), abs(w.lat + d.lat - p.lat)), 1e-9)
            let g = Conv.bd09ToGCJ02(lon: p.lon, lat: p.lat)
            let b = Conv.gcj02ToBD09(lon: g.lon, lat: g.lat)
            XCTAssertLessThanOrEqual(max(abs(b.lon - p.lon), abs(b.lat - p.lat)), 1e-9)
        }
    }

    func testGCJToBD09PairIsExactEvenOutsideTheBox() {
        // The raw BD-09 pair is plain math, defined everywhere (the box rule lives in
        // toWGS84/fromWGS84), so its inverse must hold worldwide.
        var rng = TestRandom(seed: 5)
        for _ in 0..<20_000 {
            let p = (
                lon: Double.random(in: -180...180, using: &rng),
                lat: Double.random(in: -89...89, using: &rng)
            )
            let g = Conv.bd09ToGCJ02(lon: p.lon, lat: p.lat)
            let b = Conv.gcj02ToBD09(lon: g.lon, lat: g.lat)
            XCTAssertEqual(b.lon, p.lon, accuracy: 1e-9)
            XCTAssertEqual(b.lat, p.lat, accuracy: 1e-9)
        }
    }

    // MARK: - Outside China and the edge

    func testOutsideChinaPointsComeBackUnchanged() {
        var rng = TestRandom(seed: 7)
        var checked = 0
        while checked < 20_000 {
            let lon = Double.random(in: -180...180, using: &rng)
            let lat = Double.random(in: -90...90, using: &rng)
            guard Conv.isOutsideChina(lon: lon, lat: lat) else { continue }
            checked += 1
            for system in CoordinateSystem.allCases {
                let to = Conv.fromWGS84(lon: lon, lat: lat, to: system)
                let from = Conv.toWGS84(lon: lon, lat: lat, from: system)
                XCTAssertTrue(to.lon == lon && to.lat == lat, "\(system) \(lon) \(lat)")
                XCTAssertTrue(from.lon == lon && from.lat == lat, "\(system) \(lon) \(lat)")
            }
            let g = Conv.wgs84ToGCJ02(lon: lon, lat: lat)
            let w = Conv.gcj02ToWGS84(lon: lon, lat: lat)
            XCTAssertTrue(g.lon == lon && g.lat == lat && w.lon == lon && w.lat == lat)
        }
        // Some named places.
        for (lon, lat) in [
            (-74.006, 40.7128), (2.3522, 48.8566), (139.6917, 35.6895), (151.2093, -33.8688),
        ] {
            let w = Conv.toWGS84(lon: lon, lat: lat, from: .bd09ll)
            XCTAssertTrue(w.lon == lon && w.lat == lat)
        }
    }

    func testWGS84IsTheIdentity() {
        var rng = TestRandom(seed: 11)
        for _ in 0..<1000 {
            let lon = Double.random(in: -180...180, using: &rng)
            let lat = Double.random(in: -90...90, using: &rng)
            let a = Conv.toWGS84(lon: lon, lat: lat, from: .wgs84)
            let b = Conv.fromWGS84(lon: lon, lat: lat, to: .wgs84)
            XCTAssertTrue(a.lon == lon && a.lat == lat && b.lon == lon && b.lat == lat)
        }
    }

    /// Along every edge of the box, where the forward map jumps, the inverses stay finite and
    /// either return the point (outside) or a root of the offset formula (inside).
    func testEdgesNeverLoopOrGiveNaN() {
        var points: [(lon: Double, lat: Double)] = []
        var offset = -0.05
        while offset <= 0.05 {
            for lat in stride(from: 0.8293, through: 55.8271, by: 0.37) {
                points.append((72.004 + offset, lat))
                points.append((137.8347 + offset, lat))
            }
            for lon in stride(from: 72.004, through: 137.8347, by: 0.41) {
                points.append((lon, 0.8293 + offset))
                points.append((lon, 55.8271 + offset))
            }
            offset += 0.0007
        }
        // The corners and the exact edges too.
        for lon in [72.004, 137.8347] {
            for lat in [0.8293, 55.8271] { points.append((lon, lat)) }
        }
        for p in points {
            for system in [CoordinateSystem.gcj02, .bd09ll] {
                let w = Conv.toWGS84(lon: p.lon, lat: p.lat, from: system)
                XCTAssertTrue(w.lon.isFinite && w.lat.isFinite, "\(system) \(p)")
                if Conv.isOutsideChina(lon: p.lon, lat: p.lat) {
                    XCTAssertTrue(w.lon == p.lon && w.lat == p.lat)
                } else {
                    // Within the offset of the input, and a root of the smooth formula.
                    XCTAssertLessThan(max(abs(w.lon - p.lon), abs(w.lat - p.lat)), Self.edgeMargin)
                    let g = system == .gcj02 ? p : Conv.bd09ToGCJ02(lon: p.lon, lat: p.lat)
                    let d = Conv.gcjOffset(lon: w.lon, lat: w.lat)
                    XCTAssertLessThanOrEqual(
                        max(abs(w.lon + d.lon - g.lon), abs(w.lat + d.lat - g.lat)), 1e-9)
                }
                let f = Conv.fromWGS84(lon: p.lon, lat: p.lat, to: system)
                XCTAssertTrue(f.lon.isFinite && f.lat.isFinite)
            }
        }
    }

    func testLongitude105WhereTheOffsetHasASquareRootKink() {
        // transformLat/Lon contain sqrt(|lon - 105|), whose slope is unbounded at lon 105.
        for dx in [0.0, 1e-300, 1e-15, -1e-15, 1e-13, -1e-13, 1e-10, -1e-9, 1e-6] {
            for lat in [3.0, 30.0, 55.0] {
                let w = (lon: 105 + dx, lat: lat)
                let g = Conv.wgs84ToGCJ02(lon: w.lon, lat: w.lat)
                let back = Conv.gcj02ToWGS84(lon: g.lon, lat: g.lat)
                XCTAssertLessThan(Self.metres(w, back), 0.0001, "\(dx) \(lat)")
                let gw = Conv.gcj02ToWGS84(lon: w.lon, lat: w.lat)
                XCTAssertTrue(gw.lon.isFinite && gw.lat.isFinite)
            }
        }
    }

    func testNonFiniteInput() {
        let nan = Conv.toWGS84(lon: .nan, lat: 30, from: .gcj02)
        XCTAssertTrue(nan.lon.isNaN || nan.lat.isNaN)
        let nanBD = Conv.toWGS84(lon: 110, lat: .nan, from: .bd09ll)
        XCTAssertTrue(nanBD.lon.isNaN || nanBD.lat.isNaN)
        let inf = Conv.toWGS84(lon: .infinity, lat: 30, from: .bd09ll)
        XCTAssertEqual(inf.lon, .infinity)
        XCTAssertEqual(inf.lat, 30)
    }
}
