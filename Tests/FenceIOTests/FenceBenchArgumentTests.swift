import XCTest

/// `fence-bench` refuses what it cannot run with a message and a status, as `fence` does:
/// usage errors 2, an unreadable file 1 (found by a README audit: `--fences 0` divided by zero
/// and `--load` of a missing or broken file trapped in a `try!`, SIGILL).
final class FenceBenchArgumentTests: XCTestCase {
    func testBadValuesAreUsageErrors() throws {
        for args in [["--fences", "0"], ["--fences", "10,-1"], ["--threads", "0"], ["--threads", "1,0"], ["--check", "-1"], ["--fences"]] {
            let r = try CLI.run(args, executable: "fence-bench")
            XCTAssertEqual(r.status, 2, "\(args): \(r.err)")
            XCTAssertTrue(r.err.hasPrefix("fence-bench: "), "\(args): \(r.err)")
            XCTAssertEqual(r.out, "", "\(args)")
        }
    }

    func testAFileThatCannotBeReadEndsTheLoadCase() throws {
        let broken = try CLI.temp(self, "broken.geojson", #"{"type":"FeatureCollection","features":[{"type":"Feature",}]}"#)
        let missing = (broken as NSString).deletingLastPathComponent + "/missing.geojson"
        for (path, reason) in [(missing, "cannot read"), (broken, "not valid JSON")] {
            let r = try CLI.run(["--load", path, "--readers", "native"], executable: "fence-bench")
            XCTAssertEqual(r.status, 1, r.err)
            // A debug build says so first.
            let message = r.err.split(separator: "\n").last.map(String.init) ?? ""
            XCTAssertTrue(message.hasPrefix("fence-bench: \(path): malformed-input: "), r.err)
            XCTAssertTrue(r.err.contains(reason), r.err)
        }
        let ogr = try CLI.run(["--load", missing, "--readers", "ogr"], executable: "fence-bench")
        XCTAssertEqual(ogr.status, 1, ogr.err)
    }
}
