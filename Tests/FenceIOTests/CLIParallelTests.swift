import Foundation
import XCTest

/// `fence eval`, `fence contains` and `fence nearest` on 8 threads, with small batches so the prefetching reader
/// (a background thread parsing the next batch) overlaps evaluation many times. Run by
/// `.ci/tsan`, where the `fence` binary is built with the thread sanitizer too: any report makes
/// it exit non-zero and the test fail. Output must equal the one-thread run's.
final class CLIParallelTests: XCTestCase {
    func testEvalAndContainsOnEightThreads() throws {
        var rng = UInt64(99)
        func next() -> Double {
            rng = rng &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(rng >> 11) * 0x1p-53
        }
        var lines = ["device,time,lon,lat"]
        for t in 0..<60 {
            for d in 0..<100 { lines.append("v\(d),\(t * 20 + d % 20),\(0.05 * next() - 0.005),\(0.03 * next() - 0.005)") }
        }
        let fences = try CLI.temp(self, "fences.geojson", CLI.fences)
        let positions = try CLI.temp(self, "p.csv", lines.joined(separator: "\n") + "\n")
        let one = try CLI.run(["eval", "--fences", fences, "--positions", positions, "--dwell", "60", "--threads", "1"])
        let eight = try CLI.run(["eval", "--fences", fences, "--positions", positions, "--dwell", "60", "--threads", "8", "--batch", "300"])
        XCTAssertEqual(one.status, 0, one.err)
        XCTAssertEqual(eight.status, 0, eight.err)
        XCTAssertFalse(eight.err.contains("ThreadSanitizer"), eight.err)
        XCTAssertGreaterThan(one.out.split(separator: "\n").count, 100)
        XCTAssertEqual(eight.out, one.out)
        let c1 = try CLI.run(["contains", "--fences", fences, "--positions", positions, "--threads", "1"])
        let c8 = try CLI.run(["contains", "--fences", fences, "--positions", positions, "--threads", "8"])
        XCTAssertEqual(c8.status, 0, c8.err)
        XCTAssertEqual(c8.out, c1.out)
        for format in ["csv", "ndjson"] {
            let n1 = try CLI.run(["nearest", "--fences", fences, "--positions", positions, "--threads", "1", "--format", format])
            let n8 = try CLI.run(["nearest", "--fences", fences, "--positions", positions, "--threads", "8", "--format", format])
            XCTAssertEqual(n1.status, 0, n1.err)
            XCTAssertEqual(n8.status, 0, n8.err)
            XCTAssertFalse(n8.err.contains("ThreadSanitizer"), n8.err)
            XCTAssertEqual(n1.out.split(separator: "\n").count, lines.count + (format == "csv" ? 0 : -1))
            XCTAssertEqual(n8.out, n1.out)
        }
    }
}
