import FenceEngine
import Foundation
import XCTest

@testable import FenceNATS

/// The seeds and every kept crasher of the `nats` fuzz target (Tests/Fuzz/corpus/nats,
/// Tests/Fuzz/crashers/nats) through the decoders it drives, in the ordinary test build: a
/// fixed crasher stays fixed without building the fuzz package.
final class MessageFuzzRegressionTests: XCTestCase {
    static let fuzzFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz")

    func inputs() -> [URL] {
        var out: [URL] = []
        for folder in ["corpus", "crashers"] {
            let dir = Self.fuzzFolder.appendingPathComponent(folder).appendingPathComponent("nats")
            let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
            out += names.sorted().map { dir.appendingPathComponent($0) }
        }
        return out
    }

    func testMessageInputs() throws {
        let files = inputs()
        XCTAssertGreaterThanOrEqual(files.count, 10, "the seeds are in \(Self.fuzzFolder.path)")
        var decoded = (fixes: 0, changes: 0, checkpoints: 0, heads: 0)
        var engine = EventEngine()
        _ = engine.add([.circle(id: "port", lon: 0, lat: 0, radius: 1000, group: "harbor")], threads: 1)
        for file in files {
            let bytes = [UInt8](try Data(contentsOf: file))
            let name = file.lastPathComponent
            var fixes: [Position] = []
            if (try? bytes.withUnsafeBytes { try FixBatch.decode($0, into: &fixes) }) != nil {
                decoded.fixes += 1
                var stream = PartitionStream(engine: engine, lateness: 30)
                _ = stream.receive(fixes, sequence: 1)
                var errors: [String] = []
                _ = stream.apply(FenceChange(.flush), sequence: 2, errors: &errors)
                let c = stream.counters
                XCTAssertEqual(c.applied + c.late + c.rejected + c.duplicates, c.received, name)
            }
            if let change = try? bytes.withUnsafeBytes({ try FenceChange(decoding: $0) }) {
                decoded.changes += 1
                XCTAssertEqual(try change.encoded().withUnsafeBytes { try FenceChange(decoding: $0) }, change, name)
                var stream = PartitionStream(engine: engine, lateness: 30)
                var errors: [String] = []
                XCTAssertNotNil(stream.apply(change, sequence: 1, errors: &errors), name)
            }
            if let cp = try? PartitionCheckpoint(decoding: bytes) {
                decoded.checkpoints += 1
                XCTAssertEqual(try PartitionCheckpoint(decoding: cp.encoded()).encoded(), cp.encoded(), name)
                let (stream, _) = try PartitionStream.restored(from: cp, engine: engine, lateness: 30, step: 1)
                XCTAssertEqual(stream.replayFrom, cp.replayFrom, name)
            }
            if let head = try? CheckpointStore.Head(decoding: bytes) {
                decoded.heads += 1
                XCTAssertEqual(try CheckpointStore.Head(decoding: head.encoded()).encoded(), head.encoded(), name)
            }
        }
        // Every kind among the seeds (the empty fix batch is a tick, and decodes).
        XCTAssertGreaterThan(decoded.fixes, 0)
        XCTAssertGreaterThan(decoded.changes, 0)
        XCTAssertGreaterThan(decoded.checkpoints, 0)
        XCTAssertGreaterThan(decoded.heads, 0)
    }

    /// Records that pass their checks but could not have been written, refused with a reason
    /// instead of trapping later (each was a trap before: a replay start of 0 underflowed on
    /// restore, a counter past Int.max trapped in the conversion, a head's length past its
    /// chunks made the reader reserve it).
    func testImpossibleRecordsAreRefused() throws {
        let good = PartitionStream(engine: EventEngine(), lateness: 30).checkpoint(partition: 0, fingerprint: 1, owner: "w")
        var zero = good
        zero.replayFrom = 0
        var ahead = good
        ahead.lastSequence = 5
        ahead.replayFrom = 7
        var nan = good
        nan.horizon = .nan
        // The first counter set to 2^64 - 1, the CRC made right: header 25 bytes, then
        // partition (4), three sequences (24) and two times (16) before the counters.
        var huge = good.encoded()
        for i in 69..<77 { huge[i] = 0xFF }
        let crc = CRC32.checksum(huge[25...])
        for k in 0..<4 { huge[21 + k] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(k))) }
        for (bad, why) in [(zero.encoded(), "replay start"), (ahead.encoded(), "replay start"), (nan.encoded(), "NaN"), (huge, "counter")] {
            XCTAssertThrowsError(try PartitionCheckpoint(decoding: bad)) { error in
                XCTAssertTrue("\(error)".contains(why), "\(error)")
            }
        }
        XCTAssertNoThrow(try PartitionCheckpoint(decoding: good.encoded()))
        let head = CheckpointStore.Head(
            slot: 0, chunks: 1, length: UInt64(CheckpointStore.chunkSize) + 1, crc: 0, lastSequence: 1, replayFrom: 1, lastChangeSequence: 0,
            owner: "w", written: 0)
        XCTAssertThrowsError(try CheckpointStore.Head(decoding: head.encoded()))
        var fits = head
        fits.length = UInt64(CheckpointStore.chunkSize)
        XCTAssertNoThrow(try CheckpointStore.Head(decoding: fits.encoded()))
    }
}
