import FenceEngine
import FenceIO
import Foundation

// As the `fence` command does: freed batch memory is kept for the next batch.
AllocatorTuning.keepFreedMemory()

/// fence-bench: seeded synthetic workloads, one JSON line per case.
let help = """
    Usage: fence-bench [options]

      --fences LIST      fence counts, comma-separated (default 10000,100000,1000000)
      --vertices LIST    vertices per polygon (default 16)
      --circles LIST     share of circles, each 0...1 (default 0.2; 0 polygons only, 1 circles only)
      --hits LIST        mean fences per position (default 0.65)
      --corridors L      polygons become straight corridors (route buffers) L degrees long
                         at random angles, as wide as --hits asks (0: stars, the default)
      --positions N      positions per case (default 1000000)
      --threads LIST     thread counts (default 1,2)
      --seed N           generator seed (default 1)
      --check N          verify N positions against a brute-force scan (default 2000)
      --repeat N         time N passes over the positions and report the best (default 1)
      --events D         also run full event evaluation for D devices on random walks (0: off)
      --fixes N          fixes in the events case (default 2000000)
      --batch N          fixes per evaluate() call in the events case (default 1000000)
      --edits N          after the events case, time N random fences reshaped, removed and
                         added back, one call each, on the engine holding the fleet's state
      --ids KIND         fence and device ids: short ("p12", "dev-12"; default) or uuid
      --parse N          time the position reader on a generated CSV of N fleet fixes, and
                         write it to ./fence-bench-fixes.csv (for timing `fence eval` end to end)
      --geojson FILE     write the first case's fences as GeoJSON (for `fence eval`)
      --load FILES       only time reading these fence files (comma-separated), per reader and
                     thread count (the built-in reader's workers; the others use one):
                         built-in GeoJSON, JSONSerialization alone, GDAL/OGR; best of --repeat
      --readers LIST     with --load: only these of native,jsonserialization,ogr
      --export DIR       write each case's fences, positions and containment pairs as .npy
                         under DIR/<fences> for Benchmarks/peers (polygon-only: --circles 0)
      --plot FILE.svg    draw throughput against fence count, one line per series
                         (vertices, circle share, hits, threads; containment, probe, events)

    Every combination of --vertices, --circles and --hits is a series, run at every fence
    count and thread count. Prints one JSON line per case, with the R-tree probe alone (no
    exact test, no state: the ceiling of the design) beside containment. Must be a release
    build.
    """

func parseDoubles(_ s: String) -> [Double]? {
    let parts = s.split(separator: ",").map { Double($0) }
    return parts.contains(nil) || parts.isEmpty ? nil : parts.map { $0! }
}

func parseList(_ s: String) -> [Int]? {
    let parts = s.split(separator: ",").map { Int($0.replacingOccurrences(of: "_", with: "")) }
    return parts.contains(nil) || parts.isEmpty ? nil : parts.map { $0! }
}

var fenceCounts = [10_000, 100_000, 1_000_000]
var vertexCounts = [16]
var circleShares = [0.2]
var hitTargets = [0.65]
var plotPath: String?
var corridorLength = 0.0
var positionCount = 1_000_000
var threadCounts = [1, 2]
var seed: UInt64 = 1
var checkCount = 2000
var repeats = 1
var eventDevices = 0
var fixCount = 2_000_000
var batchSize = 1_000_000
var editCount = 0
var longIDs = false
var exportDir: String?
var parseLines = 0
var geojsonPath: String?
var loadPaths: [String] = []
var loadReaders: Set<String> = []
var args = CommandLine.arguments.dropFirst()
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("fence-bench: \(message)\n".utf8))
    exit(2)
}
while let a = args.popFirst() {
    if a == "--help" || a == "-h" {
        print(help)
        exit(0)
    }
    guard let v = args.popFirst() else { fail("\(a) needs a value") }
    func value<T>(_ parsed: T?) -> T {
        guard let parsed else { fail("bad value for \(a): \(v)") }
        return parsed
    }
    switch a {
    case "--fences": fenceCounts = value(parseList(v).flatMap { $0.allSatisfy { $0 > 0 } ? $0 : nil })
    case "--vertices": vertexCounts = value(parseList(v).flatMap { $0.allSatisfy { $0 >= 3 } ? $0 : nil })
    case "--circles": circleShares = value(parseDoubles(v).flatMap { $0.allSatisfy { (0...1).contains($0) } ? $0 : nil })
    case "--hits": hitTargets = value(parseDoubles(v).flatMap { $0.allSatisfy { $0 > 0 } ? $0 : nil })
    case "--plot": plotPath = v
    case "--corridors": corridorLength = value(Double(v).flatMap { $0 >= 0 && $0 <= 20 ? $0 : nil })
    case "--positions": positionCount = value(Int(v).flatMap { $0 > 0 ? $0 : nil })
    case "--threads": threadCounts = value(parseList(v).flatMap { $0.allSatisfy { $0 > 0 } ? $0 : nil })
    case "--seed": seed = value(UInt64(v))
    case "--check": checkCount = value(Int(v).flatMap { $0 >= 0 ? $0 : nil })
    case "--repeat": repeats = value(Int(v).flatMap { $0 > 0 ? $0 : nil })
    case "--events": eventDevices = value(Int(v).flatMap { $0 >= 0 ? $0 : nil })
    case "--fixes": fixCount = value(Int(v).flatMap { $0 > 0 ? $0 : nil })
    case "--batch": batchSize = value(Int(v).flatMap { $0 > 0 ? $0 : nil })
    case "--edits": editCount = value(Int(v).flatMap { $0 >= 0 ? $0 : nil })
    case "--ids": longIDs = value(v == "uuid" ? true : v == "short" ? false : nil)
    case "--export": exportDir = v
    case "--parse": parseLines = value(Int(v).flatMap { $0 > 0 ? $0 : nil })
    case "--geojson": geojsonPath = v
    case "--load": loadPaths = v.split(separator: ",").map(String.init)
    case "--readers": loadReaders = Set(v.split(separator: ",").map(String.init))
    default: fail("unknown option \(a)")
    }
}
if !Measure.isReleaseBuild {
    FileHandle.standardError.write(Data("fence-bench: this is a debug build; figures are not benchmarks (swift build -c release)\n".utf8))
}

if !loadPaths.isEmpty {
    LoadBench.run(loadPaths, repeats: repeats, only: loadReaders, threads: threadCounts)
    exit(0)
}

if parseLines > 0 {
    // The fleet of the events case, as the CSV a pipeline would receive.
    let scenario = Scenario(
        fenceCount: fenceCounts.first ?? 10_000, vertices: vertexCounts[0], circleShare: circleShares[0], hits: hitTargets[0], seed: seed,
        longIDs: longIDs)
    let fixes = scenario.fleet(devices: max(1, eventDevices == 0 ? 100_000 : eventDevices), fixes: parseLines, seed: seed &+ 2000)
    var text = "device,time,lon,lat\n"
    text.reserveCapacity(fixes.count * 48)
    // As GPS and AIS exports write them: milliseconds, and 6 decimals (about 10 cm).
    for f in fixes {
        text += "\(f.device),\((f.time * 1000).rounded() / 1000),\((f.lon * 1e6).rounded() / 1e6),\((f.lat * 1e6).rounded() / 1e6)\n"
    }
    let path = "fence-bench-fixes.csv"
    try! Data(text.utf8).write(to: URL(fileURLWithPath: path))
    var best = Double.infinity
    var count = 0
    for _ in 0..<max(1, repeats) {
        let t0 = Measure.now()
        let reader = try! PositionReader(path: path)
        var batch: [Position] = []
        var errors: [PositionLineError] = []
        count = 0
        while try! reader.read(limit: 1 << 20, into: &batch, errors: &errors) {
            count += batch.count
            batch.removeAll(keepingCapacity: true)
        }
        count += batch.count
        best = min(best, Measure.now() - t0)
    }
    let line: [String: Any] = [
        "case": "parse", "lines": count, "bytes": text.utf8.count, "lines_per_s": Int(Double(count) / best),
        "mb_per_s": Int(Double(text.utf8.count) / best / 1e6), "swift": Measure.swiftVersion, "release": Measure.isReleaseBuild,
    ]
    let data = try! JSONSerialization.data(withJSONObject: line, options: [.sortedKeys])
    FileHandle.standardOutput.write(data + Data("\n".utf8))
}

let series = vertexCounts.flatMap { v in circleShares.flatMap { c in hitTargets.map { h in (vertices: v, circles: c, hits: h) } } }
if exportDir != nil && series.count > 1 { fail("--export takes one series (one --vertices, --circles and --hits value)") }
var plot = Plot(title: "fence-bench: positions (containment, probe) and fixes (events) per second")
for (vertices, circles, hits) in series {
let kind = circles == 0 ? "polygons" : circles == 1 ? "circles" : "\(Int((circles * 100).rounded()))% circles"
let label = circles == 1 ? "\(kind), \(hits) hits" : "\(vertices)v \(kind), \(hits) hits"
for n in fenceCounts {
    let scenario = Scenario(
        fenceCount: n, vertices: vertices, circleShare: circles, hits: hits, seed: seed, longIDs: longIDs, corridorLength: corridorLength)
    let baseline = Measure.residentBytes()
    var fences = scenario.fences()
    if let path = geojsonPath, n == fenceCounts.first {
        var text = "{\"type\":\"FeatureCollection\",\"features\":[\n"
        for (i, f) in fences.enumerated() {
            if i > 0 { text += ",\n" }
            switch f.shape {
            case .circle(let c, let r):
                text += "{\"type\":\"Feature\",\"properties\":{\"id\":\"\(f.id)\",\"radius\":\(r)},\"geometry\":{\"type\":\"Point\",\"coordinates\":[\(c.lon),\(c.lat)]}}"
            case .polygons(let p):
                let ring = p[0].exterior.map { "[\($0.lon),\($0.lat)]" }.joined(separator: ",")
                text += "{\"type\":\"Feature\",\"properties\":{\"id\":\"\(f.id)\"},\"geometry\":{\"type\":\"Polygon\",\"coordinates\":[[\(ring)]]}}"
            }
        }
        text += "\n]}\n"
        try! Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }
    let exportFences = exportDir == nil ? [] : fences
    let t0 = Measure.now()
    var store = FenceStore()
    let results = store.add(fences, threads: threadCounts.max() ?? 1)
    let buildSeconds = Measure.now() - t0
    let rejected = results.filter { $0.error != nil }.count
    fences = []
    let resident = Measure.residentBytes() - baseline
    let positions = scenario.positions(count: positionCount, seed: seed &+ 1000)

    // Correctness first: a sample checked against every fence, no index.
    if checkCount > 0 {
        // Brute force is O(n·v) per position: keep it to about 2e9 vertex visits.
        let sample = Array(positions.prefix(min(checkCount, max(20, 2_000_000_000 / (n * (vertices + 1))))))
        let fast = store.covering(sample, threads: 1)
        let slow = BruteForce.covering(store: store, sample)
        if fast.offsets != slow.offsets || Array(fast.handles) != Array(slow.handles) {
            fail("index result differs from brute force at \(n) fences")
        }
    }
    // Probe-only positions per second by thread count: the ceiling events are measured against.
    var probeRate: [Int: Double] = [:]
    for threads in threadCounts {
        // One untimed warm-up pass over a slice, then the timed pass.
        _ = store.covering(Array(positions.prefix(10_000)), threads: threads)
        var seconds = Double.infinity
        var coverage = Coverage(offsets: [0], handles: [])
        for _ in 0..<repeats {
            let t1 = Measure.now()
            coverage = store.covering(positions, threads: threads)
            seconds = min(seconds, Measure.now() - t1)
        }
        let stats = store.probeStatistics(Array(positions.prefix(100_000)))
        // The ceiling: the same ordering, chunks and walk with no exact test.
        var probeSeconds = Double.infinity
        for _ in 0..<repeats {
            let t1 = Measure.now()
            _ = positions.withUnsafeBufferPointer { store.probe($0, threads: threads) }
            probeSeconds = min(probeSeconds, Measure.now() - t1)
        }
        probeRate[threads] = Double(positionCount) / probeSeconds
        let line: [String: Any] = [
            "case": "containment", "fences": n, "vertices": corridorLength > 0 ? 4 : vertices, "circle_share": circles, "target_hits": hits,
            "corridor_degrees": corridorLength,
            "threads": threads, "positions": positionCount, "build_s": round3(buildSeconds), "rejected": rejected,
            "bytes_per_fence": store.memoryFootprint / max(1, store.count), "rss_bytes_per_fence": resident / max(1, n),
            "positions_per_s": Int(Double(positionCount) / seconds), "hits_per_position": round3(Double(coverage.pairCount) / Double(positionCount)),
            "probe_positions_per_s": Int(Double(positionCount) / probeSeconds),
            "share_of_probe": round3(probeSeconds / seconds),
            "nodes_per_position": round3(store.meanNodesVisited(Array(positions.prefix(20_000)))),
            "candidates_per_position": round3(stats.candidatesPerPosition), "geos_calls_per_position": stats.geosCallsPerPosition,
            "geos": FenceEngineInfo.geosVersion, "swift": Measure.swiftVersion, "release": Measure.isReleaseBuild, "seed": seed,
        ]
        let data = try! JSONSerialization.data(withJSONObject: line, options: [.sortedKeys])
        FileHandle.standardOutput.write(data + Data("\n".utf8))
        plot.add("\(label), \(threads)t: containment", fences: n, perSecond: Double(positionCount) / seconds)
        plot.add("\(label), \(threads)t: probe only", dashed: true, fences: n, perSecond: Double(positionCount) / probeSeconds)
        if let exportDir, threads == threadCounts.last {
            do {
                try Export.write(fences: exportFences, positions: positions, coverage: coverage, store: store, to: "\(exportDir)/\(n)")
            } catch {
                fail("export: \(error)")
            }
        }
    }
    if eventDevices > 0 {
        let fixes = scenario.fleet(devices: eventDevices, fixes: fixCount, seed: seed &+ 2000)
        for threads in threadCounts {
            // Batches of `--batch` fixes, in time order, as a pipeline would feed them; the
            // whole run from a fresh engine `repeats` times, the best time reported.
            let batch = batchSize
            var events = 0
            var seconds = Double.infinity
            var engine = EventEngine(store: store)
            for _ in 0..<repeats {
                engine = EventEngine(store: store)
                var run = 0.0
                events = 0
                var k = 0
                while k < fixes.count {
                    let slice = Array(fixes[k..<min(fixes.count, k + batch)])
                    let t1 = Measure.now()
                    let result = engine.evaluate(slice, threads: threads)
                    run += Measure.now() - t1
                    events += result.events.count
                    k += batch
                }
                seconds = min(seconds, run)
            }
            let line: [String: Any] = [
                "case": "events", "fences": n, "vertices": corridorLength > 0 ? 4 : vertices, "circle_share": circles, "target_hits": hits,
                "corridor_degrees": corridorLength,
                "threads": threads, "devices": eventDevices, "fixes": fixes.count, "batch": batch, "ids": longIDs ? "uuid" : "short",
                "fixes_per_s": Int(Double(fixes.count) / seconds), "events": events,
                "share_of_probe": round3(Double(fixes.count) / seconds / (probeRate[threads] ?? .infinity)),
                "state_bytes_per_device": engine.stateFootprint / max(1, engine.deviceCount),
                "geos": FenceEngineInfo.geosVersion, "swift": Measure.swiftVersion, "release": Measure.isReleaseBuild, "seed": seed,
            ]
            let data = try! JSONSerialization.data(withJSONObject: line, options: [.sortedKeys])
            FileHandle.standardOutput.write(data + Data("\n".utf8))
            plot.add("\(label), \(threads)t: events", fences: n, perSecond: Double(fixes.count) / seconds)
            if editCount > 0 {
                let line = EditBench.run(engine: &engine, edits: editCount, seed: seed &+ 3000, threads: threads)
                    .merging(["fences": n, "vertices": corridorLength > 0 ? 4 : vertices, "circle_share": circles, "target_hits": hits, "threads": threads,
                              "devices": engine.deviceCount, "release": Measure.isReleaseBuild, "seed": seed]) { a, _ in a }
                let data = try! JSONSerialization.data(withJSONObject: line, options: [.sortedKeys])
                FileHandle.standardOutput.write(data + Data("\n".utf8))
            }
        }
    }
}
}
if let plotPath {
    do {
        try Data(plot.svg().utf8).write(to: URL(fileURLWithPath: plotPath))
    } catch {
        fail("--plot: \(error)")
    }
}

func round3(_ x: Double) -> Double { (x * 1000).rounded() / 1000 }
