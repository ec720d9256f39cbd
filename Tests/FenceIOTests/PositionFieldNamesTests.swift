import FenceEngine
@testable import FenceIO
import Foundation
import XCTest

/// Position fields under names of the input's own (`PositionReader(fields:)`, `fence
/// --position-fields`): NYC taxi's `pickup_longitude`, say. A name given outranks every alias,
/// in CSV headers and NDJSON keys alike, matched without case.
final class PositionFieldNamesTests: XCTestCase {
    func read(_ text: String, fields: [PositionField: String], columns: [String]? = nil) throws -> ([Position], [PositionLineError]) {
        let path = NSTemporaryDirectory() + "named-\(UUID().uuidString)"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try PositionReader(path: path, columns: columns, fields: fields).readAll()
    }

    static let taxi: [PositionField: String] = [
        .device: "VendorID", .time: "tpep_pickup_datetime", .lon: "pickup_longitude", .lat: "pickup_latitude",
    ]

    func testNamedColumnsReadAsTheCanonicalOnes() throws {
        let rows = "v1,2020-01-01 00:00:00,-73.99,40.75,1.5\nv2,2020-01-01 00:00:07,-73.98,40.76,2\n"
        let (p, e) = try read("VendorID,tpep_pickup_datetime,PICKUP_LONGITUDE,pickup_latitude,trip_distance\n" + rows, fields: Self.taxi)
        XCTAssertEqual(e, [])
        let (canonical, _) = try read("device,time,lon,lat,trip_distance\n" + rows, fields: [:])
        XCTAssertEqual(p, canonical)
        XCTAssertEqual(p.count, 2)
    }

    func testANameGivenOutranksAliases() throws {
        // `x` and `y` are aliases of lon and lat; the names given win wherever they stand.
        let (p, e) = try read("id,t,x,y,lon_deg,lat_deg\n7,5,1000,2000,10.5,20.5\n", fields: [.lon: "lon_deg", .lat: "lat_deg"])
        XCTAssertEqual(e, [])
        XCTAssertEqual(p, [Position(device: "7", time: 5, lon: 10.5, lat: 20.5)])
        // A name another field uses as an alias goes to the field it was given to.
        let (q, f) = try read("t,ts,lon,lat\nabc,9,1,2\n", fields: [.device: "t"])
        XCTAssertEqual(f, [])
        XCTAssertEqual(q, [Position(device: "abc", time: 9, lon: 1, lat: 2)])
    }

    func testNDJSONKeys() throws {
        let (p, e) = try read(
            "{\"VendorID\":\"v1\",\"tpep_pickup_datetime\":\"2020-01-01T00:00:00Z\",\"pickup_longitude\":1,\"pickup_latitude\":2}\n"
                + "{\"vendorid\":\"v2\",\"tpep_pickup_datetime\":60,\"pickup_longitude\":3,\"pickup_latitude\":4,\"lon\":99}\n"
                + "{\"VendorID\":\"v3\",\"vendorID\":\"v4\",\"tpep_pickup_datetime\":60,\"pickup_longitude\":3,\"pickup_latitude\":4}\n",
            fields: Self.taxi)
        XCTAssertEqual(p.map(\.device), ["v1", "v2"])
        XCTAssertEqual(p.map(\.lon), [1, 3])
        XCTAssertEqual(e.map(\.line), [3])
        XCTAssertTrue(e.first?.reason.contains("appears twice") == true, "\(e)")
    }

    func testAMissingNamedColumnIsNamedInTheRefusal() throws {
        XCTAssertThrowsError(try read("VendorID,when,pickup_longitude,pickup_latitude\nv,1,2,3\n", fields: Self.taxi)) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("lacks time (the column \"tpep_pickup_datetime\" given for it)"), text)
            XCTAssertTrue(text.contains("--position-fields"), text)
        }
    }

    func testHeaderlessColumnsMayUseTheNamesGiven() throws {
        XCTAssertNoThrow(try PositionReader.checkColumns(["VendorID", "tpep_pickup_datetime", "pickup_longitude", "pickup_latitude"], fields: Self.taxi))
        XCTAssertThrowsError(try PositionReader.checkColumns(["VendorID", "tpep_pickup_datetime", "pickup_longitude", "pickup_latitude"]))
        let (p, e) = try read("v,5,1,2\n", fields: Self.taxi, columns: ["VendorID", "tpep_pickup_datetime", "pickup_longitude", "pickup_latitude"])
        XCTAssertEqual(e, [])
        XCTAssertEqual(p, [Position(device: "v", time: 5, lon: 1, lat: 2)])
    }

    /// A field given a name is read from that name only: a header without it is refused
    /// (naming it), an NDJSON line without it lacks the field; no alias stands in.
    func testANamedColumnTheInputLacksIsNotReplacedByAnAlias() throws {
        XCTAssertThrowsError(try read("id,Vendor_ID,time,lon,lat\nrow1,v,1,2,3\n", fields: [.device: "VendorID"])) { error in
            XCTAssertTrue("\(error)".contains("lacks device (the column \"VendorID\" given for it)"), "\(error)")
        }
        let (p, e) = try read("{\"id\":\"row1\",\"time\":1,\"lon\":2,\"lat\":3}\n{\"VendorID\":\"v\",\"time\":1,\"lon\":2,\"lat\":3}\n", fields: [.device: "VendorID"])
        XCTAssertEqual(p.map(\.device), ["v"])
        XCTAssertEqual(e.map(\.line), [1])
    }

    /// Two fields given one name: the library keeps the first field in `PositionField` order
    /// on every run (the CLI refuses it).
    func testOneNameForTwoFieldsIsDecidedTheSameWayEveryTime() throws {
        for _ in 0..<20 {
            XCTAssertEqual(PositionReader.fieldsByName([.time: "VendorID", .device: "vendorid"]), ["vendorid": .device])
        }
    }

    func testCLI() throws {
        let fences = try CLI.temp(self, "fences.geojson", CLI.fences)
        let taxi = try CLI.temp(self, "taxi.csv", "VendorID,tpep_pickup_datetime,pickup_longitude,pickup_latitude\nv1,0,0,0\nv1,60,0.03,0.01\n")
        let plain = try CLI.temp(self, "plain.csv", "device,time,lon,lat\nv1,0,0,0\nv1,60,0.03,0.01\n")
        let spec = "device=VendorID, time=tpep_pickup_datetime,lon=pickup_longitude,lat=pickup_latitude"
        let named = try CLI.run(["eval", "--fences", fences, "--positions", taxi, "--position-fields", spec])
        let canonical = try CLI.run(["eval", "--fences", fences, "--positions", plain])
        XCTAssertEqual(named.status, 0, named.err)
        XCTAssertFalse(named.out.isEmpty)
        XCTAssertEqual(named.out, canonical.out)
        let refused = try CLI.run(["eval", "--fences", fences, "--positions", taxi])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.err.contains("--position-fields"), refused.err)
        for bad in ["speed=x", "lon=", "lon", "lon=a,lon=b", "", "device=VendorID,time=vendorid"] {
            let r = try CLI.run(["eval", "--fences", fences, "--positions", taxi, "--position-fields", bad])
            XCTAssertEqual(r.status, 2, "\(bad): \(r.err)")
        }
    }
}
