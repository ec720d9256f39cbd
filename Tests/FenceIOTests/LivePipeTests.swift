import FenceEngine
@testable import FenceIO
import Foundation
import XCTest

/// Positions from a live pipe (a feed that pauses): with `maxWait` a read hands over what has
/// arrived instead of waiting for a full batch or the end of input, and the commands' output
/// follows the input as it comes.
final class LivePipeTests: XCTestCase {
    /// A pipe the test writes to and a reader of its other end.
    func pipeReader(threads: Int, wait: Double?) -> (reader: PositionReader, write: (String) -> Void, close: () -> Void) {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        addTeardownBlock { close(fds[0]) }
        let reader = PositionReader(fileDescriptor: fds[0])
        reader.parseThreads = threads
        reader.parallelMinimumLines = 2
        reader.maxWait = wait
        var open = true
        let write = { (text: String) in
            var t = text
            _ = t.withUTF8 { Foundation.write(fds[1], $0.baseAddress!, $0.count) }
        }
        return (reader, write, { if open { close(fds[1]); open = false } })
    }

    /// One `read` of up to 1,000 positions on another thread, and the seconds it took; a read
    /// still blocked after 10 s fails the test and is unblocked by closing the pipe (so a
    /// broken wait fails instead of hanging the run).
    func timedRead(_ reader: PositionReader, into got: inout [Position], close: () -> Void) -> (more: Bool, seconds: Double) {
        nonisolated(unsafe) let reader = reader
        nonisolated(unsafe) var result: (Bool, [Position]) = (false, [])
        let done = DispatchSemaphore(value: 0)
        let t0 = Date()
        DispatchQueue.global().async {
            var batch: [Position] = []
            var errors: [PositionLineError] = []
            let more = (try? reader.read(limit: 1000, into: &batch, errors: &errors)) ?? false
            result = (more, batch)
            done.signal()
        }
        if done.wait(timeout: .now() + 10) == .timedOut {
            XCTFail("a read with maxWait still blocked after 10 s")
            close()
            done.wait()
        }
        got += result.1
        return (result.0, Date().timeIntervalSince(t0))
    }

    /// On one and two threads: a read returns the lines that arrived once the wait is over
    /// (not blocking for the rest of the batch), nothing but `true` when nothing came, keeps a
    /// partial line for the next call, and gives `false` at the end; the positions are those
    /// of the same text read from a file.
    func testReadsHandOverWhatArrivedWithinTheWait() throws {
        for threads in [1, 2] {
            let (reader, write, close) = pipeReader(threads: threads, wait: 0.2)
            var got: [Position] = []
            var errors: [PositionLineError] = []
            write("device,time,lon,lat\nd1,1,0,0\nd2,2,1,1\nd3,3,2,2\n")
            let first = timedRead(reader, into: &got, close: close)
            XCTAssertTrue(first.more)
            XCTAssertEqual(got.map(\.device), ["d1", "d2", "d3"], "threads \(threads)")
            // Nothing arrives: true, nothing taken, after about the wait.
            let idle = timedRead(reader, into: &got, close: close)
            XCTAssertTrue(idle.more)
            XCTAssertEqual(got.count, 3)
            XCTAssertGreaterThanOrEqual(idle.seconds, 0.15, "threads \(threads)")
            // Half a line waits for its other half.
            write("d4,4,3,")
            XCTAssertTrue(timedRead(reader, into: &got, close: close).more)
            XCTAssertEqual(got.count, 3, "threads \(threads)")
            write("3\nd5,5,4,4\n")
            close()
            while try reader.read(limit: 1000, into: &got, errors: &errors) {}
            XCTAssertEqual(errors, [])
            XCTAssertEqual(got.map(\.device), ["d1", "d2", "d3", "d4", "d5"], "threads \(threads)")
            XCTAssertEqual(got.map(\.lat), [0, 1, 2, 3, 4])
        }
    }

    /// Without a wait a read blocks until its batch is full or the input ends (the default:
    /// batches do not depend on when lines arrive).
    func testWithoutAWaitAReadWaitsForItsBatch() throws {
        let (opened, write, close) = pipeReader(threads: 1, wait: nil)
        write("device,time,lon,lat\nd1,1,0,0\n")
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var count = -1
        nonisolated(unsafe) let reader = opened
        DispatchQueue.global().async {
            var got: [Position] = []
            var errors: [PositionLineError] = []
            _ = try? reader.read(limit: 2, into: &got, errors: &errors)
            count = got.count
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 0.5), .timedOut)
        write("d2,2,0,0\n")
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(count, 2)
        close()
    }

    /// The `fence` process with standard input from a pipe the test feeds line by line.
    final class Feed: @unchecked Sendable {
        let process = Process()
        let input = Pipe()
        private let lock = NSLock()
        private var out = Data()
        private var err = Data()

        init(_ args: [String]) throws {
            process.executableURL = CLI.binary
            process.arguments = args
            process.standardInput = input
            let o = Pipe()
            let e = Pipe()
            process.standardOutput = o
            process.standardError = e
            o.fileHandleForReading.readabilityHandler = { [self] h in
                let d = h.availableData
                lock.lock()
                out.append(d)
                lock.unlock()
            }
            e.fileHandleForReading.readabilityHandler = { [self] h in
                let d = h.availableData
                lock.lock()
                err.append(d)
                lock.unlock()
            }
            try process.run()
        }

        var output: String {
            lock.lock()
            defer { lock.unlock() }
            return String(decoding: out, as: UTF8.self)
        }

        var errors: String {
            lock.lock()
            defer { lock.unlock() }
            return String(decoding: err, as: UTF8.self)
        }

        /// Writes to the process's input; a process that already exited (a failure the test
        /// then reports) is no crash of the test: SIGPIPE is ignored and the write's error too.
        func send(_ text: String) {
            signal(SIGPIPE, SIG_IGN)
            try? input.fileHandleForWriting.write(contentsOf: Data(text.utf8))
        }

        /// Waits (up to `seconds`) until the output holds `text`.
        func waitFor(_ text: String, seconds: Double = 30) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if output.contains(text) { return true }
                Thread.sleep(forTimeInterval: 0.02)
            }
            return output.contains(text)
        }

        /// Closes the input and waits for the exit status.
        func finish() -> Int32 {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
            Thread.sleep(forTimeInterval: 0.1)  // the last reads of the output pipes
            return process.terminationStatus
        }
    }

    /// `eval --max-wait`, `contains` and `nearest` answer each fix of a live feed while the
    /// feed is still open (eval's enter, held at its batch's last millisecond, goes out once
    /// the input is idle), and the whole output equals that of the same lines from a file.
    /// `eval` without `--max-wait` writes nothing before the input ends.
    func testCommandsAnswerALiveFeedAsItComes() throws {
        let fences = try CLI.temp(self, "fences.geojson", CLI.fences)
        let header = "device,time,lon,lat\n"
        let first = "v1,1700000000,0,0\n"
        let second = "v1,1700000060,0.03,0.01\n"
        let cases: [(args: [String], firstOut: String, secondOut: String)] = [
            (["eval", "--max-wait", "0.3"], #""fence":"port","group":"harbor","event":"enter""#, #""fence":"yard","event":"enter""#),
            (["contains"], "v1,2023-11-14T22:13:20.000Z,port", "v1,2023-11-14T22:14:20.000Z,yard"),
            (["nearest"], "v1,2023-11-14T22:13:20.000Z,port", "v1,2023-11-14T22:14:20.000Z,yard"),
        ]
        for c in cases {
            let args = c.args + ["--fences", fences, "--positions", "-", "--threads", "2"]
            let feed = try Feed(args)
            feed.send(header + first)
            XCTAssertTrue(feed.waitFor(c.firstOut), "\(c.args): \(feed.output) / \(feed.errors)")
            feed.send(second)
            XCTAssertTrue(feed.waitFor(c.secondOut), "\(c.args): \(feed.output) / \(feed.errors)")
            XCTAssertEqual(feed.finish(), 0, "\(c.args): \(feed.errors)")
            let whole = try CLI.run(args, stdin: header + first + second)
            XCTAssertEqual(feed.output, whole.out, "\(c.args)")
        }
        let batchOnly = try Feed(["eval", "--fences", fences, "--positions", "-"])
        batchOnly.send(header + first)
        XCTAssertFalse(batchOnly.waitFor("enter", seconds: 1.5), batchOnly.output)
        XCTAssertEqual(batchOnly.finish(), 0, batchOnly.errors)
        XCTAssertTrue(batchOnly.output.contains(#""fence":"port","group":"harbor","event":"enter""#), batchOnly.output)
        // A bad line first, then good ones, in separate batches: judged on all of them (1 of
        // 201 is under --max-bad's 1%), not on the first batch alone (1 of 1), which stopped
        // the run before the good lines were read.
        let early = try Feed(["contains", "--fences", fences, "--positions", "-", "--max-wait", "0.2"])
        early.send(header + "garbage\n")
        Thread.sleep(forTimeInterval: 0.6)
        early.send((0..<200).map { "v\($0),1700000000,0,0\n" }.joined())
        XCTAssertTrue(early.waitFor("v199,"), early.output + early.errors)
        XCTAssertEqual(early.finish(), 0, early.errors)
        XCTAssertEqual(early.output.split(separator: "\n").count, 200)
        // --max-wait 0 takes what has arrived, and on a file that is everything.
        let file = try CLI.temp(self, "p.csv", header + first + second)
        for command in ["contains", "nearest"] {
            let zero = try CLI.run([command, "--fences", fences, "--positions", file, "--max-wait", "0"])
            XCTAssertEqual(zero.status, 0, zero.err)
            XCTAssertEqual(zero.out, try CLI.run([command, "--fences", fences, "--positions", file]).out)
        }
        // Idle before any batch: eval's --output, opened only with the first batch, is left as
        // it was when the header is then refused.
        let previous = try CLI.temp(self, "events.ndjson", "earlier run\n")
        let refused = try Feed(["eval", "--fences", fences, "--positions", "-", "--max-wait", "0.1", "--output", previous])
        Thread.sleep(forTimeInterval: 0.5)
        refused.send("bogus,header\n")
        XCTAssertEqual(refused.finish(), 1, refused.errors)
        XCTAssertEqual(try String(contentsOfFile: previous, encoding: .utf8), "earlier run\n")
        // The option's values.
        for bad in ["-1", "x"] {
            XCTAssertEqual(try CLI.run(["contains", "--fences", fences, "--positions", "-", "--max-wait", bad], stdin: header).status, 2)
        }
        XCTAssertEqual(try CLI.run(["contains", "--fences", fences, "--positions", "-", "--max-wait", "off"], stdin: header + first).status, 0)
    }
}
