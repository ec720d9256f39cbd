import FenceIO
import Foundation
import SeededRandom
import XCTest

/// The `fence` binary, run as a user runs it (built next to the test bundle).
/// The tests' 64-bit linear congruential generator (Knuth's MMIX constants): doubles in
/// [0, 1) from the top 53 bits, the sequence every seed gave in the tests that wrote it inline.
struct LCG {
    var state: UInt64
    init(_ seed: UInt64) { state = seed }
    mutating func next() -> Double {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Double(state >> 11) * 0x1p-53
    }
}

enum CLI {
    /// The build's products folder holds the test bundle (on Linux the bundle URL is that
    /// folder itself) and the `fence` executable.
    static var binary: URL { binary(named: "fence") }

    /// An executable of the build (`fence`, `fence-bench`).
    static func binary(named name: String) -> URL {
        let bundle = Bundle(for: CLITests.self).bundleURL
        let candidates = [bundle.appendingPathComponent(name), bundle.deletingLastPathComponent().appendingPathComponent(name)]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }

    static func run(_ args: [String], stdin: String? = nil, executable: String = "fence") throws -> (status: Int32, out: String, err: String) {
        let p = Process()
        p.executableURL = binary(named: executable)
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
        // Standard error read beside standard output: a run that fills one pipe while the other
        // is read would otherwise wait forever.
        nonisolated(unsafe) var e = Data()
        let errRead = DispatchGroup()
        errRead.enter()
        DispatchQueue.global().async {
            e = err.fileHandleForReading.readDataToEndOfFile()
            errRead.leave()
        }
        let o = out.fileHandleForReading.readDataToEndOfFile()
        errRead.wait()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
    }

    /// Writes `text` to a file called `name` in a fresh temporary folder, which is removed
    /// (with anything the test put next to the file) when `test` ends.
    static func temp(_ test: XCTestCase, _ name: String, _ text: String) throws -> String {
        let dir = NSTemporaryDirectory() + "fence-cli-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        test.addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/" + name
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    static let fences = """
        {"type":"FeatureCollection","features":[
         {"type":"Feature","properties":{"id":"port","radius":1000,"group":"harbor"},"geometry":{"type":"Point","coordinates":[0,0]}},
         {"type":"Feature","properties":{"id":"yard"},"geometry":{"type":"Polygon","coordinates":[[[0.02,0],[0.04,0],[0.04,0.02],[0.02,0.02],[0.02,0]]]}}
        ]}
        """
}

final class CLITests: XCTestCase {
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
        let fencePath = try CLI.temp(self, "fences.geojson", CLI.fences)
        let whole = try CLI.temp(self, "whole.csv", lines.joined(separator: "\n") + "\n")
        let first = try CLI.temp(self, "first.csv", lines[0..<5001].joined(separator: "\n") + "\n")
        let second = try CLI.temp(self, "second.csv", ([lines[0]] + lines[5001...]).joined(separator: "\n") + "\n")
        let one = try CLI.run(["eval", "--fences", fencePath, "--positions", whole, "--dwell", "120"])
        XCTAssertEqual(one.status, 0, one.err)
        // Next to the fences, so it goes when the test ends.
        let state = (fencePath as NSString).deletingLastPathComponent + "/state"
        let a = try CLI.run(["eval", "--fences", fencePath, "--positions", first, "--dwell", "120", "--state", state])
        let b = try CLI.run(["eval", "--fences", fencePath, "--positions", second, "--dwell", "120", "--state", state])
        XCTAssertEqual(a.status, 0, a.err)
        XCTAssertEqual(b.status, 0, b.err)
        XCTAssertGreaterThan(one.out.split(separator: "\n").count, 100)
        XCTAssertEqual(a.out + b.out, one.out)

        // A checkpoint cut in half is refused with a clear error, and left as it is.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: state))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: state))
        let c = try CLI.run(["eval", "--fences", fencePath, "--positions", second, "--state", state])
        XCTAssertEqual(c.status, 1)
        XCTAssertTrue(c.err.contains("truncated"), c.err)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: state)).count, bytes.count / 2)
    }

    func testEventRecordsAndExitStatuses() throws {
        let fencePath = try CLI.temp(self, "fences.geojson", CLI.fences)
        // The device id `a,"b` as RFC 4180 writes it: quoted, the quote doubled.
        let csv = "device,time,lon,lat\n\"a,\"\"b\",2020-12-01T00:00:00,0,0\n\"a,\"\"b\",2020-12-01T00:20:00,0.5,0.5\n"
        let r = try CLI.run(["eval", "--fences", fencePath, "--positions", "-", "--format", "csv"], stdin: csv)
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertEqual(
            r.out.split(separator: "\n").map(String.init),
            [
                "time,device,fence,group,event,lon,lat,initial,reason,inside_s",
                "2020-12-01T00:00:00.000Z,\"a,\"\"b\",port,harbor,enter,0.0,0.0,true,,",
                "2020-12-01T00:20:00.000Z,\"a,\"\"b\",port,harbor,exit,0.5,0.5,,,1200",
            ])
        XCTAssertEqual(try CLI.run(["eval", "--fences", fencePath, "--positions", "/nonexistent/file.csv"]).status, 1)
        XCTAssertEqual(try CLI.run(["eval", "--bogus"]).status, 2)
        XCTAssertEqual(try CLI.run(["eval", "--help"]).status, 0)
        let bad = try CLI.run(["eval", "--fences", fencePath, "--positions", "-"], stdin: "device,time,lon,lat\nx,0,NaN,0\n")
        XCTAssertEqual(bad.status, 1, "every line bad: over --max-bad")
        XCTAssertTrue(bad.err.contains("line 2"), bad.err)
    }
}

extension CLITests {
    /// Fences removed or replaced between two runs with --state: the devices inside exit,
    /// reasons fence-removed and fence-replaced, at their last fix of the first run, with the
    /// old group, before the second run's own events.
    func testStateRunsReportFencesChangedBetweenThem() throws {
        let fencePath = try CLI.temp(self, "fences.geojson", CLI.fences)
        let state = (fencePath as NSString).deletingLastPathComponent + "/state"
        let first = try CLI.run(
            ["eval", "--fences", fencePath, "--positions", "-", "--state", state, "--format", "csv"],
            stdin: "device,time,lon,lat\na,0,0,0\nb,0,0.03,0.01\n")
        XCTAssertEqual(first.status, 0, first.err)
        XCTAssertEqual(first.out.split(separator: "\n").filter { $0.contains(",enter,") }.count, 2, first.out)
        // The port is gone; the yard has moved a degree away.
        let moved = """
            {"type":"FeatureCollection","features":[
             {"type":"Feature","properties":{"id":"yard"},"geometry":{"type":"Polygon","coordinates":[[[1.02,1],[1.04,1],[1.04,1.02],[1.02,1.02],[1.02,1]]]}}
            ]}
            """
        let movedPath = try CLI.temp(self, "moved.geojson", moved)
        let second = try CLI.run(
            ["eval", "--fences", movedPath, "--positions", "-", "--state", state, "--format", "csv"],
            stdin: "device,time,lon,lat\na,100,0,0\nb,100,0.03,0.01\n")
        XCTAssertEqual(second.status, 0, second.err)
        XCTAssertEqual(
            second.out.split(separator: "\n").dropFirst().map(String.init),
            [
                "1970-01-01T00:00:00.000Z,a,port,harbor,exit,0.0,0.0,,fence-removed,0",
                "1970-01-01T00:00:00.000Z,b,yard,,exit,0.03,0.01,,fence-replaced,0",
            ])
        XCTAssertTrue(second.err.contains("reason fence-removed"), second.err)
    }

    /// Input out of time order across batches meets a fence an earlier batch expired and
    /// removed: the later batch's older fix no longer sees it, and `eval` says so once (it was
    /// silent). Time-ordered input with the same batches gets no warning.
    func testEvalWarnsWhenALaterBatchPrecedesAnExpiry() throws {
        let fences = try CLI.temp(
            self, "expiring.geojson",
            #"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"id":"fair","radius":1000,"expires":50},"geometry":{"type":"Point","coordinates":[0,0]}}]}"#)
        // Sorted by device: a at 100 s (batch 1, which ends past the expiry), b at 10 s inside.
        let byDevice = "device,time,lon,lat\na,100,5,5\nb,10,0,0\n"
        let r = try CLI.run(["eval", "--fences", fences, "--positions", "-", "--batch", "1"], stdin: byDevice)
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertEqual(r.out, "")
        XCTAssertTrue(
            r.err.contains(
                "fence eval: warning: batch 2 holds fixes from 1970-01-01T00:00:10.000Z, before fences that an earlier batch "
                    + "expired (the latest at 1970-01-01T00:00:50.000Z)"), r.err)
        // In one batch, b's fix sees the fence (an initial enter, and its exit at the expiry).
        let one = try CLI.run(["eval", "--fences", fences, "--positions", "-"], stdin: byDevice)
        XCTAssertTrue(one.out.contains(#""device":"b","fence":"fair","event":"enter""#), one.out)
        XCTAssertFalse(one.err.contains("warning"), one.err)
        // The summary counts the fence as loaded and expired (it said "0 fences").
        XCTAssertTrue(one.err.contains("fence eval: 1 fences (0 rejected, 1 expired);"), one.err)
        let evicting = try CLI.run(["eval", "--fences", fences, "--positions", "-", "--evict-idle", "30"], stdin: byDevice)
        XCTAssertTrue(evicting.err.contains("; 1 devices held at the end (idle ones evicted);"), evicting.err)
        let ordered = try CLI.run(["eval", "--fences", fences, "--positions", "-", "--batch", "1"], stdin: "device,time,lon,lat\nb,10,0,0\na,100,5,5\n")
        XCTAssertTrue(ordered.out.contains(#""device":"b","fence":"fair","event":"enter""#), ordered.out)
        XCTAssertFalse(ordered.err.contains("warning"), ordered.err)
    }

    /// `--max-lead`: a fix dated 50 years after the clock (a device with a broken clock) in a
    /// live feed is refused, named, and counted, and the others give the events of the feed
    /// without it; without the bound, under --evict-idle, that one fix ends every device's
    /// visit and makes the later fixes late. Fixes up to the bound are taken.
    func testMaxLeadRefusesAFixFromAWrongClock() throws {
        let fences = try CLI.temp(
            self, "ahead.geojson",
            #"{"type":"FeatureCollection","features":[{"type":"Feature","id":"a","properties":{"radius":1000},"geometry":{"type":"Point","coordinates":[0,0]}}]}"#)
        let now = Int(Date().timeIntervalSince1970)
        let clean = ["device,time,lon,lat", "d1,\(now - 400),0,0", "d2,\(now - 400),0,0", "d1,\(now - 300),0,0", "d1,\(now - 200),0.5,0", "d2,\(now - 100),0.5,0"]
        var glitched = clean
        glitched.insert("broken,\(now + 50 * 31_557_600),50,50", at: 4)
        let feed = glitched.joined(separator: "\n") + "\n"
        let common = ["eval", "--fences", fences, "--positions", "-", "--evict-idle", "3600", "--batch", "2", "--max-bad", "1"]
        let expected = try CLI.run(common, stdin: clean.joined(separator: "\n") + "\n")
        XCTAssertEqual(expected.out.components(separatedBy: "\n").filter { !$0.isEmpty }.count, 4, expected.out)

        let bounded = try CLI.run(common + ["--max-lead", "3600"], stdin: feed)
        XCTAssertEqual(bounded.status, 0, bounded.err)
        XCTAssertEqual(bounded.out, expected.out)
        XCTAssertTrue(bounded.err.contains("fence: -: line 5: device broken at 2076-"), bounded.err)
        XCTAssertTrue(bounded.err.contains("is dated more than --max-lead 3600.0 s after the clock"), bounded.err)
        XCTAssertTrue(bounded.err.contains("6 positions read, 1 rejected (1 dated ahead of the clock), 0 late,"), bounded.err)

        let unbounded = try CLI.run(common, stdin: feed)
        XCTAssertTrue(unbounded.out.contains(#""reason":"device-idle""#), unbounded.out)
        XCTAssertTrue(unbounded.err.contains("0 rejected, 2 late,"), unbounded.err)
        // "off", as the worker and publish take it, is the default here.
        XCTAssertEqual(try CLI.run(common + ["--max-lead", "off"], stdin: feed).out, unbounded.out)

        // Up to the bound a fix is taken: 60 s ahead under --max-lead 3600.
        // A feed wholly dated ahead (a clock in the wrong zone) is over --max-bad in its own
        // batch: the run stops with status 1, nothing evaluated.
        let wrongZone = (0..<50).map { "d\($0),\(now + 8 * 3600),0,0" }.joined(separator: "\n")
        let stopped = try CLI.run(
            ["eval", "--fences", fences, "--positions", "-", "--max-lead", "3600"], stdin: "device,time,lon,lat\n" + wrongZone + "\n")
        XCTAssertEqual(stopped.status, 1, stopped.err)
        XCTAssertTrue(stopped.err.contains("50 of 50 lines are bad"), stopped.err)
        // Each named with its line (the first 20).
        XCTAssertTrue(stopped.err.contains("fence: -: line 2: device d0 at ") && stopped.err.contains("fence: -: line 21: device d19 at "), stopped.err)
        XCTAssertFalse(stopped.err.contains("line 22: device d20"), stopped.err)
        XCTAssertEqual(stopped.out, "")
        let near = try CLI.run(common + ["--max-lead", "3600"], stdin: "device,time,lon,lat\nd1,\(now + 60),0,0\n")
        XCTAssertTrue(near.out.contains(#""event":"enter""#), near.out + near.err)
        XCTAssertTrue(try CLI.run(common + ["--max-lead", "-1"], stdin: feed).err.contains("--max-lead takes 0 to"))
    }

    /// Time-ordered input gives events in (time, device, fence, event) order whatever the batch
    /// size: two devices' events in one millisecond that a batch's end cuts apart go by device.
    /// B,100 then A,100 was written B first with --batch 1 (independent audit). The events of
    /// a restored state join the order too; and a run that stops on bad input keeps what its
    /// batches caused.
    func testBatchCutsDoNotChangeTheOrderOfTimeOrderedInput() throws {
        let fences = try CLI.temp(
            self, "square.geojson",
            #"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"id":"sq"},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1],[0,0]]]}}]}"#)
        var lines = ["device,time,lon,lat"]
        for t in stride(from: 100, through: 104, by: 1) {
            for d in ["e", "d", "c", "b", "a"] { lines.append("\(d),\(t),\(t % 2 == 0 ? 0.5 : 5),0.5") }
        }
        let input = lines.joined(separator: "\n") + "\n"
        let whole = try CLI.run(["eval", "--fences", fences, "--positions", "-", "--format", "csv"], stdin: input)
        XCTAssertEqual(whole.status, 0, whole.err)
        let rows = whole.out.split(separator: "\n").dropFirst().map(String.init)
        XCTAssertEqual(rows.count, 25)
        XCTAssertEqual(rows.prefix(5).map { $0.split(separator: ",")[1] }, ["a", "b", "c", "d", "e"])
        for batch in ["1", "2", "3", "7"] {
            let cut = try CLI.run(["eval", "--fences", fences, "--positions", "-", "--format", "csv", "--batch", batch], stdin: input)
            XCTAssertEqual(cut.status, 0, cut.err)
            XCTAssertEqual(cut.out, whole.out, "--batch \(batch)")
        }
        // A bad line stops the run (--max-bad 0) after the batches before it: their events,
        // the held millisecond included, are written.
        let stopped = try CLI.run(
            ["eval", "--fences", fences, "--positions", "-", "--format", "csv", "--batch", "5", "--max-bad", "0"],
            stdin: lines.prefix(11).joined(separator: "\n") + "\nz,105,x,0\n")
        XCTAssertEqual(stopped.status, 1, stopped.err)
        XCTAssertEqual(stopped.out.split(separator: "\n").dropFirst().map(String.init), Array(rows.prefix(10)))
    }

    /// A batch with more (fix, fence) matches than --max-matches is evaluated in pieces in
    /// event time, each piece's events written before the next: the output is byte for byte
    /// that of one pass, with the input out of time order within the batch, across batch
    /// sizes, expiring fences and idle eviction. 30 nested fences over a fleet of 240 devices:
    /// about 20 matches a fix.
    func testManyMatchesGoInPiecesWithTheSameOutput() throws {
        var rng = SplitMix64(seed: 77)
        var features: [String] = []
        for i in 0..<30 {
            let expires = i % 7 == 3 ? #","expires":1700001500"# : ""
            if i % 2 == 0 {
                features.append(
                    #"{"type":"Feature","properties":{"id":"c\#(i)","radius":\#(300 + 150 * i)\#(expires)},"geometry":{"type":"Point","coordinates":[5,50]}}"#)
            } else {
                let d = 0.004 + 0.002 * Double(i)
                let ring = [[5 - d, 50 - d], [5 + d, 50 - d], [5 + d, 50 + d], [5 - d, 50 + d], [5 - d, 50 - d]]
                features.append(
                    #"{"type":"Feature","properties":{"id":"s\#(i)"\#(expires)},"geometry":{"type":"Polygon","coordinates":[\#(ring)]}}"#)
            }
        }
        let fences = try CLI.temp(self, "nested.geojson", #"{"type":"FeatureCollection","features":["# + features.joined(separator: ",") + "]}")
        var fixes: [String] = []
        for d in 0..<240 {
            var lon = 5 + rng.uniform(-0.03, 0.03), lat = 50 + rng.uniform(-0.03, 0.03)
            var t = 1_700_000_000 + rng.uniform(0, 600)
            for _ in 0..<50 {
                fixes.append("v\(d),\(String(format: "%.3f", t)),\(String(format: "%.6f", lon)),\(String(format: "%.6f", lat))")
                lon += rng.uniform(-0.004, 0.004)
                lat += rng.uniform(-0.004, 0.004)
                t += rng.next() % 25 == 0 ? rng.uniform(400, 900) : rng.uniform(1, 60)
            }
        }
        fixes.shuffle(using: &rng)
        let positions = try CLI.temp(self, "fixes.csv", "device,time,lon,lat\n" + fixes.joined(separator: "\n") + "\n")
        let common = ["eval", "--fences", fences, "--positions", positions, "--format", "csv", "--evict-idle", "300", "--dwell", "120"]
        setenv("FENCE_PHASES", "1", 1)
        defer { unsetenv("FENCE_PHASES") }
        func passes(_ err: String) -> Int { err.split(separator: "\n").filter { $0.hasPrefix("evaluate ") }.count }
        let whole = try CLI.run(common)
        XCTAssertEqual(whole.status, 0, whole.err)
        XCTAssertEqual(passes(whole.err), 1, "one batch, under the default budget: one pass")
        let rows = whole.out.split(separator: "\n").count
        XCTAssertGreaterThan(rows, 5_000)
        XCTAssertTrue(whole.out.contains("device-idle") && whole.out.contains("fence-expired"))
        for (batch, matches, least) in [("1000000", "20000", 8), ("12000", "1", 100)] {
            let cut = try CLI.run(common + ["--batch", batch, "--max-matches", matches])
            XCTAssertEqual(cut.status, 0, cut.err)
            XCTAssertGreaterThanOrEqual(passes(cut.err), least, "--batch \(batch) --max-matches \(matches)")
            XCTAssertEqual(cut.out, whole.out, "--batch \(batch) --max-matches \(matches)")
        }
        // Against its own batch size without pieces: batches of 10,000 cut the shuffled input
        // (fixes go late), pieces within them do not change that.
        let batches = try CLI.run(common + ["--batch", "10000"])
        XCTAssertEqual(passes(batches.err), 2)
        XCTAssertNotEqual(batches.out, whole.out)
        let batchesCut = try CLI.run(common + ["--batch", "10000", "--max-matches", "20000"])
        XCTAssertGreaterThanOrEqual(passes(batchesCut.err), 6)
        XCTAssertEqual(batchesCut.out, batches.out)
        XCTAssertTrue(try CLI.run(common + ["--max-matches", "0"]).err.contains("--max-matches must be a whole number"))
    }

    /// Asking for `cross` in --actions, or in a fence's own actions, turns its detection on:
    /// before, only --cross did, and the other two asked for an event that never came.
    func testCrossInTheActionsTurnsOnItsDetection() throws {
        let fences = """
            {"type":"FeatureCollection","features":[
             {"type":"Feature","properties":{"id":"gate","actions":"enter,exit,cross"},"geometry":{"type":"Polygon","coordinates":[[[0.01,-0.01],[0.011,-0.01],[0.011,0.01],[0.01,0.01],[0.01,-0.01]]]}},
             {"type":"Feature","properties":{"id":"wall"},"geometry":{"type":"Polygon","coordinates":[[[0.02,-0.01],[0.021,-0.01],[0.021,0.01],[0.02,0.01],[0.02,-0.01]]]}}
            ]}
            """
        let fencePath = try CLI.temp(self, "gates.geojson", fences)
        // Two fixes, both outside, on either side of both fences.
        let fixes = "device,time,lon,lat\nv,0,0,0\nv,60,0.03,0\n"
        func crossed(_ extra: [String]) throws -> [String] {
            let r = try CLI.run(["eval", "--fences", fencePath, "--positions", "-", "--format", "csv"] + extra, stdin: fixes)
            XCTAssertEqual(r.status, 0, r.err)
            return r.out.split(separator: "\n").dropFirst().filter { $0.contains(",cross,") }.map { String($0.split(separator: ",")[2]) }
        }
        XCTAssertEqual(try crossed([]), ["gate"], "the fence's own mask asks for cross")
        XCTAssertEqual(try crossed(["--actions", "enter,exit,cross"]), ["gate", "wall"])
        XCTAssertEqual(try crossed(["--cross"]), ["gate", "wall"])
    }

    /// A fence whose own `actions` is empty is loaded and reports nothing: `eval` and `check`
    /// say so once (it was silent), naming the first three; none is said without one.
    func testFencesWithEmptyActionsAreNoted() throws {
        func fence(_ id: String, _ actions: String?) -> String {
            let member = actions.map { ",\"actions\":\($0)" } ?? ""
            return #"{"type":"Feature","properties":{"id":"\#(id)"\#(member)},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1],[0,0]]]}}"#
        }
        let fixes = "device,time,lon,lat\nd,1,0.5,0.5\n"
        for (actions, silent) in [(["[]", "[]", "[]", "[]", nil], 4), (["\"enter\"", nil], 0), (["[]", "\"exit\""], 1)] {
            let features = actions.enumerated().map { fence("f\($0.offset)", $0.element) }
            let path = try CLI.temp(self, "silent\(silent).geojson", #"{"type":"FeatureCollection","features":["# + features.joined(separator: ",") + "]}")
            let eval = try CLI.run(["eval", "--fences", path, "--positions", "-", "--format", "csv"], stdin: fixes)
            let check = try CLI.run(["check", "--fences", path])
            XCTAssertEqual(eval.status, 0, eval.err)
            XCTAssertEqual(check.status, 0, check.err)
            let enters = eval.out.split(separator: "\n").dropFirst().map { String($0.split(separator: ",")[2]) }
            XCTAssertEqual(Set(enters), Set(actions.indices.filter { actions[$0] != "[]" && actions[$0] != "\"exit\"" }.map { "f\($0)" }))
            for err in [eval.err, check.err] {
                if silent == 0 {
                    XCTAssertFalse(err.contains("note:"), err)
                } else {
                    let said = silent == 1 ? "1 fence has an empty \"actions\" and reports no event (f0)" : "4 fences have an empty \"actions\" and report no event (f0, f1, f2, ...)"
                    XCTAssertTrue(err.contains(said), err)
                }
            }
        }
    }
}

final class CLICheckAndNearestTests: XCTestCase {
    func testCheckListsEveryProblem() throws {
        let t = CLI.self
        let path = try t.temp(
            self,
            "bad.geojson",
            """
            {"type":"FeatureCollection","features":[
             {"type":"Feature","properties":{"id":"ok","radius":10},"geometry":{"type":"Point","coordinates":[0,0]}},
             {"type":"Feature","properties":{"id":"bowtie"},"geometry":{"type":"Polygon","coordinates":[[[0,0],[2,2],[2,0],[0,2],[0,0]]]}},
             {"type":"Feature","properties":{"id":"open"},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1]]]}},
             {"type":"Feature","properties":{"id":"neg","radius":-1},"geometry":{"type":"Point","coordinates":[0,0]}}
            ]}
            """)
        let r = try t.run(["check", "--fences", path])
        XCTAssertEqual(r.status, 1)
        let lines = r.out.split(separator: "\n")
        XCTAssertEqual(lines.count, 3, r.out)
        XCTAssertTrue(r.out.contains("fence bowtie: invalid-geometry: Self-intersection"), r.out)
        XCTAssertTrue(r.out.contains("fence open: ring-not-closed"), r.out)
        XCTAssertTrue(r.out.contains("fence neg: invalid-radius"), r.out)
        let repaired = try t.run(["check", "--fences", path, "--repair"])
        XCTAssertTrue(repaired.out.contains("fence bowtie: repaired by MakeValid"), repaired.out)
    }

    func testNearestDistanceAndDelay() throws {
        let t = CLI.self
        let path = try t.temp(self, "f.geojson", CLI.fences)
        // 0.02 degrees of latitude north of the port's centre: 2211.5 m from it, 1211.5 m from
        // its 1000 m boundary; 40 s at 30 m/s.
        let r = try t.run(["nearest", "--fences", path, "--positions", "-"], stdin: "device,time,lon,lat\nv,0,0,0.02\nw,0,0,0\n")
        XCTAssertEqual(r.status, 0, r.err)
        let lines = r.out.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines[0], "device,time,fence,distance_m,delay_s")
        XCTAssertTrue(lines[1].hasPrefix("v,1970-01-01T00:00:00.000Z,port,1211."), lines[1])
        XCTAssertTrue(lines[1].hasSuffix(",40.4"), lines[1])
        XCTAssertEqual(lines[2], "w,1970-01-01T00:00:00.000Z,port,-1000.00,33.3")
        // On the boundary (a millimetre inside, rounded): 0.00, not -0.00; with no fence at
        // all, NDJSON's fence is null as its distance (it was "": a user audit).
        let edge = try t.run(["nearest", "--fences", path, "--positions", "-"], stdin: "device,time,lon,lat\nu,0,0,0.00904369\n")
        XCTAssertTrue(edge.out.contains("u,1970-01-01T00:00:00.000Z,port,0.00,"), edge.out)
        XCTAssertFalse(edge.out.contains("-0.00"), edge.out)
        let empty = try t.temp(self, "empty.geojson", #"{"type":"FeatureCollection","features":[]}"#)
        let none = try t.run(["nearest", "--fences", empty, "--positions", "-", "--format", "ndjson"], stdin: "device,time,lon,lat\nu,0,0,0\n")
        XCTAssertEqual(none.status, 0, none.err)
        XCTAssertTrue(none.out.contains(#""fence":null,"distance_m":null"#), none.out)
    }

    /// A fence past its `expires` covers nothing and is no nearest boundary for a position at
    /// or after that time, in `contains` and `nearest` as in `eval`.
    func testContainsAndNearestSkipExpiredFences() throws {
        let fences = try CLI.temp(
            self, "fences.geojson",
            """
            {"type":"FeatureCollection","features":[
             {"type":"Feature","properties":{"id":"old","radius":1000,"expires":100},"geometry":{"type":"Point","coordinates":[0,0]}},
             {"type":"Feature","properties":{"id":"new","radius":5000},"geometry":{"type":"Point","coordinates":[0,0]}}
            ]}
            """)
        let positions = "device,time,lon,lat\nv,99.5,0,0\nv,100,0,0\n"
        let contains = try CLI.run(["contains", "--fences", fences], stdin: positions)
        XCTAssertEqual(contains.status, 0, contains.err)
        XCTAssertEqual(contains.out, "v,1970-01-01T00:01:39.500Z,new;old\nv,1970-01-01T00:01:40.000Z,new\n")
        let nearest = try CLI.run(["nearest", "--fences", fences], stdin: positions)
        XCTAssertEqual(nearest.status, 0, nearest.err)
        let lines = nearest.out.split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        XCTAssertEqual(lines.count, 3, nearest.out)
        XCTAssertEqual(lines[1][2], "old")
        XCTAssertEqual(lines[2][2], "new")
        XCTAssertEqual(Double(lines[2][3]) ?? 0, -5000, accuracy: 0.01)
    }
}

final class CLIPropertiesTests: XCTestCase {
    func testPropertiesAreCarriedIntoEvents() throws {
        let path = try CLI.temp(
            self,
            "props.geojson",
            """
            {"type":"FeatureCollection","features":[
             {"type":"Feature","properties":{"id":"p","radius":1000,"name":"Pier \\"7\\", north","berths":4},"geometry":{"type":"Point","coordinates":[0,0]}}
            ]}
            """)
        let csv = "device,time,lon,lat\nv,0,0,0\n"
        let nd = try CLI.run(["eval", "--fences", path, "--positions", "-", "--properties", "name,berths,missing"], stdin: csv)
        XCTAssertEqual(nd.status, 0, nd.err)
        XCTAssertTrue(nd.out.contains(#""properties":{"name":"Pier \"7\", north","berths":4}"#), nd.out)
        // A name no fence has is said once (an always-empty column was silent: a user audit).
        XCTAssertEqual(nd.err.components(separatedBy: "no fence has the property").count - 1, 1, nd.err)
        XCTAssertTrue(nd.err.contains("fence eval: no fence has the property 'missing' (--properties)\n"), nd.err)
        let c = try CLI.run(["eval", "--fences", path, "--positions", "-", "--properties", "name,berths", "--format", "csv"], stdin: csv)
        XCTAssertEqual(c.status, 0, c.err)
        XCTAssertFalse(c.err.contains("no fence has the property"), c.err)
        let lines = c.out.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines[0], "time,device,fence,group,event,lon,lat,initial,reason,inside_s,name,berths")
        XCTAssertEqual(lines[1], "1970-01-01T00:00:00.000Z,v,p,,enter,0.0,0.0,true,,,\"Pier \"\"7\"\", north\",4")
    }
}

final class CLIProgressTests: XCTestCase {
    /// On a terminal, with a file as input, eval keeps a live progress line on standard error;
    /// into a pipe it writes none.
    func testProgressLineOnATerminalOnly() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else { throw XCTSkip("no script(1)") }
        let fences = try CLI.temp(self, "f.geojson", CLI.fences)
        let lines = ["device,time,lon,lat"] + (0..<300).map { "v\($0 % 7),\($0),0,0" }
        let positions = try CLI.temp(self, "p.csv", lines.joined(separator: "\n") + "\n")
        let command = "\(CLI.binary.path) eval --fences \(fences) --positions \(positions) --batch 100 > /dev/null"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        p.arguments = ["-qfec", command, "/dev/null"]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let tty = String(decoding: data, as: UTF8.self)
        XCTAssertEqual(p.terminationStatus, 0, tty)
        XCTAssertTrue(tty.contains("\rfence eval: 100 positions"), tty)
        XCTAssertTrue(tty.contains("\rfence eval: 300 positions"), tty)
        let piped = try CLI.run(["eval", "--fences", fences, "--positions", positions, "--batch", "100"])
        XCTAssertFalse(piped.err.contains("\r"), piped.err)
    }
    /// Every command that reads positions treats bad lines alike (`--max-bad`, default 1%):
    /// each reported with its number and skipped; a few in many lines, or in a short file
    /// (the share is of at least 1,000 lines), leave exit status 0; more than the share, or
    /// a file with no good line, stop the run with 1.
    func testMaxBadOnEveryPositionCommand() throws {
        let fences = try CLI.temp(self, "fences.geojson", CLI.fences)
        var lines = ["device,time,lon,lat"]
        for k in 0..<199 { lines.append("v\(k % 7),\(k),\(Double(k % 11) * 0.001),0.001") }
        lines.insert("bad,5,0,NaN", at: 50)  // line 51
        let few = try CLI.temp(self, "few.csv", lines.joined(separator: "\n") + "\n")
        // Two bad lines of three: a short file's stray lines, skipped. Eleven of 14: over 1%
        // of 1,000 lines, a file of the wrong kind. Only bad lines: nothing to go on.
        let short = try CLI.temp(self, "short.csv", "device,time,lon,lat\nv,0,0,0\nv,1,0,95\nw,2,x,0\n")
        let many = try CLI.temp(
            self, "many.csv", "device,time,lon,lat\nv,0,0,0\nv,1,0,95\n" + (0..<10).map { "w,\($0 + 2),x,0\n" }.joined() + "v,20,0,0\nv,21,0,0\n")
        let none = try CLI.temp(self, "none.csv", "device,time,lon,lat\nv,1,0,95\nw,2,x,0\n")
        for command in ["eval", "contains", "nearest"] {
            let ok = try CLI.run([command, "--fences", fences, "--positions", few])
            XCTAssertEqual(ok.status, 0, "\(command): \(ok.err)")
            XCTAssertTrue(ok.err.contains("line 51: lat \"NaN\" is not a number"), "\(command): \(ok.err)")
            XCTAssertFalse(ok.err.contains("more than --max-bad"), "\(command): \(ok.err)")
            XCTAssertGreaterThan(ok.out.split(separator: "\n").count, 50, command)
            let strict = try CLI.run([command, "--fences", fences, "--positions", few, "--max-bad", "0"])
            XCTAssertEqual(strict.status, 1, "\(command): \(strict.err)")
            XCTAssertTrue(strict.err.contains("1 of the first 51 lines are bad, more than --max-bad 0.0; stopping"), "\(command): \(strict.err)")
            let kept = try CLI.run([command, "--fences", fences, "--positions", short])
            XCTAssertEqual(kept.status, 0, "\(command): \(kept.err)")
            XCTAssertTrue(kept.err.contains("line 3: lat 95.0 is outside [-90, 90]"), "\(command): \(kept.err)")
            XCTAssertFalse(kept.err.contains("more than --max-bad"), "\(command): \(kept.err)")
            XCTAssertTrue(kept.out.contains("1970-01-01T00:00:00.000Z"), "\(command): \(kept.out)")
            let nothing = try CLI.run([command, "--fences", fences, "--positions", none])
            XCTAssertEqual(nothing.status, 1, "\(command): \(nothing.err)")
            XCTAssertTrue(nothing.err.contains("2 of 2 lines are bad, none good; stopping"), "\(command): \(nothing.err)")
            let stopped = try CLI.run([command, "--fences", fences, "--positions", many])
            XCTAssertEqual(stopped.status, 1, "\(command): \(stopped.err)")
            XCTAssertTrue(stopped.err.contains("line 3: lat 95.0 is outside [-90, 90]"), "\(command): \(stopped.err)")
            XCTAssertTrue(stopped.err.contains("11 of the first 13 lines are bad, more than --max-bad 0.01; stopping"), "\(command): \(stopped.err)")
            // --max-bad 1 never stops, not even with no good line.
            XCTAssertEqual(try CLI.run([command, "--fences", fences, "--positions", none, "--max-bad", "1"]).status, 0, command)
            // contains and nearest write the good lines of the batch where they stop; eval
            // evaluates none of it.
            XCTAssertEqual(stopped.out.contains("1970-01-01T00:00:00.000Z"), command != "eval", "\(command): \(stopped.out)")
            XCTAssertEqual(try CLI.run([command, "--fences", fences, "--positions", few, "--max-bad", "2"]).status, 2, command)
        }
    }

    /// Whether a run stops on bad lines does not depend on the batches it reads (each bad
    /// line is judged at its number): 11 bad lines first in 5,000 stop it read whole or in
    /// batches of 1,000 (a review: read whole, 11 of 5,000 passed).
    func testMaxBadIsJudgedAtEachBadLine() throws {
        let fences = try CLI.temp(self, "fences.geojson", CLI.fences)
        let lines = (0..<11).map { "b\($0),\($0),x,0" } + (11..<5000).map { "v\($0 % 9),\($0),0.001,0.001" }
        let file = try CLI.temp(self, "p.csv", "device,time,lon,lat\n" + lines.joined(separator: "\n") + "\n")
        for args in [["eval", "--batch", "1000000"], ["eval", "--batch", "1000"], ["eval", "--batch", "3"], ["contains"], ["nearest"]] {
            let r = try CLI.run(args + ["--fences", fences, "--positions", file])
            XCTAssertEqual(r.status, 1, "\(args): \(r.err)")
            XCTAssertTrue(r.err.contains("11 of the first 12 lines are bad, more than --max-bad 0.01; stopping"), "\(args): \(r.err)")
        }
        // Ten bad lines first: never over, whatever the batches.
        let ten = try CLI.temp(self, "ten.csv", "device,time,lon,lat\n" + lines.dropFirst().joined(separator: "\n") + "\n")
        for args in [["eval", "--batch", "1000000"], ["eval", "--batch", "3"]] {
            XCTAssertEqual(try CLI.run(args + ["--fences", fences, "--positions", ten]).status, 0, "\(args)")
        }
    }

    /// A run that stops on bad lines or on input it cannot read leaves its state file as it
    /// was, and says so (it said nothing: from a README audit).
    func testAStateFileLeftAsItWasIsNamed() throws {
        let fences = try CLI.temp(self, "fences.geojson", CLI.fences)
        let folder = (fences as NSString).deletingLastPathComponent
        let state = folder + "/state.bin"
        let good = try CLI.temp(self, "good.csv", "device,time,lon,lat\nv,0,0.001,0.001\n")
        let first = try CLI.run(["eval", "--fences", fences, "--positions", good, "--state", state])
        XCTAssertEqual(first.status, 0)
        XCTAssertTrue(first.out.contains(#""fence":"port""#), "v is inside port: \(first.out)")
        let saved = try Data(contentsOf: URL(fileURLWithPath: state))
        let bad = try CLI.temp(self, "bad.csv", "device,time,lon,lat\nv,10,0.5,0.5\nv,11,x,0\n")
        // A gzip member cut inside its deflate data.
        let cut: [UInt8] = [0x1F, 0x8B, 0x08, 0, 0, 0, 0, 0, 0, 0x03, 0x4B, 0x49, 0x2D]
        let truncated = folder + "/cut.csv.gz"
        try Data(cut).write(to: URL(fileURLWithPath: truncated))
        for (input, reason) in [(bad, "the run stopped on bad lines (--max-bad)"), (truncated, "the input could not be read to its end")] {
            let r = try CLI.run(["eval", "--fences", fences, "--positions", input, "--state", state, "--max-bad", "0"])
            XCTAssertEqual(r.status, 1, r.err)
            XCTAssertTrue(r.err.contains("fence eval: the state file \(state) was not written: \(reason)\n"), r.err)
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: state)), saved, input)
        }
        // Every fence refused (here: no ids, as ogr2ogr writes GeoJSON): nothing is evaluated,
        // so no visit the state holds ends with fence-removed; an empty collection still runs.
        let noIDs = try CLI.temp(self, "noids.geojson", CLI.fences.replacingOccurrences(of: #""id""#, with: #""name""#))
        let refused = try CLI.run(["eval", "--fences", noIDs, "--positions", good, "--state", state])
        XCTAssertEqual(refused.status, 1, refused.err)
        XCTAssertEqual(refused.out, "")
        XCTAssertTrue(
            refused.err.contains("fence eval: no fence loaded (all 2 refused): nothing evaluated; the state file \(state) was left as it was\n"),
            refused.err)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: state)), saved)
        let empty = try CLI.temp(self, "empty.geojson", #"{"type":"FeatureCollection","features":[]}"#)
        let none = try CLI.run(["eval", "--fences", empty, "--positions", good, "--state", state])
        XCTAssertEqual(none.status, 0, none.err)
        XCTAssertTrue(none.out.contains("fence-removed"), "an empty set is a choice: its visits end")
    }

    /// Two runs on one state file at once: the second is refused at once (status 1, naming the
    /// first's process), the first's state is what is written, and once it ends the next run
    /// takes the file (it overwrote the first's state without a word: from a README audit).
    func testASecondRunOnOneStateIsRefused() throws {
        let fences = try CLI.temp(self, "fences.geojson", CLI.fences)
        let folder = (fences as NSString).deletingLastPathComponent
        let state = folder + "/state.bin"
        let first = Process()
        first.executableURL = CLI.binary(named: "fence")
        first.arguments = ["eval", "--fences", fences, "--positions", "-", "--state", state]
        let input = Pipe()
        let out = Pipe()
        first.standardInput = input
        first.standardOutput = out
        first.standardError = FileHandle.nullDevice
        try first.run()
        addTeardownBlock { if first.isRunning { first.terminate() } }
        // The lock file names its holder once the lock is taken.
        let lockPath = folder + "/.state.bin.lock"
        let deadline = Date().addingTimeInterval(20)
        while (try? String(contentsOfFile: lockPath, encoding: .utf8)) != "\(first.processIdentifier)\n" && Date() < deadline {
            usleep(10_000)
        }
        let second = try CLI.run(["eval", "--fences", fences, "--positions", "-", "--state", state], stdin: "device,time,lon,lat\nw,5,0.001,0.001\n")
        XCTAssertEqual(second.status, 1, second.err)
        XCTAssertEqual(second.out, "")
        XCTAssertTrue(
            second.err.contains("state file \(state) is in use by another run (process \(first.processIdentifier)); runs sharing a state file must take turns"),
            second.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: state), "the refused run wrote the state")
        input.fileHandleForWriting.write(Data("device,time,lon,lat\nv,0,0.001,0.001\n".utf8))
        try input.fileHandleForWriting.close()
        let events = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        first.waitUntilExit()
        XCTAssertEqual(first.terminationStatus, 0)
        XCTAssertTrue(events.contains(#""device":"v""#), events)
        // The first run's state: v is inside port, so v's next fix away exits it.
        let third = try CLI.run(["eval", "--fences", fences, "--positions", "-", "--state", state], stdin: "device,time,lon,lat\nv,10,0.5,0.5\n")
        XCTAssertEqual(third.status, 0, third.err)
        XCTAssertTrue(third.out.contains(#""event":"exit""#) && third.out.contains(#""fence":"port""#), third.out)
        // In one process: a second lock on the file is refused until the first is let go.
        var held: CheckpointFile.Lock? = try CheckpointFile.lock(path: state)
        XCTAssertThrowsError(try CheckpointFile.lock(path: state)) { error in
            XCTAssertTrue("\(error)".contains("is in use by another run (process \(getpid()))"), "\(error)")
        }
        withExtendedLifetime(held) {}
        held = nil
        XCTAssertNoThrow(try CheckpointFile.lock(path: state))
    }
}

/// `--margin` past what the engine takes (`EventSettings.maxHysteresisMargin`) is a usage error
/// naming the option, not the engine's invalid-setting (review).
final class MarginOptionTests: XCTestCase {
    func testAMarginPastTheBoundIsAUsageError() throws {
        let fences = try CLI.temp(self, "fences.geojson", CLI.fences)
        let positions = "device,time,lon,lat\nv,0,0.001,0.001\n"
        let over = try CLI.run(["eval", "--fences", fences, "--margin", "3e7"], stdin: positions)
        XCTAssertEqual(over.status, 2, over.err)
        XCTAssertTrue(over.err.contains("--margin must be at most 20004000 metres"), over.err)
        let at = try CLI.run(["eval", "--fences", fences, "--margin", "20004000"], stdin: positions)
        XCTAssertEqual(at.status, 0, at.err)
    }
}
