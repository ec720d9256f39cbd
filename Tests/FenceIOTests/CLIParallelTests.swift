import Foundation
import XCTest

/// `fence eval`, `fence contains` and `fence nearest` on 8 threads, with small batches so the prefetching reader
/// (a background thread parsing the next batch) overlaps evaluation many times. Run by
/// `.ci/tsan`, where the `fence` binary is built with the thread sanitizer too: any report makes
/// it exit non-zero and the test fail. Output must equal the one-thread run's.
final class CLIParallelTests: XCTestCase {
    /// `CLI.fences` and a CSV of `devices` devices (`prefix` and their number) jumping about
    /// the fences' area for `steps` steps, device d reporting at `t * spacing + d % spacing`;
    /// `lines` are the file's lines, its header first.
    func fleet(seed: UInt64, steps: Int, devices: Int, prefix: String, spacing: Int) throws
        -> (fences: String, positions: String, lines: [String])
    {
        var rng = LCG(seed)
        var lines = ["device,time,lon,lat"]
        for t in 0..<steps {
            for d in 0..<devices {
                lines.append("\(prefix)\(d),\(t * spacing + d % spacing),\(0.05 * rng.next() - 0.005),\(0.03 * rng.next() - 0.005)")
            }
        }
        let fences = try CLI.temp(self, "fences.geojson", CLI.fences)
        let positions = try CLI.temp(self, "p.csv", lines.joined(separator: "\n") + "\n")
        return (fences, positions, lines)
    }

    func testEvalAndContainsOnEightThreads() throws {
        let (fences, positions, lines) = try fleet(seed: 99, steps: 60, devices: 100, prefix: "v", spacing: 20)
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

    /// Output rows are formatted on the workers in chunks (8,192 positions for `contains`,
    /// 16,384 events for `eval`) and written in order: a batch of many chunks gives the
    /// one-thread bytes, in both formats.
    func testOutputFormattedInChunksKeepsItsOrder() throws {
        // Devices jumping about the fences' area: most fixes enter or leave one.
        let (fences, positions, lines) = try fleet(seed: 7, steps: 200, devices: 400, prefix: "dev-", spacing: 30)
        for format in ["ndjson", "csv"] {
            let one = try CLI.run(["eval", "--fences", fences, "--positions", positions, "--threads", "1", "--format", format])
            let two = try CLI.run(["eval", "--fences", fences, "--positions", positions, "--threads", "2", "--format", format])
            XCTAssertEqual(one.status, 0, one.err)
            XCTAssertEqual(two.status, 0, two.err)
            XCTAssertGreaterThan(one.out.split(separator: "\n").count, 2 * 16_384, "several chunks of events")
            XCTAssertEqual(two.out, one.out, format)
            let c1 = try CLI.run(["contains", "--fences", fences, "--positions", positions, "--threads", "1", "--format", format])
            let c2 = try CLI.run(["contains", "--fences", fences, "--positions", positions, "--threads", "2", "--format", format])
            XCTAssertEqual(c2.status, 0, c2.err)
            XCTAssertEqual(c1.out.split(separator: "\n").count, 80_000)
            XCTAssertEqual(c2.out, c1.out, format)
            // Both runs format in the same chunks, so also against the input itself: row k is
            // position k (its device), and events go in time order.
            let devices = c2.out.split(separator: "\n").map { row -> Substring in
                format == "csv" ? row.split(separator: ",", omittingEmptySubsequences: false)[0] : row.split(separator: "\"")[3]
            }
            XCTAssertEqual(devices, lines.dropFirst().map { $0.split(separator: ",")[0] }, format)
            let times = two.out.split(separator: "\n").dropFirst(format == "csv" ? 1 : 0).map { row -> Substring in
                format == "csv" ? row.split(separator: ",")[0] : row.split(separator: "\"")[3]
            }
            XCTAssertEqual(times, times.sorted(), "\(format): events out of time order")
        }
    }
}
