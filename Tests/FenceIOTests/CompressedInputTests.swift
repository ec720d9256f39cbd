import FenceEngine
@testable import FenceIO
import Foundation
import SeededRandom
import XCTest

/// Compressed inputs, gzip and Zstandard: positions (CSV, NDJSON; files and pipes) and fences
/// (GeoJSON with the built-in reader, other formats through GDAL's virtual file systems) read
/// as their text, and damaged streams refused by name after what came before them. The
/// compressed files are made by the system's `gzip` and `zstd` (.ci/setup installs zstd), the
/// oracle is the same text read plain.
final class CompressedInputTests: XCTestCase {
    /// A compressor on this machine: its program and the flags that write to standard output.
    struct Codec {
        var name: String
        var program: String
        func arguments(level: Int) -> [String] {
            name == "gzip" ? ["-c", "-\(level)", "-n"] : ["-c", "-q", "-\(level)"]
        }
        /// Levels the tests draw from.
        var levels: ClosedRange<Int> { name == "gzip" ? 1...9 : 1...19 }
    }

    static let gzipCodec = ["/usr/bin/gzip", "/bin/gzip"].first { FileManager.default.isExecutableFile(atPath: $0) }
        .map { Codec(name: "gzip", program: $0) }
    static let zstdCodec = ["/usr/bin/zstd", "/bin/zstd"].first { FileManager.default.isExecutableFile(atPath: $0) }
        .map { Codec(name: "zstd", program: $0) }

    /// Both codecs; a missing program skips the test (.ci/setup installs both).
    func codecs() throws -> [Codec] {
        guard let g = Self.gzipCodec else { throw XCTSkip("gzip is not installed") }
        guard let z = Self.zstdCodec else { throw XCTSkip("zstd is not installed (apt-get install zstd)") }
        return [g, z]
    }

    /// `data` compressed by `codec` at `level`.
    static func compress(_ data: Data, _ codec: Codec, level: Int = 6, flags: [String] = []) throws -> Data {
        try filter(data, through: codec.program, codec.arguments(level: level) + flags)
    }

    /// `data` through `program` run with `arguments`, standard input to standard output.
    static func filter(_ data: Data, through program: String, _ arguments: [String]) throws -> Data {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: program)
        p.arguments = arguments
        let input = Pipe()
        let output = Pipe()
        p.standardInput = input
        p.standardOutput = output
        try p.run()
        // Written on another thread: a large input would fill the pipe while the compressor
        // waits to write.
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

    /// `data` compressed by gzip.
    func gzip(_ data: Data, level: Int = 6) throws -> Data {
        guard let codec = Self.gzipCodec else { throw XCTSkip("gzip is not installed") }
        return try Self.compress(data, codec, level: level)
    }

    func folder() throws -> String {
        let dir = NSTemporaryDirectory() + "fence-compressed-\(UUID().uuidString)"
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

    /// Writes all of `data` to a pipe (blocking while it is full); stops at an error.
    static func write(_ data: Data, to fd: Int32) {
        data.withUnsafeBytes { b in
            var at = 0
            while at < b.count {
                let n = Foundation.write(fd, b.baseAddress! + at, b.count - at)
                if n < 0 && errno != EINTR { return }
                at += max(0, n)
            }
        }
    }

    /// A CSV of `lines` good random positions, and its positions read plain (from a file in `dir`).
    func goodCSV(lines: Int, seed: UInt64, in dir: String) throws -> (text: String, positions: [Position]) {
        var rng = SplitMix64(seed: seed)
        var text = "device,time,lon,lat\n"
        for i in 0..<lines { text += "dev-\(i % 97),\(1_600_000_000 + i),\(rng.uniform(-180, 180)),\(rng.uniform(-90, 90))\n" }
        let plain = dir + "/good-\(seed).csv"
        try Data(text.utf8).write(to: URL(fileURLWithPath: plain))
        return (text, try readAll(plain, threads: 1, limit: 1 << 20).positions)
    }

    /// A clean read that gave what `expected` (the plain text's read) gave.
    func assertSameRead(
        _ got: (positions: [Position], errors: [PositionLineError], failure: FenceError?),
        _ expected: (positions: [Position], errors: [PositionLineError], failure: FenceError?), _ message: String, line: UInt = #line
    ) {
        XCTAssertNil(got.failure, message, line: line)
        assertSame(got.positions, expected.positions, message, line: line)
        XCTAssertEqual(got.errors, expected.errors, message, line: line)
    }

    /// Everything a reader gives, read in batches of `limit`, and the error that ended it.
    func readAll(_ path: String, threads: Int, limit: Int, maxLineBytes: Int = 1 << 20) throws -> (
        positions: [Position], errors: [PositionLineError], failure: FenceError?
    ) {
        let reader = try PositionReader(path: path, maxLineBytes: maxLineBytes)
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

    /// Over 24 seeds: CSV and NDJSON, gzip and zstd, one to three members or frames cut
    /// anywhere (mid-line too), any level, read on one and two threads in batches of any size
    /// and with a small buffer, give exactly the positions and bad lines (numbers and
    /// reasons) of the text read plain.
    func testCompressedPositionsReadAsTheirText() throws {
        let dir = try folder()
        let codecs = try codecs()
        for seed in 1...24 {
            let codec = codecs[seed % 4 < 2 ? 0 : 1]
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
                compressed += try Self.compress(
                    text.subdata(in: cuts[k]..<cuts[k + 1]), codec,
                    level: codec.levels.lowerBound + Int(rng.next() % UInt64(codec.levels.count)))
            }
            let packed = dir + "/p\(seed).gz"
            try compressed.write(to: URL(fileURLWithPath: packed))
            let limit = [1, 7, 1000, 1 << 20][Int(rng.next() % 4)]
            let threads = Int(rng.next() % 2) + 1
            let expected = try readAll(plain, threads: 1, limit: 1 << 20)
            let got = try readAll(packed, threads: threads, limit: limit)
            XCTAssertNil(expected.failure)
            XCTAssertNil(got.failure, "seed \(seed), \(codec.name)")
            assertSame(got.positions, expected.positions, "seed \(seed)")
            XCTAssertEqual(got.errors, expected.errors, "seed \(seed)")
            XCTAssertGreaterThan(got.positions.count, 0, "seed \(seed)")
            // A small line limit makes a small buffer (128 KiB): a zstd block (128 KiB of text)
            // then often does not fit, and the decoder holds the rest until the next call,
            // also after its last compressed byte was taken.
            let small = try readAll(packed, threads: threads, limit: limit, maxLineBytes: 64)
            let smallExpected = try readAll(plain, threads: 1, limit: 1 << 20, maxLineBytes: 64)
            assertSameRead(small, smallExpected, "seed \(seed), \(codec.name), small buffer")
        }
    }

    /// A file cut short: the complete lines before the cut are read, exactly as written (the
    /// line the cut went through is not: its prefix would be a wrong position), then the
    /// read fails naming that line and saying the file is truncated.
    func testATruncatedFileGivesItsLinesThenFails() throws {
        let dir = try folder()
        let (text, all) = try goodCSV(lines: 40_000, seed: 7, in: dir)
        XCTAssertEqual(all.count, 40_000)
        for codec in try codecs() {
        let compressed = try Self.compress(Data(text.utf8), codec)
        for (k, share) in [0.05, 0.3, 0.5, 0.77, 0.999].enumerated() {
            let path = dir + "/cut\(k).csv.\(codec.name)"
            try compressed.prefix(Int(Double(compressed.count) * share)).write(to: URL(fileURLWithPath: path))
            for threads in [1, 2] {
                let got = try readAll(path, threads: threads, limit: 5000)
                let failure = try XCTUnwrap(got.failure, "cut at \(share)")
                XCTAssertTrue(failure.reason.contains("the \(codec.name) data ends inside a") && failure.reason.contains("truncated"), failure.reason)
                // The header, the lines read, then the cut one (the header itself when the cut
                // comes before its end: zstd decodes blocks of 128 KB of text).
                let cutLine = got.positions.count == 0 && failure.line == 1 ? 1 : got.positions.count + 2
                XCTAssertEqual(failure.line, cutLine, "the line the cut went through")
                XCTAssertEqual(got.errors, [], "no cut line is read as a bad line")
                assertSame(got.positions, Array(all.prefix(got.positions.count)), "cut at \(share)")
                // All but the last block (gzip: about 32 KB of compressed data; zstd: 128 KB
                // of text) decodes.
                XCTAssertGreaterThan(got.positions.count, Int(Double(all.count) * share) - 5000, "cut at \(share), \(codec.name)")
            }
        }
        }
    }

    /// A buffer (128 KiB, from a small line limit) with less room than a decoded block (libzstd
    /// decodes whole blocks of 128 KiB and gives what fits, holding the rest), the last block a
    /// whole one, the buffer's end inside a line: every line is read, on one and two threads.
    /// (libzstd 1.5 keeps the block's last compressed byte until the block is out, so the
    /// reader's guard for output held after the last byte, `decoderMayHoldOutput`, is not
    /// reached here: it is there for decoders that take all their input first.)
    func testABufferSmallerThanABlockReadsEveryLine() throws {
        let dir = try folder()
        // 1 MiB exactly, so the last block is a whole one: the header, lines of 61 bytes (so
        // the buffer's end falls inside a line and less than a block is free), one shorter
        // line to make it up.
        var text = "device,time,lon,lat\n"
        var i = 0
        while text.utf8.count + 2 * 61 <= 1 << 20 {
            let head = "d\(i % 7),\(1_600_000_000 + i),\(i % 180).\(i),"
            text += head + "1." + String(repeating: "1", count: 60 - head.utf8.count - 2) + "\n"
            i += 1
        }
        text += String(repeating: "x", count: (1 << 20) - text.utf8.count - 1) + "\n"
        XCTAssertEqual(text.utf8.count, 1 << 20)
        let plain = dir + "/p.csv"
        try Data(text.utf8).write(to: URL(fileURLWithPath: plain))
        let expected = try readAll(plain, threads: 1, limit: 1 << 20, maxLineBytes: 64)
        XCTAssertEqual(expected.positions.count, i)
        for codec in try codecs() {
            let path = dir + "/p.csv.\(codec.name)"
            // Without zstd's checksum: its 4 bytes would otherwise stay untaken until the block
            // is out.
            let flags = codec.name == "zstd" ? ["--no-check"] : []
            try (try Self.compress(Data(text.utf8), codec, level: 1, flags: flags)).write(to: URL(fileURLWithPath: path))
            for threads in [1, 2] {
                let got = try readAll(path, threads: threads, limit: 1 << 20, maxLineBytes: 64)
                assertSameRead(got, expected, "\(codec.name), \(threads) threads")
            }
        }
    }

    /// zlib can hold output (the rest of a back-reference) when the reader's buffer fills
    /// exactly as the compressed bytes run out: it is still read before the input's end is
    /// called (Tests/Fixtures/held-output-cut.csv.gz, cut at such a point: `gzip -dc` gives
    /// 52,439 complete lines; 11 of them were lost, and the wrong line named, before).
    func testOutputHeldWhenTheBytesRunOutIsRead() throws {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/held-output-cut.csv.gz").path
        for threads in [1, 2] {
            let got = try readAll(fixture, threads: threads, limit: 1 << 20)
            XCTAssertEqual(got.positions.count, 52_439, "\(threads) threads")
            XCTAssertTrue(got.positions.allSatisfy { $0.device == "aaaaaaaaaa" && $0.lon == 1 && $0.lat == 1 })
            XCTAssertEqual(got.failure?.line, 52_441)
            XCTAssertTrue(got.failure?.reason.contains("truncated") == true, "\(String(describing: got.failure))")
        }
    }

    /// After a failure, an unterminated last line is dropped even when its member ended
    /// cleanly and junk follows: the text may have gone on in what the damage took (a member
    /// or frame ending mid-line), and a shortened line would be a wrong position. The error
    /// names the line after the last one read.
    func testAnUnterminatedLineBeforeAFailureIsDropped() throws {
        let dir = try folder()
        let text = "device,time,lon,lat\nd1,1600000000,1,1\nd2,1600000001,2,2"
        let path = dir + "/nonl.csv.gz"
        for codec in try codecs() {
            let compressed = try Self.compress(Data(text.utf8), codec)
            // Junk after the stream, a partial next magic, or the stream cut inside.
            for damaged in [compressed + Data("XX".utf8), compressed + Data([0x1F]), compressed + Data([0x28, 0xB5]),
                compressed.prefix(compressed.count - 4)]
            {
                try damaged.write(to: URL(fileURLWithPath: path))
                let got = try readAll(path, threads: 1, limit: 1 << 20)
                XCTAssertEqual(got.positions.map(\.device), ["d1"], codec.name)
                XCTAssertEqual(got.failure?.line, 3, codec.name)
            }
        }
    }

    /// A fault inside a zstd frame (a flipped bit near its end, found by the checksum or the
    /// block's own decoding) keeps the lines of the blocks before it: libzstd reports no
    /// progress for a call that fails, so it is given the input in small slices.
    func testAZstdFaultKeepsTheBlocksBeforeIt() throws {
        guard let codec = Self.zstdCodec else { throw XCTSkip("zstd is not installed") }
        let dir = try folder()
        let (text, all) = try goodCSV(lines: 20_000, seed: 21, in: dir)
        var compressed = try Self.compress(Data(text.utf8), codec)
        compressed[compressed.count - 2000] ^= 0x40
        let path = dir + "/flip.csv.zst"
        try compressed.write(to: URL(fileURLWithPath: path))
        let got = try readAll(path, threads: 1, limit: 1 << 20)
        XCTAssertNotNil(got.failure)
        // The text is about 900 KB: 7 or 8 blocks of 128 KB, the flip in the last.
        XCTAssertGreaterThan(got.positions.count, 15_000)
        assertSame(got.positions, Array(all.prefix(got.positions.count)), "zstd flip")
    }

    /// A fault found at the stream's very end (a wrong length in the last trailer) ends a live
    /// pipe's input at once, with zlib's reason, not when the writer closes the pipe.
    func testAFaultAtTheEndOfALivePipeEndsItAtOnce() throws {
        var rng = SplitMix64(seed: 9)
        var damaged = try gzip(Data(positionsText(&rng, count: 3000, ndjson: false).utf8))
        damaged[damaged.count - 1] ^= 0x01  // the length's last byte
        let compressed = damaged
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        defer { close(fds[0]) }
        let writeEnd = fds[1]
        let writer = DispatchQueue(label: "fault-feed")
        writer.async { Self.write(compressed, to: writeEnd) }
        // The pipe stays open 8 s.
        writer.asyncAfter(deadline: .now() + 8) { close(writeEnd) }
        let reader = PositionReader(fileDescriptor: fds[0])
        reader.maxWait = 0.2
        var got: [Position] = []
        var errors: [PositionLineError] = []
        let t0 = Date()
        var failure: FenceError?
        do {
            while try reader.read(limit: 1 << 20, into: &got, errors: &errors) {}
        } catch {
            failure = error
        }
        XCTAssertLessThan(Date().timeIntervalSince(t0), 5, "the read waited for the writer to close the pipe")
        XCTAssertTrue(failure?.reason.contains("incorrect length check") == true, "\(String(describing: failure))")
        writer.sync {}
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
        for codec in try codecs() {
        for (k, tail) in [Data("d,1,2,3\n".utf8), Data(count: 512)].enumerated() {
            let path = dir + "/tail\(k).csv.\(codec.name)"
            try (try Self.compress(Data(text.utf8), codec) + tail).write(to: URL(fileURLWithPath: path))
            let got = try readAll(path, threads: 1, limit: 1 << 20)
            assertSame(got.positions, expected.positions)
            XCTAssertEqual(got.errors, expected.errors)
            let failure = try XCTUnwrap(got.failure)
            // gzip names the trailing data; libzstd finds no frame there.
            let said = codec.name == "gzip" ? "not gzip follows the gzip stream" : "Unknown frame descriptor"
            XCTAssertTrue(failure.reason.contains(said), failure.reason)
        }
        }
    }

    /// A damaged byte anywhere in the compressed data ends the read with an error (a bad
    /// block, a wrong checksum or length), never a crash and never a clean end.
    func testADamagedStreamNeverEndsCleanly() throws {
        let dir = try folder()
        var rng = SplitMix64(seed: 11)
        let text = positionsText(&rng, count: 3000, ndjson: true)
        let codecs = try codecs()
        for seed in 1...40 {
            let codec = codecs[seed % 2]
            let compressed = try Self.compress(Data(text.utf8), codec)
            var r = SplitMix64(seed: UInt64(seed))
            var damaged = compressed
            // Past the header (gzip's 10 bytes hold a time stamp nothing checks; zstd's frame
            // header, 6 bytes here, declares sizes the checks below would catch anyway).
            let at = 10 + Int(r.next() % UInt64(compressed.count - 10))
            damaged[at] ^= UInt8(1 << (r.next() % 8))
            let path = dir + "/d\(seed).gz"
            try damaged.write(to: URL(fileURLWithPath: path))
            let got = try readAll(path, threads: Int(seed % 2) + 1, limit: 700)
            XCTAssertNotNil(got.failure, "\(codec.name): byte \(at) damaged, the read ended cleanly")
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
                Self.write(part, to: writeEnd)
                if thenClose { close(writeEnd) }
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

    /// A Zstandard stream may open with a skippable frame (magic 0x184D2A50-5F, RFC 8878
    /// 3.1.2: metadata a reader passes over), and hold one between frames: it is read as
    /// zstd, from a file and from a pipe whose first bytes arrive one at a time (the reader
    /// must wait for four before deciding). Coverage audit: no test had sent one.
    func testAZstdStreamOpeningWithASkippableFrameIsRead() throws {
        guard let codec = Self.zstdCodec else { throw XCTSkip("zstd is not installed") }
        var rng = SplitMix64(seed: 11)
        let text = positionsText(&rng, count: 3_000, ndjson: false)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let cut = lines.count / 2
        let first = try Self.compress(Data((lines[..<cut].joined(separator: "\n") + "\n").utf8), codec)
        let second = try Self.compress(Data(lines[cut...].joined(separator: "\n").utf8), codec)
        func skippable(_ nibble: UInt8, _ payload: [UInt8]) -> Data {
            let n = UInt32(payload.count)
            return Data([0x50 | nibble, 0x2A, 0x4D, 0x18, UInt8(n & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 24)] + payload)
        }
        let stream = skippable(0x0, Array("device,time,lon,lat\nnot,data,read,here\n".utf8)) + first + skippable(0xF, [0, 1, 2]) + second
        let dir = try folder()
        let plain = dir + "/p.csv"
        try Data(text.utf8).write(to: URL(fileURLWithPath: plain))
        let expected = try readAll(plain, threads: 1, limit: 1 << 20)
        XCTAssertGreaterThan(expected.positions.count, 2_000)
        let path = dir + "/p.csv.zst"
        try stream.write(to: URL(fileURLWithPath: path))
        let got = try readAll(path, threads: 1, limit: 1 << 20)
        XCTAssertNil(got.failure)
        assertSame(got.positions, expected.positions)
        XCTAssertEqual(got.errors, expected.errors)
        // Through a pipe, the magic's bytes one at a time.
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        defer { close(fds[0]) }
        let writeEnd = fds[1]
        let writer = DispatchQueue(label: "skippable-feed")
        for k in 0..<3 {
            writer.asyncAfter(deadline: .now() + 0.05 * Double(k)) { Self.write(stream.subdata(in: k..<(k + 1)), to: writeEnd) }
        }
        writer.asyncAfter(deadline: .now() + 0.2) {
            Self.write(stream.subdata(in: 3..<stream.count), to: writeEnd)
            close(writeEnd)
        }
        let reader = PositionReader(fileDescriptor: fds[0])
        var piped: [Position] = []
        var errors: [PositionLineError] = []
        while try reader.read(limit: 1 << 20, into: &piped, errors: &errors) {}
        assertSame(piped, expected.positions)
        XCTAssertEqual(errors, expected.errors)
    }

    // MARK: Fences

    static let fences = GDALFixtures.collection([
        GDALFixtures.feature("\"id\":\"a\",\"group\":\"g\"", GDALFixtures.polygon([[(0, 0), (1, 0), (1, 1), (0, 1), (0, 0)]])),
        GDALFixtures.feature("\"id\":\"b\"", GDALFixtures.polygon([[(2, 2), (3, 2), (3, 3), (2, 2)]])),
        GDALFixtures.feature("\"id\":\"c\"", "{\"type\":\"Polygon\",\"coordinates\":[[[5,5],[6,5],[5,5]]]}"),
    ])

    /// A GeoJSON document compressed with gzip or zstd (named `.geojson.gz` or `.geojson.zst`,
    /// or not named so at all) reads with the built-in reader as its text does, fences and
    /// refusals alike; so does one on standard input (`readDocument` sniffs the magic).
    func testCompressedGeoJSONReadsAsItsText() throws {
        let dir = try folder()
        let plain = dir + "/zones.geojson"
        try GDALFixtures.write(Self.fences, to: plain)
        let expected = try FenceInput.read(plain)
        XCTAssertEqual(expected.fences.count, 3)
        for codec in try codecs() {
            let compressed = try Self.compress(Data(Self.fences.utf8), codec)
            let ending = codec.name == "gzip" ? "gz" : "zst"
            for name in ["zones.geojson.\(ending)", "zones.GEOJSON.\(ending.uppercased())", "packed-\(ending).geojson"] {
                let path = dir + "/" + name
                try compressed.write(to: URL(fileURLWithPath: path))
                let got = try FenceInput.read(path)
                XCTAssertEqual(got.reader, .native, name)
                XCTAssertEqual(got.fences, expected.fences, name)
                XCTAssertEqual(got.rejected.map(\.error), expected.rejected.map(\.error), name)
            }
            XCTAssertEqual(try FenceInput.read(dir + "/zones.geojson.\(ending)").layers, ["zones"])
            XCTAssertEqual(Data(try GeoJSONFences.readDocument(path: dir + "/packed-\(ending).geojson")), Data(Self.fences.utf8))
            // Standard input, through the CLI.
            let shell = Process()
            shell.executableURL = URL(fileURLWithPath: "/bin/sh")
            // Its first byte alone, then the rest: the magic is told across reads.
            shell.arguments = ["-c", "(head -c 1 \"$1\"; sleep 0.3; tail -c +2 \"$1\") | \"$0\" check --fences -", CLI.binary.path, dir + "/packed-\(ending).geojson"]
            let out = Pipe()
            shell.standardOutput = out
            shell.standardError = FileHandle.nullDevice
            try shell.run()
            let report = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            shell.waitUntilExit()
            // The bad third fence is the one problem `check` reports (status 1), as for the text.
            XCTAssertEqual(shell.terminationStatus, 1, codec.name)
            XCTAssertTrue(report.contains("fence c: ring-too-short"), report)
            XCTAssertEqual(report.split(separator: "\n").count, 1, report)
        }
    }

    /// Compressed GeoJSON on standard input is decoded as it arrives: endless zeros after the
    /// gzip magic are refused at once (zlib's header check), and after the zstd magic (a frame
    /// of endless empty blocks, no output) once 64 MiB gave nothing, as plain `/dev/zero` is
    /// refused, instead of being held until the input ends.
    func testEndlessCompressedStandardInputIsRefusedAtOnce() throws {
        for (magic, said) in [("\\037\\213", "gzip data is corrupt"), ("\\050\\265\\057\\375", "zstd data gives no output")] {
            let shell = Process()
            shell.executableURL = URL(fileURLWithPath: "/bin/sh")
            // `timeout` ends a run that reads on (the test then fails on the time and status).
            shell.arguments = ["-c", "(printf '\(magic)'; cat /dev/zero) | timeout 20 \"$0\" check --fences -", CLI.binary.path]
            let err = Pipe()
            shell.standardError = err
            shell.standardOutput = FileHandle.nullDevice
            let t0 = Date()
            try shell.run()
            let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            shell.waitUntilExit()
            XCTAssertLessThan(Date().timeIntervalSince(t0), 10, message)
            XCTAssertEqual(shell.terminationStatus, 1, message)
            XCTAssertTrue(message.contains(said), message)
        }
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
            try spaces.withUnsafeBytes { raw in try Compression.gzip.decodeAll(raw, refuseNUL: true, floor: 1 << 20) }
        ) { e in
            XCTAssertTrue((e as? FenceError)?.reason.contains("decompression bomb") == true, "\(e)")
        }
        // Under the floor the same data inflates.
        let inflated = try spaces.withUnsafeBytes { raw in try Compression.gzip.decodeAll(raw, refuseNUL: true) }
        XCTAssertEqual(inflated.count, (8 << 20) + 2)
    }

    /// Compressed sources for OGR: a gzip-compressed CSV with WKT and FlatGeobuf through
    /// `/vsigzip/`, a zipped Shapefile through `/vsizip/`, a tarred one through `/vsitar/`,
    /// added by the name's ending; the fences are those of the uncompressed sources.
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
        // A tar archive of it, compressed or not (the system's tar).
        for (name, flags) in [("zones.tar.gz", "czf"), ("zones.tar", "cf")] {
            let tar = Process()
            tar.executableURL = URL(fileURLWithPath: "/bin/tar")
            tar.arguments = [flags, dir + "/" + name, "-C", dir + "/shp", "."]
            try tar.run()
            tar.waitUntilExit()
            XCTAssertEqual(tar.terminationStatus, 0)
            XCTAssertEqual(try FenceInput.read(dir + "/" + name).fences, shapefile.fences, name)
        }
        XCTAssertEqual(OGRFences.openablePath("a.TAR.GZ"), "/vsitar/a.TAR.GZ")
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
