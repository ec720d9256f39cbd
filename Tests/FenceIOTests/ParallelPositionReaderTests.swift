import FenceEngine
@testable import FenceIO
import Foundation
import SeededRandom
import XCTest

/// Lines parsed side by side (`PositionReader.parseThreads`) against one line after another,
/// the obvious oracle: the same positions, errors (numbers and reasons), line numbers, counts
/// and end of input, for every thread count and batch limit, over inputs with every kind of
/// bad line.
final class ParallelPositionReaderTests: XCTestCase {
    struct Outcome: Equatable {
        var positions: [Position]
        var errors: [PositionLineError]
        var lines: [Int]
        var rejected: Int
        var lineNumber: Int
        var thrown: String?
        /// Positions each `read` call returned, in order: the batches `fence eval` evaluates.
        var calls: [Int] = []
        /// Blocks the reader parsed in more than one part: how, not what (not compared).
        var partedBlocks = 0

        static func == (a: Outcome, b: Outcome) -> Bool {
            a.positions == b.positions && a.errors == b.errors && a.lines == b.lines && a.rejected == b.rejected
                && a.lineNumber == b.lineNumber && a.thrown == b.thrown && a.calls == b.calls
        }
    }

    /// Reads `bytes` in batches of `limit` with `threads` parse workers (blocks of any size
    /// go to the workers when `threads` > 1).
    func read(_ bytes: [UInt8], threads: Int, limit: Int, maxLine: Int, columns: [String]?) throws -> Outcome {
        let path = NSTemporaryDirectory() + "parallel-positions-\(UUID().uuidString)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let reader = try PositionReader(path: path, maxLineBytes: maxLine, columns: columns)
        reader.parseThreads = threads
        reader.parallelMinimumLines = 1
        reader.recordsLines = true
        var outcome = Outcome(positions: [], errors: [], lines: [], rejected: 0, lineNumber: 0)
        do {
            var batch: [Position] = []
            while try reader.read(limit: limit, into: &batch, errors: &outcome.errors) {
                XCTAssertLessThanOrEqual(batch.count, limit)
                outcome.positions += batch
                outcome.calls.append(batch.count)
                batch.removeAll()
            }
            outcome.positions += batch
            outcome.calls.append(batch.count)
        } catch {
            outcome.thrown = "\(error)"
        }
        outcome.lines = reader.positionLines
        outcome.rejected = reader.rejected
        outcome.lineNumber = reader.lineNumber
        outcome.partedBlocks = reader.partedBlocks
        return outcome
    }

    /// A random input: a CSV (with a header, or headerless for `--columns`) or NDJSON, with good
    /// lines and blank, CRLF, overlong, NUL, quoted, short, long, non-UTF-8 and unparsable ones.
    static func input(_ rng: inout SplitMix64, format: Int) -> (bytes: [UInt8], columns: [String]?) {
        var text: [UInt8] = []
        func line(_ s: String) { text += Array(s.utf8) }
        switch format {
        case 0: line("device,time,lon,lat,accuracy\n")
        case 1: line("ts;id;y;x\r\n")
        default: break
        }
        let count = Int(rng.next() % 3000)
        for i in 0..<count {
            let device = "d\(rng.next() % 50)"
            let time = 1_600_000_000 + Double(i) + Double(rng.next() % 1000) / 1000
            let lon = Double(Int(rng.next() % 360_000_000)) / 1e6 - 180
            let lat = Double(Int(rng.next() % 180_000_000)) / 1e6 - 90
            var good: String
            switch format {
            case 0: good = "\(device),\(time),\(lon),\(lat),\(rng.next() % 2 == 0 ? "" : "12.5")"
            case 1: good = "\(ISO8601.format(time));\(device);\(lat);\(lon)"
            case 2: good = "{\"device\":\"\(device)\",\"t\":\(time),\"lon\":\(lon),\"lat\":\(lat)}"
            default: good = "\(device),\(time),\(lon),\(lat)"
            }
            switch rng.next() % 24 {
            case 0: line("\n")
            case 1: line("  \t\n")
            case 2: line(good + "\r\n")
            case 3: line(String(repeating: "x", count: 90) + "\n")  // over the 80-byte limit
            case 4: text += Array(good.utf8.prefix(5)) + [0] + Array(good.utf8.dropFirst(5)) + [10]
            case 5: line(good.replacingOccurrences(of: "d", with: "\"d\"\"q\"") + "\n")  // a quoted device
            case 6: line(String(good.dropLast(4)) + "\n")
            case 7: line(good + ",extra\n")
            case 8: text += [0xFF, 0xFE] + Array(good.utf8) + [10]
            case 9: line(good.replacingOccurrences(of: "16", with: "1x6") + "\n")
            case 10: line("\"unclosed,1,2,3\n")
            default: line(good + "\n")
            }
        }
        // The last line without a line feed: good, or over the limit.
        switch rng.next() % 3 {
        case 0: line("d9,1600000000,1,2")
        case 1: line(String(repeating: "y", count: 85))
        default: break
        }
        return (text, format == 3 ? ["device", "time", "lon", "lat"] : nil)
    }

    func testSameAsOneThreadOverSeeds() throws {
        var parallelBlocks = 0
        var parted = 0
        for seed in UInt64(1)...24 {
            var rng = SplitMix64(seed: seed &* 7919)
            let (bytes, columns) = Self.input(&rng, format: Int(seed % 4))
            for limit in [7, 1000, 1 << 20] {
                let serial = try read(bytes, threads: 1, limit: limit, maxLine: 80, columns: columns)
                for threads in [2, 3] {
                    let parallel = try read(bytes, threads: threads, limit: limit, maxLine: 80, columns: columns)
                    XCTAssertEqual(parallel.thrown, serial.thrown, "seed \(seed) limit \(limit) threads \(threads)")
                    XCTAssertEqual(parallel.positions, serial.positions, "seed \(seed) limit \(limit) threads \(threads)")
                    XCTAssertEqual(parallel.errors, serial.errors, "seed \(seed) limit \(limit) threads \(threads)")
                    XCTAssertEqual(parallel.lines, serial.lines, "seed \(seed) limit \(limit) threads \(threads)")
                    XCTAssertEqual(parallel.rejected, serial.rejected, "seed \(seed) limit \(limit) threads \(threads)")
                    XCTAssertEqual(parallel.lineNumber, serial.lineNumber, "seed \(seed) limit \(limit) threads \(threads)")
                    XCTAssertEqual(parallel.calls, serial.calls, "seed \(seed) limit \(limit) threads \(threads)")
                    parallelBlocks += 1
                    parted += parallel.partedBlocks
                    XCTAssertEqual(serial.partedBlocks, 0)
                }
                XCTAssertGreaterThan(serial.errors.count, 0, "seed \(seed): the input was meant to hold bad lines")
            }
        }
        XCTAssertEqual(parallelBlocks, 24 * 3 * 2)
        // The workers ran: most reads of a few thousand lines were cut in parts.
        XCTAssertGreaterThan(parted, 24 * 3)
    }

    /// Parts parsed on several workers: a block of thousands of lines is cut in parts (and
    /// the result still is one thread's), and an input of blank lines only is still empty.
    func testLargeBlockAndEmptyInput() throws {
        var rng = SplitMix64(seed: 99)
        var text = "device,time,lon,lat\n"
        for i in 0..<50_000 { text += "d\(rng.next() % 100),\(1_600_000_000 + i),\(Double(i % 360) - 179.5),\(Double(i % 170) - 85)\n" }
        let bytes = Array(text.utf8)
        let one = try read(bytes, threads: 1, limit: 1 << 20, maxLine: 1 << 20, columns: nil)
        let two = try read(bytes, threads: 2, limit: 1 << 20, maxLine: 1 << 20, columns: nil)
        XCTAssertEqual(one.positions.count, 50_000)
        XCTAssertEqual(two, one)
        XCTAssertGreaterThan(two.partedBlocks, 0)

        let blank = Array("device,time,lon,lat\n\n  \n\t\n".utf8)
        let blankOne = try read(blank, threads: 1, limit: 10, maxLine: 100, columns: nil)
        let blankTwo = try read(blank, threads: 2, limit: 10, maxLine: 100, columns: nil)
        XCTAssertEqual(blankTwo, blankOne)
        XCTAssertEqual(try read(Array("\n \n".utf8), threads: 2, limit: 10, maxLine: 100, columns: nil).thrown,
                       try read(Array("\n \n".utf8), threads: 1, limit: 10, maxLine: 100, columns: nil).thrown)
    }

    /// Records of delimiters only (`,,,`, what a spreadsheet's "save as CSV" writes after the
    /// data, CRLF, any count of them) carry no fix and are skipped as blank lines are, not
    /// counted bad (an outside audit: three good fixes and two such rows stopped `eval` at
    /// --max-bad with no event). A row with a value anywhere is still judged.
    func testRowsOfEmptyCellsAreBlankLines() throws {
        let text = "device,time,lon,lat\r\nd1,10,1,2\r\n,,,\r\n;;;\r\n,,\r\n,,,,,\r\n , ,\t,\r\nd2,11,3,4\r\n,,,5\r\n,1,,\r\n"
        for threads in [1, 2] {
            let got = try read(Array(text.utf8), threads: threads, limit: 100, maxLine: 1000, columns: nil)
            XCTAssertEqual(got.positions.map(\.device), ["d1", "d2"])
            XCTAssertEqual(got.errors.map(\.line), [4, 9, 10], "\(got.errors)")
        }
    }

    /// A slow pipe that stays open: a call returns as soon as the lines its limit asks for have
    /// come, on one thread and on two (the parallel path once read until its buffer was full,
    /// so a stream's first fixes waited for megabytes more). The writer closes the pipe after
    /// 10 s at the latest, so a regression fails the test instead of hanging it.
    func testOpenPipeReturnsOnceLimitLinesCome() throws {
        for threads in [1, 2] {
            var ends: [Int32] = [0, 0]
            XCTAssertEqual(pipe(&ends), 0)
            let (readEnd, writeEnd) = (ends[0], ends[1])
            func write(_ s: String) { _ = Array(s.utf8).withUnsafeBytes { Foundation.write(writeEnd, $0.baseAddress!, $0.count) } }
            write("device,time,lon,lat\nd1,1,1,1\nd2,2,2,2\nd3,3,3,3\n")
            nonisolated(unsafe) let reader = PositionReader(fileDescriptor: readEnd)
            reader.parseThreads = threads
            reader.parallelMinimumLines = 1
            let done = DispatchSemaphore(value: 0)
            nonisolated(unsafe) var got: [Position] = []
            nonisolated(unsafe) var more: Bool?
            Thread.detachNewThread {
                var errors: [PositionLineError] = []
                more = try? reader.read(limit: 5, into: &got, errors: &errors)
                done.signal()
            }
            // The first three do not meet the limit: the call waits for two more.
            XCTAssertEqual(done.wait(timeout: .now() + 0.3), .timedOut, "threads \(threads)")
            write("d4,4,4,4\nd5,5,5,5\n")
            let returned = done.wait(timeout: .now() + 10) == .success
            close(writeEnd)
            if !returned { done.wait() }
            close(readEnd)
            XCTAssertTrue(returned, "threads \(threads): the call waited for input its limit did not need")
            XCTAssertEqual(more, true, "threads \(threads)")
            XCTAssertEqual(got.map(\.device), ["d1", "d2", "d3", "d4", "d5"], "threads \(threads)")
        }
    }

    /// An unterminated last line over the limit is refused with its number whatever its length,
    /// even one that is an exact multiple of the buffer (each filled buffer was dropped and
    /// nothing of it was left at the end: it once vanished without a word).
    func testOverlongLastLineOfAnyLengthIsReported() throws {
        let probe = PositionReader(fileDescriptor: -1, maxLineBytes: 100)
        let size = probe.bufferBytes
        for threads in [1, 2] {
            for length in [size - 1, size, size + 1, 2 * size - 1, 2 * size, 2 * size + 1, 3 * size] {
                let bytes = Array("device,time,lon,lat\nd1,1,1,1\n".utf8) + [UInt8](repeating: 120, count: length)
                let outcome = try read(bytes, threads: threads, limit: 1000, maxLine: 100, columns: nil)
                XCTAssertNil(outcome.thrown)
                XCTAssertEqual(outcome.positions.count, 1)
                XCTAssertEqual(outcome.errors, [PositionLineError(line: 3, reason: "line longer than 100 bytes")], "threads \(threads) length \(length)")
                XCTAssertEqual(outcome.rejected, 1, "threads \(threads) length \(length)")
                XCTAssertEqual(outcome.lineNumber, 3, "threads \(threads) length \(length)")
            }
        }
    }
}
