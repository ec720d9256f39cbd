import FenceEngine
@testable import FenceIO
import Foundation
import SeededRandom
import XCTest

/// Compressed output: `OutputEncoder` round trips through the system's `gzip` and `zstd` (the
/// oracle), every flush point decodes to all that was given before it, and `fence eval
/// --output` chooses compression and format by the file's name.
final class CompressedOutputTests: XCTestCase {
    /// `data` decoded by the system's program for `kind` (`gzip -dc`, `zstd -dc`).
    func systemDecode(_ data: Data, _ kind: OutputEncoder.Kind) throws -> (status: Int32, out: Data) {
        let program = kind == .gzip ? ["/usr/bin/gzip", "/bin/gzip"] : ["/usr/bin/zstd", "/bin/zstd"]
        guard let path = program.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw XCTSkip("\(kind) program not installed (.ci/setup installs it)")
        }
        let file = NSTemporaryDirectory() + "out-\(UUID().uuidString)"
        try data.write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = kind == .gzip ? ["-dc", file] : ["-dc", "-q", file]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let bytes = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, bytes)
    }

    /// Random text in random pieces (empty ones too, and one past the encoder's chunk):
    /// decoded by the system program, the whole equals the pieces joined; fed to the project's
    /// own streaming decoder, the bytes written up to each flush give every piece before it.
    func testEncodedPiecesDecodeWholeAndAtEveryFlush() throws {
        for kind in [OutputEncoder.Kind.gzip, .zstd] {
            for seed in 0..<12 as Range<UInt64> {
                var rng = SplitMix64(seed: seed)
                let encoder = OutputEncoder(kind)
                var plain: [UInt8] = []
                var encoded: [UInt8] = []
                let decoder = (kind == .gzip ? Compression.gzip : Compression.zstd).decoder()
                var decoded: [UInt8] = []
                var fed = 0
                let pieces = Int(rng.next() % 12)
                for k in 0...pieces {
                    let size = k == 3 && seed % 3 == 0 ? 300_000 : Int(rng.next() % 5_000)
                    // Text-like: a few words repeated, so it compresses.
                    let piece = (0..<size).map { _ in UInt8(97 + rng.next() % 6) }
                    plain += piece
                    encoded += piece.withUnsafeBytes { encoder.encode($0, final: k == pieces) }
                    // Everything given so far decodes from what came out so far.
                    var output = [UInt8](repeating: 0, count: 1 << 16)
                    while true {
                        let (read, written) = try encoded[fed...].withUnsafeBytes { input in
                            try output.withUnsafeMutableBytes { try decoder.decode(input, into: $0) }
                        }
                        fed += read
                        decoded += output[..<written]
                        if read == 0 && written == 0 { break }
                    }
                    XCTAssertEqual(decoded.count, plain.count, "\(kind) seed \(seed): piece \(k) not decodable at its flush")
                    XCTAssertEqual(decoded, plain, "\(kind) seed \(seed) piece \(k)")
                }
                XCTAssertNoThrow(try decoder.finish(), "\(kind) seed \(seed): the stream does not end")
                let system = try systemDecode(Data(encoded), kind)
                XCTAssertEqual(system.status, 0, "\(kind) seed \(seed)")
                XCTAssertEqual([UInt8](system.out), plain, "\(kind) seed \(seed)")
            }
        }
    }

    /// `fence eval --output`: `.csv` writes CSV without `--format`; `.gz` and `.zst` write
    /// the same bytes compressed (checked by the system programs); an explicit `--format`
    /// (in any case, as for `contains` and `nearest`) wins over the name; `.xz` or `.bz2` are refused before anything is written; a run that
    /// stops on unreadable input still ends its compressed file, holding the events before.
    func testEvalOutputNamesChooseFormatAndCompression() throws {
        let fences = try CLI.temp(self, "fences.geojson", CLI.fences)
        let folder = (fences as NSString).deletingLastPathComponent
        var lines = "device,time,lon,lat\n"
        var rng = SplitMix64(seed: 5)
        for t in 0..<3_000 {
            let lon = 0.05 * Double(rng.next() % 1000) / 1000 - 0.01
            lines += "d\(rng.next() % 40),\(t),\(lon),\(0.02 * Double(rng.next() % 1000) / 1000)\n"
        }
        let positions = try CLI.temp(self, "p.csv", lines)
        let base = ["eval", "--fences", fences, "--positions", positions]
        let ndjson = try CLI.run(base)
        let csv = try CLI.run(base + ["--format", "csv"])
        XCTAssertEqual(ndjson.status, 0, ndjson.err)
        XCTAssertTrue(csv.out.hasPrefix("time,device,fence"), csv.out)
        XCTAssertGreaterThan(ndjson.out.count, 10_000)
        let cases: [(name: String, extra: [String], expected: String, kind: OutputEncoder.Kind?)] = [
            ("e.csv", [], csv.out, nil), ("E.CSV", [], csv.out, nil), ("e.ndjson", [], ndjson.out, nil), ("e.txt", [], ndjson.out, nil),
            ("e.csv.gz", [], csv.out, .gzip), ("e.ndjson.gz", [], ndjson.out, .gzip), ("e.csv.zst", [], csv.out, .zstd),
            ("e.jsonl.zst", [], ndjson.out, .zstd), ("e.csv", ["--format", "ndjson"], ndjson.out, nil),
            ("x.gz", ["--format", "csv"], csv.out, .gzip), ("y.out", ["--format", "CSV"], csv.out, nil),
        ]
        for c in cases {
            let path = folder + "/" + c.name
            let r = try CLI.run(base + ["--output", path] + c.extra)
            XCTAssertEqual(r.status, 0, "\(c.name): \(r.err)")
            XCTAssertEqual(r.out, "", c.name)
            let written = try Data(contentsOf: URL(fileURLWithPath: path))
            let text = try c.kind.map { try systemDecode(written, $0) }.map { decoded -> Data in
                XCTAssertEqual(decoded.status, 0, c.name)
                XCTAssertLessThan(written.count, decoded.out.count / 3, "\(c.name) is not compressed")
                return decoded.out
            } ?? written
            XCTAssertEqual(String(decoding: text, as: UTF8.self), c.expected, "\(c.name) \(c.extra)")
            try FileManager.default.removeItem(atPath: path)
        }
        // Format names in any case, as the file endings are taken.
        for command in ["contains", "nearest"] {
            let lower = try CLI.run([command, "--fences", fences, "--positions", positions, "--format", "ndjson", "--input-format", "csv"])
            let upper = try CLI.run([command, "--fences", fences, "--positions", positions, "--format", "NDJSON", "--input-format", "Csv"])
            XCTAssertEqual(lower.status, 0, lower.err)
            XCTAssertEqual(upper.out, lower.out, command)
            XCTAssertTrue(lower.out.hasPrefix("{"), command)
        }
        for name in ["e.csv.xz", "e.bz2"] {
            let r = try CLI.run(base + ["--output", folder + "/" + name])
            XCTAssertEqual(r.status, 2, r.err)
            XCTAssertTrue(r.err.contains("is not written; name it .gz or .zst"), r.err)
            XCTAssertFalse(FileManager.default.fileExists(atPath: folder + "/" + name))
        }
        // Input cut inside its gzip data after several batches: status 1, the file holds the
        // events of the batches applied, and its stream is ended (the system program takes it).
        let gzipped = try CompressedInputTests.compress(Data(lines.utf8), XCTUnwrap(CompressedInputTests.gzipCodec))
        let cut = folder + "/cut.csv.gz"
        try gzipped.prefix(gzipped.count * 2 / 3).write(to: URL(fileURLWithPath: cut))
        let out = folder + "/cut-events.ndjson.gz"
        let stopped = try CLI.run(["eval", "--fences", fences, "--positions", cut, "--batch", "200", "--output", out])
        XCTAssertEqual(stopped.status, 1, stopped.err)
        let decoded = try systemDecode(try Data(contentsOf: URL(fileURLWithPath: out)), .gzip)
        XCTAssertEqual(decoded.status, 0, "the stopped run's gzip output is not ended")
        let kept = String(decoding: decoded.out, as: UTF8.self)
        XCTAssertGreaterThan(kept.count, 1_000)
        XCTAssertTrue(ndjson.out.hasPrefix(kept), "what the stopped run kept is not the start of the whole run's events")
    }
}
