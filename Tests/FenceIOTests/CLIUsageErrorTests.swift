import Foundation
import XCTest

/// Usage errors of `fence` the coverage audit found no test giving (SPEC: "exit status 0 only
/// on success, 1 on bad input, 2 on bad usage"): each exits 2 with one line saying what is
/// wrong and where the options are, writes nothing to standard output, and reads no input;
/// and `--help` / `-h` of the commands whose help no test asked for.
final class CLIUsageErrorTests: XCTestCase {
    func testBadSettingsAreUsageErrorsNamingTheOption() throws {
        let fences = try CLI.temp(self, "fences.geojson", CLI.fences)
        let positions = try CLI.temp(self, "p.csv", "device,time,lon,lat\na,0,1,1\n")
        let run = ["--fences", fences, "--positions", positions]
        let nowhere = "nats://127.0.0.1:1"
        let cases: [([String], String)] = [
            (["eval"] + run + ["--dwell=-5"], "--dwell must be >= 0"),
            (["eval"] + run + ["--margin", "-1"], "--margin and --exit-delay must be >= 0"),
            (["eval"] + run + ["--exit-delay=-0.5"], "--margin and --exit-delay must be >= 0"),
            (["eval"] + run + ["--evict-idle=-1"], "--evict-idle must be >= 0"),
            (["eval"] + run + ["--input-format", "xml"], "--input-format must be csv or ndjson"),
            (["eval"] + run + ["--coord", "utm"], "--coord must be wgs84, gcj02 or bd09ll"),
            (["eval"] + run + ["--cross=yes"], "--cross takes no value"),
            (["eval"] + run + ["--id-field="], "--id-field needs a field name"),
            (["eval", "--positions", positions], "--fences is required"),
            (["contains"] + run + ["--format", "xml"], "--format must be csv or ndjson"),
            (["nearest"] + run + ["--format", "xml"], "--format must be csv or ndjson"),
            (["nearest"] + run + ["--max-speed", "0"], "--max-speed must be > 0, and 0 <= --min-delay <= --max-delay"),
            (["nearest"] + run + ["--min-delay", "10", "--max-delay", "5"], "--max-speed must be > 0, and 0 <= --min-delay <= --max-delay"),
            (["nearest"] + run + ["--min-delay=-1"], "--max-speed must be > 0, and 0 <= --min-delay <= --max-delay"),
            (["eval"] + run + ["--format", "xml"], "--format must be ndjson or csv"),
            // An empty property name was dropped without a word (`a,,b`; `--properties ''`
            // carried nothing); `fence change` already refused empty names.
            (["eval"] + run + ["--properties", "name,,kind"], "--properties takes names, comma-separated, none empty; got 'name,,kind'"),
            (["eval"] + run + ["--properties="], "--properties takes names, comma-separated, none empty; got ''"),
            // An empty layer name read every layer (`--layer ''`) or was dropped (`a,,b`).
            (["check", "--fences", fences, "--layer="], "--layer takes names, comma-separated, none empty; got ''"),
            (["eval"] + run + ["--layer", "ports,,anchorages"], "--layer takes names, comma-separated, none empty; got 'ports,,anchorages'"),
            // The cluster commands say so before trying a server (none listens on port 1): a
            // bad --name or --timeout was a failed connection, status 1, when no server answered.
            (["status", "--nats", nowhere, "--name", "bad-name"], "--name takes upper-case letters, digits and _"),
            (["status", "--nats", nowhere, "--timeout=-1"], "--timeout takes seconds, from 0 to 1000000000"),
            (["events", "--nats", nowhere, "--name", "x.y"], "--name takes upper-case letters, digits and _"),
            (["inside", "--nats", nowhere, "--name", "lower"], "--name takes upper-case letters, digits and _"),
            (["change", "--nats", nowhere, "--remove", "a", "--name", "a b"], "--name takes upper-case letters, digits and _"),
            (["publish", "--nats", nowhere, "--positions", positions, "--name", "-"], "--name takes upper-case letters, digits and _"),
            (["setup", "--nats", nowhere, "--partitions", "4", "--prefix", "a.*"], "--prefix must be a subject without wildcards or spaces"),
            (["worker", "--nats", nowhere, "--partitions", "0", "--fences", fences, "--lateness=-1"],
             "--lateness, --step, --checkpoint-every and --progress must be >= 0, --ack-wait > 0"),
        ]
        for (args, message) in cases {
            let r = try CLI.run(args)
            XCTAssertEqual(r.status, 2, "\(args): \(r.err)")
            XCTAssertEqual(r.err, "fence: \(message)\nRun `fence \(args[0]) --help` for its options.\n", "\(args)")
            XCTAssertEqual(r.out, "", "\(args)")
        }
    }

    func testEveryCommandAnswersHelp() throws {
        for command in ["check", "contains", "nearest", "change", "eval", "inside", "status", "setup", "publish", "events", "worker"] {
            for flag in ["--help", "-h"] {
                let r = try CLI.run([command, flag])
                XCTAssertEqual(r.status, 0, "\(command) \(flag): \(r.err)")
                XCTAssertTrue(r.out.hasPrefix("Usage: fence \(command) "), "\(command) \(flag): \(r.out.prefix(80))")
                XCTAssertEqual(r.err, "", "\(command) \(flag)")
            }
        }
    }
}
