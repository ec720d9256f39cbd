import FenceEngine
@testable import FenceIO
import Foundation
import SeededRandom
import XCTest

/// Gzip-compressed inputs: positions (CSV, NDJSON; files and pipes) and fences (GeoJSON with
/// the built-in reader, other formats through GDAL's virtual file systems) read as their text,
/// and damaged gzip data refused by name after what came before it. The compressed files are
/// made by the system's `gzip` (every Debian has it), the oracle is the same text read plain.
final class GzipInputTests: XCTestCase {
    static let gzipBinary = ["/usr/bin/gzip", "/bin/gzip"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// `data` compressed by `gzip -c -<level>`.
    func gzip(_ data: Data, level: Int = 6) throws -> Data {
        guard let binary = Self.gzipBinary else { throw XCTSkip("gzip is not installed") }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: binary)
        p.arguments = ["-c", "-\(level)", "-n"]
        let input = Pipe()
        let output = Pipe()
        p.standardInput = input
        p.standardOutput = output
        try p.run()
        // Written on another thread: a large input would fill the pipe while gzip waits to write.
        nonisolated(unsafe) let writer = input.fileHandleForWriting
        DispatchQueue.global().async {
            writer.write(data)
            try? writer.close()
        }
        let out = output.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0)
        return out
    }

    func folder() throws -> String {
        let dir = NSTemporaryDirectory() + "fence-gzip-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        return dir
    }

    /// A position file of `count` lines, CSV or NDJSON, about one in 50 lines bad.
    func positionsText(_ rng: inout SplitMix64, count: Int, ndjson: Bool) -> String {
        var out = ndjson ? "" : "device,time,lon,lat\n"
        for i in 0..<count {
            let device = "dev-\(rng.next() % 40)"
            let t = 1_600_000_000 + i
            let lon = rng.uniform(-180, 180)
            let lat = rng.uniform(-90, 90)
            if rng.next() % 50 == 0 {
                out += ndjson ? "{\"device\":\"\(device)\",\"time\":\"yesterday\"}\n" : "\(device),\(t),\(lon)\n"
            } else if ndjson {
                out += "{\"device\":\"\(device)\",\"time\":\(t),\"lon\":\(lon),\"lat\":\(lat)}\n"
            } else {
                out += "\(device),\(t),\(lon),\(lat)\n"
            }
        }
        return out
    }

    /// Equal position lists, or a failure naming the first difference (not both lists).
    func assertSame(_ got: [Position], _ expected: [Position], _ message: String = "", line: UInt = #line) {
        guard got != expected else { return }
        let first = zip(got, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(got.count, expected.count)
        XCTFail("\(message): \(got.count) positions against \(expected.count), first difference at \(first)", line: line)
    }

    /// Everything a reader gives, read in batches of `limit`, and the error that ended it.
    func readAll(_ path: String, threads: Int, limit: Int) throws -> (positions: [Position], errors: [PositionLineError], failure: FenceError?) {
        let reader = try PositionReader(path: path)
        reader.parseThreads = threads
        reader.parallelMinimumLines = 8
        var positions: [Position] = []
        var errors: [PositionLineError] = []
        do {
            while try reader.read(limit: limit, into: &positions, errors: &errors) {}
        } catch {
            return (positions, errors, error)
        }
        return (positions, errors, nil)
    }

    /// Over 24 seeds: CSV and NDJSON, one to three gzip members cut anywhere (mid-line too),
    /// levels 1-9, read on one and two threads in batches of any size, give exactly the
    /// positions and bad lines (numbers and reasons) of the text read plain.
    func testCompressedPositionsReadAsTheirText() throws {
        let dir = try folder()
        for seed in 1...24 {
            var rng = SplitMix64(seed: UInt64(seed))
            let ndjson = seed % 2 == 0
            let text = Data(positionsText(&rng, count: Int(rng.next() % 3000) + 1, ndjson: ndjson).utf8)
            let plain = dir + "/p\(seed).txt"
            try text.write(to: URL(fileURLWithPath: plain))
            // Members: the text cut at up to two random bytes, each piece compressed alone.
            var cuts = (0..<Int(rng.next() % 3)).map { _ in Int(rng.next() % UInt64(text.count)) }.sorted()
            cuts = [0] + cuts + [text.count]
            var compressed = Data()
            for k in 0..<(cuts.count - 1) where cuts[k] < cuts[k + 1] {
                compressed += try gzip(text.subdata(in: cuts[k]..<cuts[k + 1]), level: Int(rng.next() % 9) + 1)
            }
            let packed = dir + "/p\(seed).gz"
            try compressed.write(to: URL(fileURLWithPath: packed))
            let limit = [1, 7, 1000, 1 << 20][Int(rng.next() % 4)]
            let threads = Int(rng.next() % 2) + 1
            let expected = try readAll(plain, threads: 1, limit: 1 << 20)
            let got = try readAll(packed, threads: threads, limit: limit)
            XCTAssertNil(expected.failure)
            XCTAssertNil(got.failure, "seed \(seed)")
            assertSame(got.positions, expected.positions, "seed \(seed)")
            XCTAssertEqual(got.errors, expected.errors, "seed \(seed)")
            XCTAssertGreaterThan(got.positions.count, 0, "seed \(seed)")
        }
    }

    /// A file cut short: the complete lines before the cut are read, exactly as written (the
    /// line the cut went through is not: its prefix would be a wrong position), then the
    /// read fails naming that line and saying the file is truncated.
    func testATruncatedFileGivesItsLinesThenFails() throws {
        let dir = try folder()
        var rng = SplitMix64(seed: 7)
        var text = "device,time,lon,lat\n"
        for i in 0..<40_000 { text += "dev-\(i % 97),\(1_600_000_000 + i),\(rng.uniform(-180, 180)),\(rng.uniform(-90, 90))\n" }
        let compressed = try gzip(Data(text.utf8))
        let plain = dir + "/all.csv"
        try Data(text.utf8).write(to: URL(fileURLWithPath: plain))
        let all = try readAll(plain, threads: 1, limit: 1 << 20).positions
        XCTAssertEqual(all.count, 40_000)
        for (k, share) in [0.05, 0.3, 0.5, 0.77, 0.999].enumerated() {
            let path = dir + "/cut\(k).csv.gz"
            try compressed.prefix(Int(Double(compressed.count) * share)).write(to: URL(fileURLWithPath: path))
            for threads in [1, 2] {
                let got = try readAll(path, threads: threads, limit: 5000)
                let failure = try XCTUnwrap(got.failure, "cut at \(share)")
                XCTAssertTrue(failure.reason.contains("truncated"), failure.reason)
                XCTAssertEqual(failure.line, got.positions.count + 2, "the header, the lines read, then the cut one")
                XCTAssertEqual(got.errors, [], "no cut line is read as a bad line")
                assertSame(got.positions, Array(all.prefix(got.positions.count)), "cut at \(share)")
                // All but the last block of about 32 KB of compressed data inflates.
                XCTAssertGreaterThan(got.positions.count, Int(Double(all.count) * share) - 3000, "cut at \(share)")
            }
        }
    }

    /// Data after the last member that is not gzip (text appended, zero padding): every line
    /// of the stream is read, then the read fails saying so.
    func testDataAfterTheStreamIsRefusedAfterItsLines() throws {
        let dir = try folder()
        var rng = SplitMix64(seed: 3)
        let text = positionsText(&rng, count: 5000, ndjson: false)
        let plain = dir + "/p.csv"
        try Data(text.utf8).write(to: URL(fileURLWithPath: plain))
        let expected = try readAll(plain, threads: 1, limit: 1 << 20)
        for (k, tail) in [Data("d,1,2,3\n".utf8), Data(count: 512)].enumerated() {
            let path = dir + "/tail\(k).csv.gz"
            try (try gzip(Data(text.utf8)) + tail).write(to: URL(fileURLWithPath: path))
            let got = try readAll(path, threads: 1, limit: 1 << 20)
            assertSame(got.positions, expected.positions)
            XCTAssertEqual(got.errors, expected.errors)
            let failure = try XCTUnwrap(got.failure)
            XCTAssertTrue(failure.reason.contains("not gzip follows the gzip stream"), failure.reason)
        }
    }

    /// A damaged byte anywhere in the compressed data ends the read with an error (a bad
    /// block, a wrong checksum or length), never a crash and never a clean end.
    func testADamagedStreamNeverEndsCleanly() throws {
        let dir = try folder()
        var rng = SplitMix64(seed: 11)
        let text = positionsText(&rng, count: 3000, ndjson: true)
        let compressed = try gzip(Data(text.utf8))
        for seed in 1...40 {
            var r = SplitMix64(seed: UInt64(seed))
            var damaged = compressed
            // Past the 10-byte header (its time stamp is not checked by gzip itself).
            let at = 10 + Int(r.next() % UInt64(compressed.count - 10))
            damaged[at] ^= UInt8(1 << (r.next() % 8))
            let path = dir + "/d\(seed).gz"
            try damaged.write(to: URL(fileURLWithPath: path))
            let got = try readAll(path, threads: Int(seed % 2) + 1, limit: 700)
            XCTAssertNotNil(got.failure, "byte \(at) damaged, the read ended cleanly")
        }
    }

    /// On a live pipe with `maxWait`, compressed bytes that arrived are inflated and their
    /// lines handed over without waiting for the rest of the stream (a deflate block cut in
    /// the middle inflates as far as it goes); the rest follows when it comes.
    func testALiveCompressedPipeHandsOverWhatArrived() throws {
        var rng = SplitMix64(seed: 5)
        let text = positionsText(&rng, count: 20_000, ndjson: false)
        let compressed = try gzip(Data(text.utf8), level: 1)
        let dir = try folder()
        let plain = dir + "/p.csv"
        try Data(text.utf8).write(to: URL(fileURLWithPath: plain))
        let expected = try readAll(plain, threads: 1, limit: 1 << 20)
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        defer { close(fds[0]) }
        let reader = PositionReader(fileDescriptor: fds[0])
        reader.maxWait = 0.2
        // Written on another thread: the pipe holds 64 KB, less than half the stream.
        let writer = DispatchQueue(label: "gzip-feed")
        let writeEnd = fds[1]
        func send(_ part: Data, after delay: Double = 0, thenClose: Bool = false) {
            writer.asyncAfter(deadline: .now() + delay) {
                defer { if thenClose { close(writeEnd) } }
                part.withUnsafeBytes { b in
                    var at = 0
                    while at < b.count {
                        let n = Foundation.write(writeEnd, b.baseAddress! + at, b.count - at)
                        if n < 0 && errno != EINTR { return }
                        at += max(0, n)
                    }
                }
            }
        }
        // First the 10-byte gzip header alone, which inflates to nothing: a read must still
        // return once its wait is over.
        send(compressed.prefix(10))
        send(compressed[10..<(compressed.count / 2)], after: 1.5)
        // The rest comes later in any case: a read that blocks for it fails the test instead
        // of hanging it.
        send(compressed.suffix(from: compressed.count / 2), after: 6, thenClose: true)
        var got: [Position] = []
        var errors: [PositionLineError] = []
        let t0 = Date()
        XCTAssertTrue(try reader.read(limit: 1 << 20, into: &got, errors: &errors))
        XCTAssertEqual(got.count, 0, "a header alone gave positions")
        XCTAssertLessThan(Date().timeIntervalSince(t0), 1.2, "a read waited past its wait for more compressed bytes")
        // The first half's lines, within the wait (several reads: each gives what one wait saw).
        while got.count < 5000 && Date().timeIntervalSince(t0) < 10 {
            XCTAssertTrue(try reader.read(limit: 1 << 20, into: &got, errors: &errors))
        }
        XCTAssertGreaterThan(got.count, 5000, "the first half of the stream was not handed over")
        XCTAssertLessThan(got.count, expected.positions.count, "a read waited for the second half")
        XCTAssertLessThan(Date().timeIntervalSince(t0), 5, "a read waited for the second half")
        assertSame(got, Array(expected.positions.prefix(got.count)))
        while try reader.read(limit: 1 << 20, into: &got, errors: &errors) {}
        assertSame(got, expected.positions)
        XCTAssertEqual(errors, expected.errors)
    }

    // MARK: Fences

    static let fences = GDALFixtures.collection([
        GDALFixtures.feature("\"id\":\"a\",\"group\":\"g\"", GDALFixtures.polygon([[(0, 0), (1, 0), (1, 1), (0, 1), (0, 0)]])),
        GDALFixtures.feature("\"id\":\"b\"", GDALFixtures.polygon([[(2, 2), (3, 2), (3, 3), (2, 2)]])),
        GDALFixtures.feature("\"id\":\"c\"", "{\"type\":\"Polygon\",\"coordinates\":[[[5,5],[6,5],[5,5]]]}"),
    ])

    /// A GeoJSON document compressed (named `.geojson.gz`, or not named so at all) reads with
    /// the built-in reader as its text does, fences and refusals alike; so does one on
    /// standard input (`readDocument` sniffs the magic).
    func testCompressedGeoJSONReadsAsItsText() throws {
        let dir = try folder()
        let plain = dir + "/zones.geojson"
        try GDALFixtures.write(Self.fences, to: plain)
        let compressed = try gzip(Data(Self.fences.utf8))
        let expected = try FenceInput.read(plain)
        XCTAssertEqual(expected.fences.count, 3)
        for name in ["zones.geojson.gz", "zones.GEOJSON.GZ", "packed.geojson"] {
            let path = dir + "/" + name
            try compressed.write(to: URL(fileURLWithPath: path))
            let got = try FenceInput.read(path)
            XCTAssertEqual(got.reader, .native, name)
            XCTAssertEqual(got.fences, expected.fences, name)
            XCTAssertEqual(got.rejected.map(\.error), expected.rejected.map(\.error), name)
        }
        XCTAssertEqual(try FenceInput.read(dir + "/zones.geojson.gz").layers, ["zones"])
        XCTAssertEqual(Data(try GeoJSONFences.readDocument(path: dir + "/packed.geojson")), Data(Self.fences.utf8))
    }

    /// Damaged compressed GeoJSON is refused as a whole, saying why: cut short, holding
    /// binary data, or inflating like a decompression bomb (the floor lowered here; 256 MiB
    /// in use).
    func testDamagedCompressedGeoJSONIsRefused() throws {
        let dir = try folder()
        let compressed = try gzip(Data(Self.fences.utf8))
        let cut = dir + "/cut.geojson.gz"
        try compressed.prefix(compressed.count - 9).write(to: URL(fileURLWithPath: cut))
        XCTAssertThrowsError(try FenceInput.read(cut)) { e in
            XCTAssertTrue((e as? FenceError)?.reason.contains("truncated") == true, "\(e)")
        }
        let zeros = dir + "/zeros.geojson.gz"
        try (try gzip(Data("{".utf8) + Data(count: 5 << 20))).write(to: URL(fileURLWithPath: zeros))
        XCTAssertThrowsError(try FenceInput.read(zeros)) { e in
            XCTAssertTrue((e as? FenceError)?.reason.contains("NUL byte") == true, "\(e)")
        }
        let spaces = try gzip(Data("{".utf8) + Data(repeating: 0x20, count: 8 << 20) + Data("}".utf8), level: 9)
        XCTAssertThrowsError(
            try spaces.withUnsafeBytes { raw in try GzipInflater.inflateAll(raw, refuseNUL: true, floor: 1 << 20) }
        ) { e in
            XCTAssertTrue((e as? FenceError)?.reason.contains("decompression bomb") == true, "\(e)")
        }
        // Under the floor the same data inflates.
        let inflated = try spaces.withUnsafeBytes { raw in try GzipInflater.inflateAll(raw, refuseNUL: true) }
        XCTAssertEqual(inflated.count, (8 << 20) + 2)
    }

    /// Compressed sources for OGR: a gzip-compressed CSV with WKT and FlatGeobuf through
    /// `/vsigzip/`, a zipped Shapefile through `/vsizip/`, added by the name's ending; the
    /// fences are those of the GeoJSON they were made from.
    func testCompressedOGRSourcesOpenThroughGDAL() throws {
        try GDALFixtures.requireOgr2ogr()
        let dir = try folder()
        let source = dir + "/zones.geojson"
        try GDALFixtures.write(Self.fences, to: source)
        try GDALFixtures.convert(["-f", "CSV", dir + "/zones.csv", source, "-lco", "GEOMETRY=AS_WKT"])
        try GDALFixtures.convert(["-f", "FlatGeobuf", dir + "/zones.fgb", source])
        for name in ["zones.csv", "zones.fgb"] {
            let expected = try FenceInput.read(dir + "/" + name)
            XCTAssertEqual(expected.fences.count, 2, name)
            let data = try Data(contentsOf: URL(fileURLWithPath: dir + "/" + name))
            try (try gzip(data)).write(to: URL(fileURLWithPath: dir + "/" + name + ".gz"))
            let got = try FenceInput.read(dir + "/" + name + ".gz")
            XCTAssertEqual(got.reader, .ogr)
            XCTAssertEqual(got.fences, expected.fences, name)
            XCTAssertEqual(got.rejected.map(\.error), expected.rejected.map(\.error), name)
        }
        // A zip archive holding a Shapefile (GDAL writes one for a name ending .shp.zip),
        // renamed to plain .zip as downloads are named.
        try FileManager.default.createDirectory(atPath: dir + "/shp", withIntermediateDirectories: true)
        try GDALFixtures.convert(["-f", "ESRI Shapefile", dir + "/shp/zones.shp", source])
        try GDALFixtures.convert(["-f", "ESRI Shapefile", dir + "/zones.shp.zip", source])
        try FileManager.default.moveItem(atPath: dir + "/zones.shp.zip", toPath: dir + "/zones.zip")
        let shapefile = try FenceInput.read(dir + "/shp/zones.shp")
        XCTAssertEqual(shapefile.fences.count, 2)
        XCTAssertEqual(try FenceInput.read(dir + "/zones.zip").fences, shapefile.fences)
        XCTAssertEqual(OGRFences.openablePath("/vsizip/x.zip"), "/vsizip/x.zip")
        XCTAssertEqual(OGRFences.openablePath("PG:dbname=x"), "PG:dbname=x")
    }

    // MARK: The CLI

    /// `fence eval` on a compressed file writes the events of its text; on one cut short, the
    /// events of the lines before the cut, then exits 1 naming the line and the cause.
    func testEvalReadsCompressedPositions() throws {
        let fences = try CLI.temp(self, "f.geojson", CLI.fences)
        var text = "device,time,lon,lat\n"
        for i in 0..<30_000 {
            let lon = Double(i % 200 - 100) * 0.0001
            text += "dev-\(i % 13),\(1_600_000_000 + i),\(lon),0\n"
        }
        let plain = try CLI.temp(self, "p.csv", text)
        let packed = plain + ".gz"
        let compressed = try gzip(Data(text.utf8))
        try compressed.write(to: URL(fileURLWithPath: packed))
        let expected = try CLI.run(["eval", "--fences", fences, "--positions", plain])
        XCTAssertEqual(expected.status, 0, expected.err)
        XCTAssertGreaterThan(expected.out.split(separator: "\n").count, 100)
        let got = try CLI.run(["eval", "--fences", fences, "--positions", packed])
        XCTAssertEqual(got.status, 0, got.err)
        XCTAssertEqual(got.out, expected.out)

        let cut = plain + ".cut.gz"
        try compressed.prefix(compressed.count / 2).write(to: URL(fileURLWithPath: cut))
        let partial = try CLI.run(["eval", "--fences", fences, "--positions", cut, "--batch", "1000000"])
        XCTAssertEqual(partial.status, 1)
        let match = try XCTUnwrap(partial.err.firstMatch(of: /line (\d+): malformed-input: the gzip data ends inside a member/), partial.err)
        let line = Int(match.1)!
        XCTAssertGreaterThan(line, 1000)
        // The oracle: the complete lines before the cut line, read plain.
        let prefix = try CLI.temp(self, "prefix.csv", text.split(separator: "\n", omittingEmptySubsequences: false).prefix(line - 1).joined(separator: "\n") + "\n")
        let before = try CLI.run(["eval", "--fences", fences, "--positions", prefix])
        XCTAssertEqual(before.status, 0, before.err)
        XCTAssertEqual(partial.out, before.out)
    }
}
