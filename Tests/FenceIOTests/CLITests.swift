import Foundation
import XCTest

/// The `fence` binary, run as a user runs it (built next to this test bundle).
final class CLITests: XCTestCase {
    /// The build's products folder holds the test bundle (on Linux the bundle URL is that
    /// folder itself) and the `fence` executable.
    var binary: URL {
        let bundle = Bundle(for: CLITests.self).bundleURL
        let candidates = [bundle.appendingPathComponent("fence"), bundle.deletingLastPathComponent().appendingPathComponent("fence")]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }

    func run(_ args: [String], stdin: String? = nil) throws -> (status: Int32, out: String, err: String) {
        let p = Process()
        p.executableURL = binary
        p.arguments = args
        let out = Pipe()
        let err = Pipe()
        p.standardOutput = out
        p.standardError = err
        if let stdin {
            let input = Pipe()
            p.standardInput = input
            try p.run()
            input.fileHandleForWriting.write(Data(stdin.utf8))
            try input.fileHandleForWriting.close()
        } else {
            try p.run()
        }
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
    }

    func temp(_ name: String, _ text: String) throws -> String {
        let dir = NSTemporaryDirectory() + "fence-cli-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let path = dir + "/" + name
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    let fences = """
        {"type":"FeatureCollection","features":[
         {"type":"Feature","properties":{"id":"port","radius":1000,"group":"harbor"},"geometry":{"type":"Point","coordinates":[0,0]}},
         {"type":"Feature","properties":{"id":"yard"},"geometry":{"type":"Polygon","coordinates":[[[0.02,0],[0.04,0],[0.04,0.02],[0.02,0.02],[0.02,0]]]}}
        ]}
        """

    /// A day in two halves with --state gives the same events as the whole day in one run.
    func testTwoRunsWithStateEqualOneRun() throws {
        var rng = UInt64(7)
        func next() -> Double {
            rng = rng &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(rng >> 11) * 0x1p-53
        }
        var lines = ["device,time,lon,lat"]
        for t in 0..<2000 {
            for d in 0..<5 { lines.append("v\(d),\(t * 30),\(0.05 * next() - 0.005),\(0.03 * next() - 0.005)") }
        }
        let fencePath = try temp("fences.geojson", fences)
        let whole = try temp("whole.csv", lines.joined(separator: "\n") + "\n")
        let first = try temp("first.csv", lines[0..<5001].joined(separator: "\n") + "\n")
        let second = try temp("second.csv", ([lines[0]] + lines[5001...]).joined(separator: "\n") + "\n")
        let one = try run(["eval", "--fences", fencePath, "--positions", whole, "--dwell", "120"])
        XCTAssertEqual(one.status, 0, one.err)
        let state = NSTemporaryDirectory() + "state-\(UUID().uuidString)"
        let a = try run(["eval", "--fences", fencePath, "--positions", first, "--dwell", "120", "--state", state])
        let b = try run(["eval", "--fences", fencePath, "--positions", second, "--dwell", "120", "--state", state])
        XCTAssertEqual(a.status, 0, a.err)
        XCTAssertEqual(b.status, 0, b.err)
        XCTAssertGreaterThan(one.out.split(separator: "\n").count, 100)
        XCTAssertEqual(a.out + b.out, one.out)

        // A checkpoint cut in half is refused with a clear error, and left as it is.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: state))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: state))
        let c = try run(["eval", "--fences", fencePath, "--positions", second, "--state", state])
        XCTAssertEqual(c.status, 1)
        XCTAssertTrue(c.err.contains("truncated"), c.err)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: state)).count, bytes.count / 2)
    }

    func testEventRecordsAndExitStatuses() throws {
        let fencePath = try temp("fences.geojson", fences)
        // The device id `a,"b` as RFC 4180 writes it: quoted, the quote doubled.
        let csv = "device,time,lon,lat\n\"a,\"\"b\",2020-12-01T00:00:00,0,0\n\"a,\"\"b\",2020-12-01T00:20:00,0.5,0.5\n"
        let r = try run(["eval", "--fences", fencePath, "--positions", "-", "--format", "csv"], stdin: csv)
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertEqual(
            r.out.split(separator: "\n").map(String.init),
            [
                "time,device,fence,group,event,lon,lat,initial,reason,inside_s",
                "2020-12-01T00:00:00.000Z,\"a,\"\"b\",port,harbor,enter,0.0,0.0,true,,",
                "2020-12-01T00:20:00.000Z,\"a,\"\"b\",port,harbor,exit,0.5,0.5,,,1200",
            ])
        XCTAssertEqual(try run(["eval", "--fences", fencePath, "--positions", "/nonexistent/file.csv"]).status, 1)
        XCTAssertEqual(try run(["eval", "--bogus"]).status, 2)
        XCTAssertEqual(try run(["eval", "--help"]).status, 0)
        let bad = try run(["eval", "--fences", fencePath, "--positions", "-"], stdin: "device,time,lon,lat\nx,0,NaN,0\n")
        XCTAssertEqual(bad.status, 1, "every line bad: over --max-bad")
        XCTAssertTrue(bad.err.contains("line 2"), bad.err)
    }
}
