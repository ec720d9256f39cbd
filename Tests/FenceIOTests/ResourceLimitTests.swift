import FenceEngine
@testable import FenceIO
import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// Issue 7's resource limits: each hostile input is handled within stated memory or refused
/// with a clear error naming the limit, never an unbounded allocation or a stack overflow.
/// (Ten million distinct devices are measured by Tests/Reliability/devices.sh.)
final class ResourceLimitTests: XCTestCase {
    /// A positions file with a 100 MB line between two good ones, made once.
    static let hugeLineFile: String = {
        let path = NSTemporaryDirectory() + "fence-100MB-line-\(getpid()).csv"
        FileManager.default.createFile(atPath: path, contents: nil)
        let h = FileHandle(forWritingAtPath: path)!
        h.write(Data("device,time,lon,lat\na,0,0,0\n".utf8))
        let block = Data(repeating: 0x78, count: 1 << 20)
        for _ in 0..<100 { h.write(block) }
        h.write(Data(",0,1,1\nb,0,0,0\n".utf8))
        try? h.close()
        return path
    }()

    override class func tearDown() {
        try? FileManager.default.removeItem(atPath: hugeLineFile)
    }

    /// The reader skips the 100 MB line with one error and never holds more than its 2 MiB
    /// buffer.
    func testHundredMegabyteLineIsSkippedInBoundedMemory() throws {
        let reader = try PositionReader(path: Self.hugeLineFile)
        let (positions, errors) = try reader.readAll()
        XCTAssertEqual(positions.map(\.device), ["a", "b"])
        XCTAssertEqual(errors, [PositionLineError(line: 3, reason: "line longer than 1048576 bytes")])
        XCTAssertLessThanOrEqual(reader.bufferBytes, 2 << 20)
    }

    /// Through `fence eval`: the line is reported, the run goes on, and the process's peak
    /// resident size stays far below the line's size.
    func testHundredMegabyteLineThroughEval() throws {
        let fences = try CLI.temp(self, "f.geojson", CLI.fences)
        let r = try CLI.runMeasured(["eval", "--fences", fences, "--positions", Self.hugeLineFile, "--max-bad", "0.5"])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.err.contains("line 3: line longer than 1048576 bytes"), r.err)
        XCTAssertTrue(r.err.contains("3 positions read, 1 rejected"), r.err)
        print("fence eval over a 100 MB line: peak RSS \(r.maxRSSKiB / 1024) MB")
        // Under the address sanitizer (.ci/asan sets ASAN_OPTIONS) shadow memory and the
        // quarantine of freed blocks add over 100 MB; the reader's own bound is tested above.
        if ProcessInfo.processInfo.environment["ASAN_OPTIONS"] == nil {
            XCTAssertLessThan(r.maxRSSKiB, 96 * 1024, "peak RSS \(r.maxRSSKiB) KiB for a 100 MB line")
        }
        // With --max-bad 0 the one bad line stops the run: status 1 (by default a short
        // file's stray line is skipped: the share is of at least 1,000 lines).
        let strict = try CLI.runMeasured(["eval", "--fences", fences, "--positions", Self.hugeLineFile, "--max-bad", "0"])
        XCTAssertEqual(strict.status, 1, strict.err)
        let lenient = try CLI.runMeasured(["eval", "--fences", fences, "--positions", Self.hugeLineFile])
        XCTAssertEqual(lenient.status, 0, lenient.err)
    }

    /// The limit is configurable: a 1.5 MB line is refused by default and read with
    /// --max-line-bytes 2097152; a limit below 64 bytes is bad usage.
    func testLineLimitIsConfigurable() throws {
        let fences = try CLI.temp(self, "f.geojson", CLI.fences)
        let long = String(repeating: "d", count: 3 << 19)
        let csv = try CLI.temp(self, "p.csv", "device,time,lon,lat\n\(long),0,0,0\nb,0,0,0\n")
        let refused = try CLI.run(["eval", "--fences", fences, "--positions", csv, "--max-bad", "0.6"])
        XCTAssertEqual(refused.status, 0, refused.err)
        XCTAssertTrue(refused.err.contains("line 2: line longer than 1048576 bytes"), refused.err)
        XCTAssertEqual(refused.out.split(separator: "\n").count, 1)
        let read = try CLI.run(["eval", "--fences", fences, "--positions", csv, "--max-line-bytes", "2097152"])
        XCTAssertEqual(read.status, 0, read.err)
        XCTAssertEqual(read.out.split(separator: "\n").count, 2)
        XCTAssertEqual(try CLI.run(["eval", "--fences", fences, "--positions", csv, "--max-line-bytes", "10"]).status, 2)
        XCTAssertEqual(try CLI.run(["contains", "--fences", fences, "--positions", csv, "--max-line-bytes", "2097152"]).status, 0)
        XCTAssertEqual(try CLI.run(["nearest", "--fences", fences, "--positions", csv, "--max-line-bytes", "2097152"]).status, 0)
    }

    /// An NDJSON position nested 10,000 deep is one bad line (the scanner stops at 64 levels),
    /// not a stack overflow.
    func testDeeplyNestedPositionLineIsRefused() throws {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        let path = try CLI.temp(self, "p.ndjson", "{\"device\":\"a\",\"time\":0,\"lon\":0,\"lat\":0,\"x\":\(deep)}\n{\"device\":\"b\",\"time\":0,\"lon\":0,\"lat\":0}\n")
        let (positions, errors) = try PositionReader(path: path).readAll()
        XCTAssertEqual(positions.map(\.device), ["b"])
        XCTAssertEqual(errors.count, 1)
        XCTAssertTrue(errors[0].reason.contains("nested deeper than 64"), errors[0].reason)
    }

    // MARK: - The fence-side limits of the table (FenceStore.limits, the GeoJSON reader)

    /// A polygon of 10 million vertices is refused by the store's position limit before any
    /// copy or GEOS call.
    func testTenMillionVertexPolygonIsRefused() {
        var ring = [LonLat]()
        ring.reserveCapacity(10_000_001)
        for k in 0..<10_000_000 {
            let a = Double(k) / 10_000_000 * 2 * .pi
            ring.append(LonLat(lon: cos(a), lat: sin(a)))
        }
        ring.append(ring[0])
        var store = FenceStore()
        let results = store.add([.polygon(id: "huge", exterior: ring)], threads: 1)
        XCTAssertEqual(results[0].error?.kind, .limitExceeded, "\(String(describing: results[0].error))")
        XCTAssertEqual(store.count, 0)
    }

    /// A MultiPolygon of a million members is refused by the store's polygon limit.
    func testMillionMemberMultiPolygonIsRefused() {
        let square = Polygon(exterior: [LonLat(lon: 0, lat: 0), LonLat(lon: 0.001, lat: 0), LonLat(lon: 0, lat: 0.001), LonLat(lon: 0, lat: 0)])
        let fence = Fence(id: "many", shape: .polygons([Polygon](repeating: square, count: 1_000_000)))
        var store = FenceStore()
        let results = store.add([fence], threads: 1)
        XCTAssertEqual(results[0].error?.kind, .limitExceeded, "\(String(describing: results[0].error))")
        XCTAssertEqual(store.count, 0)
    }
}

extension CLI {
    /// Runs `fence` with standard output to /dev/null and returns its exit status, standard
    /// error and peak resident size, as the child reports it (`FENCE_REPORT_PEAK`: its own
    /// VmHWM; `wait4`'s rusage would include this test process's size at the spawn).
    static func runMeasured(_ args: [String]) throws -> (status: Int32, err: String, maxRSSKiB: Int) {
        let errPath = NSTemporaryDirectory() + "fence-err-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: errPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv = ([binary.path] + args).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        var env = ProcessInfo.processInfo.environment
        env["FENCE_REPORT_PEAK"] = "1"
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { envp.forEach { free($0) } }
        let rc = posix_spawn(&pid, binary.path, &actions, nil, argv, envp)
        guard rc == 0 else { throw NSError(domain: "posix_spawn", code: Int(rc)) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exited = status & 0x7F == 0
        let err = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        var peak = Int.max
        if let range = err.range(of: "fence: peak resident "), let k = Int(err[range.upperBound...].prefix { $0.isNumber }) {
            peak = k
        }
        return (exited ? (status >> 8) & 0xFF : 128 + (status & 0x7F), err, peak)
    }
}
