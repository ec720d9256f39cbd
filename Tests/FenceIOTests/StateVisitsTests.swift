import FenceEngine
import FenceIO
import Foundation
import SeededRandom
import XCTest

/// `fence inside` and `StateVisits`: the visits of a state file against the events that made
/// them (an enter opens a visit, a dwell makes it stayed, an exit of any reason ends it) and
/// against the live engine's `devices(insideOf:)`, over seeds with dwell, exit delay,
/// hysteresis, expiry and removals; filters by exact bytes; the command's lines and errors.
final class StateVisitsTests: XCTestCase {
    struct OpenVisit: Equatable {
        var since: Double
        var stayed = false
    }

    /// Random small circles and squares near (0, 0), in groups, some expiring.
    static func fences(_ rng: inout SplitMix64, count: Int) -> [Fence] {
        (0..<count).map { k in
            let lon = rng.uniform(-0.05, 0.05)
            let lat = rng.uniform(-0.05, 0.05)
            var f: Fence
            if rng.chance(0.5) {
                f = .circle(id: "c\(k)", lon: lon, lat: lat, radius: rng.uniform(300, 3_000))
            } else {
                let h = rng.uniform(0.003, 0.03)
                let ring = [(-h, -h), (h, -h), (h, h), (-h, h), (-h, -h)].map { LonLat(lon: lon + $0.0, lat: lat + $0.1) }
                f = .polygon(id: "p\(k)", exterior: ring)
            }
            if rng.chance(0.7) { f.group = "g\(k % 3)" }
            if rng.chance(0.15) { f.expires = rng.uniform(0, 4_000).rounded() }
            return f
        }
    }

    func testVisitsAreWhatTheEventsLeftOpen() throws {
        var pending = 0
        var stayed = 0
        var listed = 0
        for seed in UInt64(1)...40 {
            var rng = SplitMix64(seed: seed &* 0x9E37_79B9)
            var settings = EventSettings()
            settings.actions = [.enter, .exit, .dwell]
            settings.dwell = 300
            settings.exitDelay = seed % 2 == 0 ? 240 : 0
            settings.hysteresisMargin = seed % 3 == 0 ? 150 : 0
            var engine = try EventEngine(settings: settings)
            let fences = Self.fences(&rng, count: 12)
            XCTAssertTrue(engine.add(fences).results.allSatisfy { $0.error == nil })
            var open: [String: [String: OpenVisit]] = [:]  // device -> fence -> visit
            func replay(_ events: [FenceEvent]) {
                for e in events {
                    switch e.kind {
                    case .enter: open[e.device, default: [:]][e.fence] = OpenVisit(since: e.time)
                    case .dwell: open[e.device]?[e.fence]?.stayed = true
                    case .exit: open[e.device]?[e.fence] = nil
                    default: break
                    }
                }
            }
            var walkers = (0..<8).map { _ in (lon: rng.uniform(-0.05, 0.05), lat: rng.uniform(-0.05, 0.05)) }
            var time = 0.0
            for batch in 0..<8 {
                var fixes: [Position] = []
                for _ in 0..<30 {
                    time += rng.uniform(5, 60).rounded()
                    let d = rng.int(0...7)
                    walkers[d].lon += rng.uniform(-0.01, 0.01)
                    walkers[d].lat += rng.uniform(-0.01, 0.01)
                    fixes.append(Position(device: "d\(d)", time: time, lon: walkers[d].lon, lat: walkers[d].lat))
                }
                replay(engine.evaluate(fixes, threads: 1 + batch % 2).events)
                if batch == 4 { replay(engine.remove(id: fences[Int(seed) % fences.count].id)) }
                if batch == 5 { replay(engine.remove(group: "g1")) }

                let snapshot = engine.snapshot()
                let visits = StateVisits.list(snapshot)
                var expected: [(fence: String, device: String, visit: OpenVisit)] = []
                for (device, byFence) in open { for (fence, v) in byFence { expected.append((fence, device, v)) } }
                expected.sort { ($0.fence, $0.device) < ($1.fence, $1.device) }
                XCTAssertEqual(visits.map(\.fence), expected.map(\.fence), "seed \(seed) batch \(batch)")
                XCTAssertEqual(visits.map(\.device), expected.map(\.device), "seed \(seed) batch \(batch)")
                XCTAssertEqual(visits.map { OpenVisit(since: $0.since, stayed: $0.stayed) }, expected.map(\.visit), "seed \(seed) batch \(batch)")
                let groups = Dictionary(uniqueKeysWithValues: fences.map { ($0.id, $0.group) })
                for v in visits {
                    XCTAssertEqual(v.group, groups[v.fence] ?? nil, "seed \(seed): \(v.fence)'s group")
                    let last = snapshot.devices.first { $0.id == v.device }!
                    XCTAssertEqual([v.time, v.lon, v.lat], [last.lastTime, last.lastLon, last.lastLat])
                    if let t = v.exitPendingSince {
                        XCTAssertGreaterThan(settings.exitDelay, 0)
                        XCTAssertLessThanOrEqual(t, v.time)
                        pending += 1
                    }
                    if v.stayed { stayed += 1 }
                }
                listed += visits.count
                // The live engine, fence by fence.
                for f in fences {
                    XCTAssertEqual(visits.filter { $0.fence == f.id }.map(\.device), engine.devices(insideOf: f.id), "seed \(seed) \(f.id)")
                }
            }
        }
        XCTAssertGreaterThan(listed, 500)
        XCTAssertGreaterThan(stayed, 50)
        XCTAssertGreaterThan(pending, 10)
    }

    /// Filters keep what they name, by exact bytes: "é" composed and decomposed are two ids.
    func testFiltersByExactBytes() throws {
        var engine = EventEngine()
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        var fences = [Fence.circle(id: composed, lon: 0, lat: 0, radius: 1_000, group: "a")]
        fences.append(.circle(id: decomposed, lon: 0, lat: 0, radius: 2_000, group: "b"))
        fences.append(.circle(id: "far", lon: 1, lat: 1, radius: 1_000))
        XCTAssertTrue(engine.add(fences).results.allSatisfy { $0.error == nil })
        _ = engine.evaluate([
            Position(device: "x", time: 10, lon: 0, lat: 0), Position(device: "y", time: 10, lon: 0, lat: 0.0001),
            Position(device: "z", time: 10, lon: 1, lat: 1),
        ])
        let snapshot = engine.snapshot()
        func ids(_ filter: StateVisits.Filter) -> [String] { StateVisits.list(snapshot, filter: filter).map { "\($0.fence)/\($0.device)" } }
        XCTAssertEqual(ids(.init()).count, 5)
        XCTAssertEqual(ids(.init(fences: [composed])), ["\(composed)/x", "\(composed)/y"])
        XCTAssertEqual(ids(.init(fences: [decomposed], devices: ["y"])), ["\(decomposed)/y"])
        XCTAssertEqual(ids(.init(groups: ["b"])), ["\(decomposed)/x", "\(decomposed)/y"])
        XCTAssertEqual(ids(.init(groups: ["none"])), [])
        XCTAssertEqual(ids(.init(fences: ["far", composed], devices: ["z", "x"])), ["\(composed)/x", "far/z"])
        // Both forms named at once: both kept (a Set<String> would have merged them).
        XCTAssertEqual(ids(.init(fences: [composed, decomposed], devices: ["x"])), ["\(decomposed)/x", "\(composed)/x"])
        // What matched no visit, once each, in the order given, each kind judged alone:
        // "far" holds z, though the devices named are x and q.
        let filter = StateVisits.Filter(fences: ["far", "nope", "nope", decomposed], groups: ["b", "zz"], devices: ["q", "x"])
        var matches = StateVisits.Matches()
        let listed = StateVisits.list(snapshot, filter: filter, matches: &matches)
        XCTAssertEqual(listed.map { "\($0.fence)/\($0.device)" }, ["\(decomposed)/x"])
        let unmatched = StateVisits.unmatched(filter, matches: matches)
        XCTAssertEqual(unmatched.map(\.option), ["fence", "group", "device"])
        XCTAssertEqual(unmatched.map(\.names), [["nope"], ["zz"], ["q"]])
        // With only devices named, every name is still judged.
        var byDevice = StateVisits.Matches()
        _ = StateVisits.list(snapshot, filter: .init(devices: ["z", "w"]), matches: &byDevice)
        XCTAssertEqual(StateVisits.unmatched(.init(devices: ["z", "w"]), matches: byDevice).map(\.names), [[], [], ["w"]])
        // Fence then device, in byte order: "cafe\u{301}" (63 61 66 65) before "caf\u{E9}" (63 61 66 C3).
        XCTAssertEqual(ids(.init(devices: ["x"])), ["\(decomposed)/x", "\(composed)/x"])
    }

    func testCommandWritesTheVisitsOfAStateFile() throws {
        let fences = try CLI.temp(
            self, "f.geojson",
            """
            {"type":"FeatureCollection","features":[
            {"type":"Feature","properties":{"id":"depot","group":"depots"},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1],[0,0]]]}},
            {"type":"Feature","properties":{"id":"yard","radius":5000},"geometry":{"type":"Point","coordinates":[0.5,0.5]}}
            ]}
            """)
        let positions = try CLI.temp(self, "p.csv", "device,time,lon,lat\nt1,100,0.5,0.5\nt2,100,5,5\nt3,100,0.9,0.9\nt1,800,0.5,0.51\nt3,900,3,3\n")
        let state = (positions as NSString).deletingLastPathComponent + "/state.bin"
        let eval = try CLI.run(["eval", "--fences", fences, "--positions", positions, "--state", state, "--exit-delay", "300"])
        XCTAssertEqual(eval.status, 0, eval.err)

        let all = try CLI.run(["inside", "--state", state])
        XCTAssertEqual(all.status, 0, all.err)
        XCTAssertEqual(
            all.out,
            """
            {"fence":"depot","group":"depots","device":"t1","status":"stayed","since":"1970-01-01T00:01:40.000Z","time":"1970-01-01T00:13:20.000Z","inside_s":700,"lon":0.5,"lat":0.51}
            {"fence":"depot","group":"depots","device":"t3","status":"inside","since":"1970-01-01T00:01:40.000Z","time":"1970-01-01T00:15:00.000Z","inside_s":800,"lon":3.0,"lat":3.0,"exit_pending_since":"1970-01-01T00:15:00.000Z"}
            {"fence":"yard","device":"t1","status":"stayed","since":"1970-01-01T00:01:40.000Z","time":"1970-01-01T00:13:20.000Z","inside_s":700,"lon":0.5,"lat":0.51}

            """)
        XCTAssertEqual(all.err, "fence inside: 3 visits (2 devices, 2 fences) of 3 devices in \(state), as of 1970-01-01T00:15:00.000Z\n")
        // The same state from standard input, with --state - or none.
        for args in [["inside", "--state", "-"], ["inside"]] {
            let p = Process()
            p.executableURL = CLI.binary
            p.arguments = args
            p.standardInput = FileHandle(forReadingAtPath: state)!
            let out = Pipe()
            let err = Pipe()
            p.standardOutput = out
            p.standardError = err
            try p.run()
            let o = out.fileHandleForReading.readDataToEndOfFile()
            let e = err.fileHandleForReading.readDataToEndOfFile()
            p.waitUntilExit()
            XCTAssertEqual(p.terminationStatus, 0, "\(args)")
            XCTAssertEqual(String(decoding: o, as: UTF8.self), all.out, "\(args)")
            XCTAssertTrue(String(decoding: e, as: UTF8.self).hasSuffix("of 3 devices in standard input, as of 1970-01-01T00:15:00.000Z\n"))
        }

        let csv = try CLI.run(["inside", "--state", state, "--format", "CSV", "--group", "depots", "--device", "t3"])
        XCTAssertEqual(csv.status, 0, csv.err)
        XCTAssertEqual(
            csv.out,
            """
            fence,group,device,status,since,time,inside_s,lon,lat,exit_pending_since
            depot,depots,t3,inside,1970-01-01T00:01:40.000Z,1970-01-01T00:15:00.000Z,800,3.0,3.0,1970-01-01T00:15:00.000Z

            """)
        let none = try CLI.run(["inside", "--state", state, "--fence", "nowhere", "--fence", "yard", "--device", "t3"])
        XCTAssertEqual(none.status, 0)
        XCTAssertEqual(none.out, "")
        XCTAssertEqual(
            none.err,
            "fence inside: no visit listed for --fence 'nowhere'\n"
                + "fence inside: no visit is named by --fence and --device together\n"
                + "fence inside: 0 visits (0 devices, 0 fences) of 3 devices in \(state), as of 1970-01-01T00:15:00.000Z\n")
        let one = try CLI.run(["inside", "--state", state, "--fence", "yard", "--device", "t1"])
        XCTAssertTrue(one.err.hasPrefix("fence inside: 1 visit (1 device, 1 fence) of 3 devices"), one.err)

        // Written compressed by the output's name.
        let gz = (state as NSString).deletingLastPathComponent + "/visits.ndjson.gz"
        XCTAssertEqual(try CLI.run(["inside", "--state", state, "--output", gz]).status, 0)
        let unzipped = Process()
        unzipped.executableURL = URL(fileURLWithPath: "/bin/gzip")
        unzipped.arguments = ["-dc", gz]
        let pipe = Pipe()
        unzipped.standardOutput = pipe
        try unzipped.run()
        let bytes = pipe.fileHandleForReading.readDataToEndOfFile()
        unzipped.waitUntilExit()
        XCTAssertEqual(String(decoding: bytes, as: UTF8.self), all.out)
    }

    /// Each `--fence` value is one id, its exact bytes: both forms of "café" at once, an id
    /// with a leading space and one with a comma (the review's reproductions; names were
    /// comma-split, trimmed and put in a `Set<String>` before).
    func testEachNameIsOneIdByItsBytes() throws {
        let fences = try CLI.temp(
            self, "f.geojson",
            """
            {"type":"FeatureCollection","features":[
            {"type":"Feature","properties":{"id":"caf\\u00e9","radius":100},"geometry":{"type":"Point","coordinates":[0.5,0.5]}},
            {"type":"Feature","properties":{"id":"cafe\\u0301","radius":100},"geometry":{"type":"Point","coordinates":[0.5,0.5]}},
            {"type":"Feature","properties":{"id":" yard","radius":100},"geometry":{"type":"Point","coordinates":[0.5,0.5]}},
            {"type":"Feature","properties":{"id":"Paris, FR","radius":100},"geometry":{"type":"Point","coordinates":[0.5,0.5]}}
            ]}
            """)
        let positions = try CLI.temp(self, "p.csv", "device,time,lon,lat\nd,100,0.5,0.5\n")
        let state = (positions as NSString).deletingLastPathComponent + "/state.bin"
        XCTAssertEqual(try CLI.run(["eval", "--fences", fences, "--positions", positions, "--state", state]).status, 0)
        func listed(_ names: [String]) throws -> [String] {
            let r = try CLI.run(["inside", "--state", state] + names.flatMap { ["--fence", $0] })
            XCTAssertEqual(r.status, 0, r.err)
            return r.out.split(separator: "\n").map { String($0.split(separator: ",")[0].dropFirst(9)) }
        }
        XCTAssertEqual(try listed([]).count, 4)
        XCTAssertEqual(try listed(["caf\u{E9}", "cafe\u{301}"]), ["\"cafe\u{301}\"", "\"caf\u{E9}\""])
        XCTAssertEqual(try listed([" yard"]), ["\" yard\""])
        XCTAssertEqual(try listed(["yard"]), [])
        XCTAssertEqual(try listed(["Paris, FR"]), ["\"Paris"])
    }

    func testCommandRefusesWhatItCannotRead() throws {
        let dir = (try CLI.temp(self, "x.txt", "") as NSString).deletingLastPathComponent
        let missing = try CLI.run(["inside", "--state", dir + "/none.bin"])
        XCTAssertEqual(missing.status, 1)
        XCTAssertEqual(missing.out, "")
        XCTAssertTrue(missing.err.contains("no state file at \(dir)/none.bin"), missing.err)

        // A state file cut short: named, nothing written.
        var engine = EventEngine()
        _ = engine.add([.circle(id: "a", lon: 0, lat: 0, radius: 100)])
        _ = engine.evaluate([Position(device: "x", time: 1, lon: 0, lat: 0)])
        let path = dir + "/s.bin"
        try CheckpointFile.write(engine.snapshot(), path: path)
        let whole = try Data(contentsOf: URL(fileURLWithPath: path))
        XCTAssertEqual(try CLI.run(["inside", "--state", path]).out.split(separator: "\n").count, 1)
        for cut in [0, 7, whole.count / 2, whole.count - 1] {
            try whole.prefix(cut).write(to: URL(fileURLWithPath: path))
            let r = try CLI.run(["inside", "--state", path])
            XCTAssertEqual(r.status, 1, "cut at \(cut)")
            XCTAssertEqual(r.out, "")
            XCTAssertTrue(r.err.hasPrefix("fence: malformed-input: \(path): "), r.err)
        }

        // From standard input: named as such.
        let piped = try CLI.run(["inside"], stdin: "not a state")
        XCTAssertEqual(piped.status, 1)
        XCTAssertEqual(piped.out, "")
        XCTAssertTrue(piped.err.hasPrefix("fence: malformed-input: standard input: state file: "), piped.err)

        for args in [["inside", "--state"], ["inside", "--state", path, "--format", "xml"], ["inside", "--state", path, "--state", path],
                     ["inside", "--state", path, "--fence", ""], ["inside", "--state", path, "extra"],
                     ["inside", "--state", path, "--output", dir + "/v.xz"], ["inside", "--state", path, "--output", path]] {
            let r = try CLI.run(args)
            XCTAssertEqual(r.status, 2, "\(args): \(r.err)")
            XCTAssertTrue(r.err.contains("Run `fence inside --help`"), r.err)
        }
        XCTAssertTrue(try CLI.run(["inside", "--help"]).out.hasPrefix("Usage: fence inside [--state FILE|-]"))
    }
}
