import FenceEngine
import FenceIO
import Foundation
import XCTest

@testable import FenceNATS

/// `fence inside --nats`: the visits of every partition's checkpoint, against `fence inside`
/// on the state `fence eval` leaves over the same fixes (the oracle: one process, no cluster).
extension NATSClusterTests {
    /// A fleet published in two halves with a change between them that regroups three fences
    /// holding visits (same shapes, so no visit ends) and one after them that removes a fourth;
    /// two workers, four partitions. Drained, `fence inside --nats --fences` must list
    /// `fence eval`'s visits byte for byte, with the new groups and without the removed
    /// fence's; without `--fences` the same visits without groups; filters as on a state file.
    func testInsideOfAClusterListsEvalsVisits() throws {
        let fleet = Fleet(devices: 300, steps: 40, seed: 41, fenceCount: 150, size: 0.15)
        let fences = folder + "/fences.geojson"
        let fenceText = fleet.fencesGeoJSON()
        try Data(fenceText.utf8).write(to: URL(fileURLWithPath: fences))
        let all = folder + "/all.csv"
        try fleet.writeCSV(to: all)
        let lines = try String(contentsOfFile: all, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: true)
        let half = 1 + (lines.count - 1) / 2
        try Data((lines[..<half].joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: folder + "/part0.csv"))
        try Data((([lines[0]] + lines[half...]).joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: folder + "/part1.csv"))

        // The oracle: `fence eval` over every fix, then `fence inside` on its state.
        let state = folder + "/eval.state"
        XCTAssertEqual(
            try FenceCLI.run(["eval", "--fences", fences, "--positions", all, "--state", state], output: folder + "/eval.ndjson", log: folder + "/eval.log"), 0)
        let evalVisits = try insideLines(["--state", state], "state")
        let fenceIDs = evalVisits.compactMap { $0["fence"] as? String }
        var distinct: [String] = []
        for f in fenceIDs where !distinct.contains(f) { distinct.append(f) }
        XCTAssertGreaterThanOrEqual(distinct.count, 6, "too few fences hold visits for the test to mean much")
        let regrouped = Array(distinct.prefix(3))
        let removed = distinct[3]

        // The regrouping: those fences' features again, group "moved".
        let features = fenceText.split(separator: "\n").filter { $0.hasPrefix("{\"type\":\"Feature\"") }
        var changed: [String] = []
        for id in regrouped {
            let f = features.first { $0.contains("\"id\":\"\(id)\"") }!
            let text = String(f.hasSuffix(",") ? f.dropLast() : f[...])
            changed.append(text.replacingOccurrences(of: #""group":"g\d""#, with: #""group":"moved""#, options: .regularExpression))
        }
        let regroup = folder + "/regroup.geojson"
        try Data(("{\"type\":\"FeatureCollection\",\"features\":[" + changed.joined(separator: ",") + "]}").utf8).write(to: URL(fileURLWithPath: regroup))

        let urls = try startSingleServer(partitions: 4)
        let u = urls.joined(separator: ",")
        // Before any checkpoint: every partition is said to have none, and nothing is listed.
        XCTAssertEqual(try FenceCLI.run(["inside", "--nats", u], output: folder + "/empty.ndjson", log: folder + "/empty.log"), 0)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: folder + "/empty.ndjson")).count, 0)
        XCTAssertTrue(log("empty").contains("partition 3 has no checkpoint yet"), log("empty"))

        let w1 = try worker(urls, partitions: "0,1", fences: fences, log: "w1", lateness: "30")
        let w2 = try worker(urls, partitions: "2,3", fences: fences, log: "w2", lateness: "30")
        let publishLog = folder + "/publish.log"
        XCTAssertEqual(try FenceCLI.run(["publish", "--nats", u, "--positions", folder + "/part0.csv", "--window", "30", "--no-flush"], log: publishLog), 0)
        XCTAssertEqual(try FenceCLI.run(["change", "--nats", u, "--add", regroup], log: publishLog), 0)
        XCTAssertEqual(try FenceCLI.run(["publish", "--nats", u, "--positions", folder + "/part1.csv", "--window", "30"], log: publishLog), 0)
        XCTAssertEqual(try FenceCLI.run(["change", "--nats", u, "--remove", removed], log: publishLog), 0)
        try waitDrained(urls, timeout: 300)
        try stop(w1)
        try stop(w2)

        // Expected: eval's visits, regrouped, the removed fence's gone; as NDJSON lines.
        var expected: [[String: Any]] = []
        for var v in evalVisits where v["fence"] as? String != removed {
            if regrouped.contains(v["fence"] as! String) { v["group"] = "moved" }
            expected.append(v)
        }
        let got = try insideLines(["--nats", u, "--fences", fences], "nats")
        XCTAssertEqual(got.count, expected.count)
        XCTAssertTrue(NSArray(array: got).isEqual(to: expected), "fence inside --nats differs from eval's visits")
        XCTAssertTrue(got.contains { $0["group"] as? String == "moved" })
        XCTAssertTrue(log("inside-nats").contains("of 4 partitions"), log("inside-nats"))

        // Without --fences: the same visits, no group.
        let bare = try insideLines(["--nats", u], "bare")
        XCTAssertTrue(NSArray(array: bare).isEqual(to: expected.map { $0.filter { $0.key != "group" } }))

        // Filters as on a state file: a group, a device, a fence nobody is in.
        let device = expected[0]["device"] as! String
        let filtered = try insideLines(["--nats", u, "--fences", fences, "--group", "moved", "--device", device, "--fence", "nowhere"], "filtered")
        XCTAssertTrue(NSArray(array: filtered).isEqual(to: []))
        XCTAssertTrue(log("inside-filtered").contains("no visit listed for --fence 'nowhere'"), log("inside-filtered"))
        let moved = try insideLines(["--nats", u, "--fences", fences, "--group", "moved"], "moved")
        XCTAssertTrue(NSArray(array: moved).isEqual(to: expected.filter { $0["group"] as? String == "moved" }))
        XCTAssertFalse(moved.isEmpty)

        // Byte for byte, NDJSON and CSV: what the state file gives, its lines of the removed
        // fence dropped and the regrouped fences' group cells mended (ids and groups here hold
        // no comma or quote, so the text can be mended as text).
        for format in ["ndjson", "csv"] {
            XCTAssertEqual(
                try FenceCLI.run(["inside", "--state", state, "--format", format], output: folder + "/state.\(format)", log: folder + "/bytes.log"), 0)
            XCTAssertEqual(
                try FenceCLI.run(["inside", "--nats", u, "--fences", fences, "--format", format], output: folder + "/nats.\(format)", log: folder + "/bytes.log"), 0)
            var mended: [String] = []
            for line in try String(contentsOfFile: folder + "/state.\(format)", encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false) {
                let text = String(line)
                let fence = format == "csv" ? String(text.prefix { $0 != "," }) : (text.isEmpty ? "" : String(text.dropFirst(10).prefix { $0 != "\"" }))
                if fence == removed { continue }
                guard regrouped.contains(fence) else {
                    mended.append(text)
                    continue
                }
                mended.append(
                    format == "csv"
                        ? text.replacingOccurrences(of: "^\(fence),g\\d,", with: "\(fence),moved,", options: .regularExpression)
                        : text.replacingOccurrences(of: #""group":"g\d""#, with: #""group":"moved""#, options: .regularExpression))
            }
            let natsText = try String(contentsOfFile: folder + "/nats.\(format)", encoding: .utf8)
            XCTAssertEqual(natsText, mended.joined(separator: "\n"), format)
            XCTAssertEqual(natsText.components(separatedBy: "moved").count - 1, moved.count, format)
        }

        // Usage: --group needs --fences with --nats; --state and --nats together; fence options
        // without --nats.
        for args in [["--nats", u, "--group", "g1"], ["--nats", u, "--state", state], ["--state", state, "--fences", fences]] {
            XCTAssertEqual(try FenceCLI.run(["inside"] + args, log: folder + "/usage.log"), 2, "\(args)")
        }
        XCTAssertTrue(log("usage").contains("--group with --nats needs --fences"), log("usage"))
    }

    /// Each checkpoint's groups are those its worker held: the base fences with the changes up
    /// to that checkpoint's last change, not the latest. Four checkpoints at changes 0, 1, 2
    /// and 3 (a regroup, a regroup and a new group, a removal), given out of order; each holds
    /// one device inside both fences.
    func testEachCheckpointGetsTheGroupsOfItsOwnLastChange() throws {
        let urls = try startSingleServer(partitions: 4)
        let connection = try NATSConnection(servers: urls, name: "test")
        let topology = try Deployment.topology(connection: connection)
        func add(_ features: [(String, String)]) -> FenceChange.Operation {
            let text = features.map { id, group in
                #"{"type":"Feature","properties":{"id":"\#(id)","group":"\#(group)","radius":500},"geometry":{"type":"Point","coordinates":[5,45]}}"#
            }
            return .add(geoJSON: Array(#"{"type":"FeatureCollection","features":[\#(text.joined(separator: ","))]}"#.utf8))
        }
        let s1 = try Deployment.publishChange(add([("a", "one")]), connection: connection, topology: topology)
        let s2 = try Deployment.publishChange(add([("a", "two"), ("b", "bee")]), connection: connection, topology: topology)
        let s3 = try Deployment.publishChange(.remove(ids: ["b"]), connection: connection, topology: topology)

        var base = EventEngine()
        _ = base.add([Fence.circle(id: "a", lon: 5, lat: 45, radius: 500, group: "g0"), Fence.circle(id: "b", lon: 5, lat: 45, radius: 500, group: "g0")])
        var inside = base
        _ = inside.evaluate([Position(device: "d", time: 1_700_000_000, lon: 5, lat: 45)])
        let snapshot = inside.snapshot(fenceRecords: false)
        XCTAssertEqual(snapshot.devices.first?.pairs.count, 2)
        let sequences: [UInt64] = [s2, 0, s3, s1]
        let checkpoints = sequences.enumerated().map { i, s in
            PartitionCheckpoint(
                partition: i, lastSequence: 1, replayFrom: 1, lastChangeSequence: s, horizon: 0, latestSeen: 0,
                counters: PartitionStream.Counters(), fingerprint: 0, owner: "test", snapshot: snapshot)
        }
        let groups = try ClusterVisits.groups(for: checkpoints, base: base, connection: connection, topology: topology)
        let expected: [UInt64: (String?, String?)] = [0: ("g0", "g0"), s1: ("one", "g0"), s2: ("two", "bee"), s3: ("two", nil)]
        for (i, s) in sequences.enumerated() {
            XCTAssertEqual(groups[i]["a"], expected[s]!.0, "checkpoint at change \(s)")
            XCTAssertEqual(groups[i]["b"], expected[s]!.1, "checkpoint at change \(s)")
        }
        // A checkpoint through a change the control subject does not hold (yet) is refused.
        var ahead = checkpoints[0]
        ahead.lastChangeSequence = s3 + 1000
        XCTAssertThrowsError(try ClusterVisits.groups(for: [ahead], base: base, connection: connection, topology: topology))
    }

    /// `fence change --remove-id` and `--remove-group-name` take each value whole: an id with
    /// a comma, one with a leading space (beside one without), a group with a comma. One
    /// device inside each of four fences; after the changes only the untouched fence's visit
    /// is left (`fence inside --nats`), and the removed ones' exits say `fence-removed`.
    func testChangeRemovesIdsAndGroupsNamedWhole() throws {
        let urls = try startSingleServer(partitions: 2)
        let u = urls.joined(separator: ",")
        let fences = folder + "/fences.geojson"
        let specs = [("Paris, FR", "g", 5.0), (" yard", "g", 6.0), ("yard", "g", 7.0), ("z", "north, east", 8.0)]
        let features = specs.map { id, group, lon in
            #"{"type":"Feature","properties":{"id":"\#(id)","group":"\#(group)","radius":500},"geometry":{"type":"Point","coordinates":[\#(lon),45]}}"#
        }
        try Data((#"{"type":"FeatureCollection","features":["# + features.joined(separator: ",") + "]}").utf8).write(to: URL(fileURLWithPath: fences))
        let fixes = folder + "/fixes.csv"
        try Data(("device,time,lon,lat\n" + specs.enumerated().map { "d\($0),1700000000,\($1.2),45\n" }.joined()).utf8).write(to: URL(fileURLWithPath: fixes))
        let w = try worker(urls, partitions: "0,1", fences: fences, log: "w", lateness: "30")
        XCTAssertEqual(try FenceCLI.run(["publish", "--nats", u, "--positions", fixes, "--window", "30"], log: folder + "/publish.log"), 0)
        try waitDrained(urls, timeout: 120)
        XCTAssertEqual(try insideLines(["--nats", u], "before").map { $0["fence"] as! String }.sorted(), specs.map(\.0).sorted())

        let changeLog = folder + "/change.log"
        // Empty values, and the two forms of one change mixed with another, are usage errors.
        for args in [["--remove-id", ""], ["--remove-group-name", ""], ["--remove-id", "a", "--remove-group", "g"]] {
            XCTAssertEqual(try FenceCLI.run(["change", "--nats", u] + args, log: changeLog), 2, "\(args)")
        }
        XCTAssertEqual(try FenceCLI.run(["change", "--nats", u, "--remove-id", "Paris, FR", "--remove-id", " yard"], log: changeLog), 0)
        XCTAssertEqual(try FenceCLI.run(["change", "--nats", u, "--remove-group-name", "north, east"], log: changeLog), 0)
        // 25 ids no fence has: each partition logs the first 20 and how many more.
        XCTAssertEqual(try FenceCLI.run(["change", "--nats", u, "--remove", (0..<25).map { "x\($0)" }.joined(separator: ",")], log: changeLog), 0)
        try waitDrained(urls, timeout: 120)
        try stop(w)
        let after = try insideLines(["--nats", u], "after")
        XCTAssertEqual(after.map { $0["fence"] as! String }, ["yard"])
        let workerLog = log("w")
        XCTAssertFalse(workerLog.contains("no loaded fence") || workerLog.contains("no fence \"Paris") || workerLog.contains("no fence \" yard"), workerLog)
        XCTAssertTrue(workerLog.contains("no fence \"x19\" is loaded") && !workerLog.contains("no fence \"x20\""), workerLog)
        XCTAssertTrue(workerLog.contains("and 5 more problems"), workerLog)

        let events = folder + "/events.ndjson"
        XCTAssertEqual(try FenceCLI.run(["events", "--nats", u, "--output", events], log: folder + "/events.log"), 0)
        let removed = try String(contentsOfFile: events, encoding: .utf8).split(separator: "\n").compactMap { line -> String? in
            let o = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            return o["reason"] as? String == "fence-removed" ? o["fence"] as? String : nil
        }
        XCTAssertEqual(removed.sorted(), [" yard", "Paris, FR", "z"])
    }

    /// Runs `fence inside` with `args` (NDJSON) and returns its lines, parsed; its standard
    /// error goes to `inside-<name>.log`.
    func insideLines(_ args: [String], _ name: String) throws -> [[String: Any]] {
        let out = folder + "/inside-\(name).ndjson"
        XCTAssertEqual(try FenceCLI.run(["inside"] + args, output: out, log: folder + "/inside-\(name).log"), 0, log("inside-\(name)"))
        return try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
    }
}
