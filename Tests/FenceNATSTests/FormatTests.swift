import FenceEngine
import SeededRandom
import Foundation
import XCTest

@testable import FenceNATS

final class FormatTests: XCTestCase {
    func testFixBatchRoundTripAndRefusals() throws {
        let fixes = [
            Position(device: "truck 7/α", time: 1_700_000_000.25, lon: -74.0, lat: 40.7, accuracy: 12.5, coord: .gcj02),
            Position(device: "truck 7/α", time: 1_700_000_010, lon: 180, lat: -90),
            Position(device: "truck 7/α", time: .nan, lon: 1, lat: 2, coord: .bd09ll),
        ]
        let bytes = FixBatch.encode(device: "truck 7/α", fixes: fixes)
        XCTAssertEqual(bytes.count, 9 + "truck 7/α".utf8.count + 3 * FixBatch.bytesPerFix)
        var out: [Position] = []
        XCTAssertEqual(try bytes.withUnsafeBytes { try FixBatch.decode($0, into: &out) }, 3)
        XCTAssertEqual(out.count, 3)
        XCTAssertEqual(out[0], fixes[0])
        XCTAssertEqual(out[1], fixes[1])
        XCTAssertTrue(out[2].time.isNaN)
        XCTAssertEqual(out[2].coord, .bd09ll)
        // Empty payload: a tick.
        XCTAssertEqual(try [UInt8]().withUnsafeBytes { try FixBatch.decode($0, into: &out) }, 0)
        // Truncated, padded, bad magic, bad coordinate code: refused whole, nothing appended.
        for bad in [Array(bytes.dropLast()), bytes + [0], [0x46, 0x59] + bytes.dropFirst(2), Array(bytes.dropLast()) + [9]] {
            var into: [Position] = []
            XCTAssertThrowsError(try bad.withUnsafeBytes { try FixBatch.decode($0, into: &into) })
            XCTAssertTrue(into.isEmpty)
        }
        // A device id that is not UTF-8 (a producer's Latin-1 "ÿ"): refused, not repaired to
        // U+FFFD, which made every such device one.
        var latin1 = FixBatch.encode(device: "dev?", fixes: [fixes[1]])
        latin1[5 + 3] = 0xFF  // magic (2), version (1), id length (2), then the id
        var into: [Position] = []
        XCTAssertThrowsError(try latin1.withUnsafeBytes { try FixBatch.decode($0, into: &into) }) {
            XCTAssertTrue("\($0)".contains("not valid UTF-8"), "\($0)")
        }
        XCTAssertTrue(into.isEmpty)
    }

    func testFenceChangeRoundTrip() throws {
        let changes: [FenceChange] = [
            FenceChange(.add(geoJSON: Array("{\"type\":\"FeatureCollection\",\"features\":[]}".utf8)), previous: 7),
            FenceChange(.remove(ids: ["a", "b,c", ""]), previous: 0), FenceChange(.removeGroups(["g"]), previous: 99),
            FenceChange(.removeAll, previous: 1), FenceChange(.flush, previous: 2),
        ]
        for c in changes {
            let bytes = c.encoded()
            XCTAssertEqual(try bytes.withUnsafeBytes { try FenceChange(decoding: $0) }, c)
            XCTAssertThrowsError(try Array(bytes.dropLast()).withUnsafeBytes { try FenceChange(decoding: $0) })
            XCTAssertThrowsError(try (bytes + [1]).withUnsafeBytes { try FenceChange(decoding: $0) })
        }
    }

    /// A removal naming ids or groups no loaded fence has removes what it can and reports the
    /// rest, which each worker logs (`fence change` cannot check: only workers know fences).
    /// An add checked before it is published: a file without any fence is a problem (it would
    /// sit in the stream and change nothing); one good fence is none.
    func testAnAddWithoutFencesIsAProblem() {
        let empty = Array(#"{"type":"FeatureCollection","features":[]}"#.utf8)
        XCTAssertEqual(FenceChange.problems(adding: empty), ["it holds no fence: nothing to add"])
        let one = Array(#"{"type":"Feature","properties":{"id":"a","radius":50},"geometry":{"type":"Point","coordinates":[5,5]}}"#.utf8)
        XCTAssertEqual(FenceChange.problems(adding: one), [])
    }

    func testRemovalOfUnknownFencesIsReported() throws {
        var engine = EventEngine()
        _ = engine.add([.circle(id: "a", lon: 0, lat: 0, radius: 100, group: "g"), .circle(id: "b", lon: 1, lat: 1, radius: 100)], threads: 1)
        var errors: [String] = []
        _ = FenceChange(.remove(ids: ["a", "typo"])).apply(to: &engine, errors: &errors)
        XCTAssertEqual(errors, ["remove: no fence \"typo\" is loaded"])
        XCTAssertNil(engine.store.handle(id: "a"))
        errors = []
        _ = FenceChange(.removeGroups(["g", "h"])).apply(to: &engine, errors: &errors)
        XCTAssertEqual(errors, ["remove-group: no loaded fence is in group \"g\"", "remove-group: no loaded fence is in group \"h\""])
        errors = []
        _ = FenceChange(.remove(ids: ["b"])).apply(to: &engine, errors: &errors)
        XCTAssertEqual(errors, [])
        XCTAssertEqual(engine.store.count, 0)

        // Ids and groups are their bytes: the other spelling of a loaded one (NFD against NFC)
        // is unknown, reported, and removes nothing.
        _ = engine.add([.circle(id: "caf\u{E9}", lon: 0, lat: 0, radius: 100, group: "caf\u{E9}")], threads: 1)
        errors = []
        _ = FenceChange(.removeGroups(["cafe\u{301}"])).apply(to: &engine, errors: &errors)
        _ = FenceChange(.remove(ids: ["cafe\u{301}"])).apply(to: &engine, errors: &errors)
        XCTAssertEqual(errors.map { Array($0.utf8) }, [
            Array("remove-group: no loaded fence is in group \"cafe\u{301}\"".utf8),
            Array("remove: no fence \"cafe\u{301}\" is loaded".utf8),
        ])
        XCTAssertEqual(engine.store.count, 1)

        // Quoted as JSON strings: an id holding a quote, a backslash or a control character
        // reads as one name.
        errors = []
        _ = FenceChange(.remove(ids: ["a\" is loaded, \"b", "c\\d\te"])).apply(to: &engine, errors: &errors)
        _ = FenceChange(.removeGroups(["x\"y"])).apply(to: &engine, errors: &errors)
        XCTAssertEqual(errors, [
            #"remove: no fence "a\" is loaded, \"b" is loaded"#,
            #"remove: no fence "c\\d\te" is loaded"#,
            #"remove-group: no loaded fence is in group "x\"y""#,
        ])
    }

    /// The acknowledgement subject read in place gives what splitting it into strings gives
    /// (the oracle below, the parse it replaced, taking decimal digits only): both forms, the
    /// numbers' limits, and subjects a token short or long, empty tokens and junk; the stored
    /// time is the token after the sequences, nil when that one is not a number.
    func testAckSubjectSequencesEqualTheSplitParse() {
        func oracle(_ reply: String) -> (UInt64, UInt64, UInt64, UInt64?)? {
            guard reply.hasPrefix("$JS.ACK.") else { return nil }
            let t = reply.split(separator: ".", omittingEmptySubsequences: false)
            let base = t.count == 9 ? 4 : t.count >= 12 ? 6 : -1
            func n(_ s: Substring) -> UInt64? { s.allSatisfy { $0.isASCII && $0.isNumber } ? UInt64(s) : nil }
            guard base > 0, let d = n(t[base]), let s = n(t[base + 1]), let c = n(t[base + 2]) else { return nil }
            return (s, c, d, t[base + 3].isEmpty ? nil : n(t[base + 3]))
        }
        var subjects = [
            "$JS.ACK.FENCE_FIXES.p0.1.4521.4400.1700000000000000000.12",
            "$JS.ACK.dom.acchash.FENCE_FIXES.p0.2.18446744073709551615.7.1700000000000000000.0.token",
            "$JS.ACK.S.C.1.18446744073709551616.7.1.0", "$JS.ACK.S.C.1..7.1.0", "$JS.ACK.S.C.+1.2.3.4.5",
            "$JS.ACK.S.C.1.2.3.4", "$JS.ACK.S.C.1.2.3.4.5.6", "$JS.ACK.", "$JS.ACK", "_INBOX.abc.1", "",
        ]
        var rng = SplitMix64(seed: 77)
        let alphabet = Array("0123456789..x+-")
        for _ in 0..<5_000 {
            let k = Int(rng.next() % 14)
            var parts = ["$JS", "ACK"]
            for _ in 0..<k {
                let length = Int(rng.next() % 4)
                parts.append(String((0..<length).map { _ in rng.next() % 3 == 0 ? alphabet[Int(rng.next() % UInt64(alphabet.count))] : "7" }))
            }
            subjects.append(parts.joined(separator: "."))
        }
        for s in subjects {
            let got = Array(s.utf8).withUnsafeBufferPointer { NATSMessage.ackSequences($0) }
            let want = oracle(s)
            XCTAssertEqual(got?.stream, want?.0, s)
            XCTAssertEqual(got?.consumer, want?.1, s)
            XCTAssertEqual(got?.delivered, want?.2, s)
            XCTAssertEqual(got?.stored, want?.3, s)
        }
        let first = Array(subjects[0].utf8).withUnsafeBufferPointer { NATSMessage.ackSequences($0) }
        XCTAssertEqual(first?.stream, 4521)
        XCTAssertEqual(first?.consumer, 4400)
        XCTAssertEqual(first?.delivered, 1)
        XCTAssertEqual(first?.stored, 1_700_000_000_000_000_000)
    }

    /// The partition's clock (event time, late fixes) for `fence status` is a record of its
    /// own; heads stay version 1, the form every worker reads (a worker before clocks can take
    /// over a partition from one with them).
    func testCheckpointClockAndHeadVersion() throws {
        let head = CheckpointStore.Head(
            slot: 1, chunks: 2, length: 600_000, crc: 7, lastSequence: 9, replayFrom: 5, lastChangeSequence: 3, owner: "w", written: 1e9)
        XCTAssertEqual(head.encoded()[9], 1)
        for (t, late) in [(1.7e9 + 0.25, UInt64(12)), (-Double.infinity, 0), (253_402_300_799, UInt64.max)] {
            let clock = CheckpointStore.Clock(eventTime: t, late: late)
            let bytes = clock.encoded()
            XCTAssertEqual(CheckpointStore.Clock(decoding: bytes), clock)
            XCTAssertNil(CheckpointStore.Clock(decoding: Array(bytes.dropLast())))
            XCTAssertNil(CheckpointStore.Clock(decoding: bytes + [0]))
        }
        XCTAssertNil(CheckpointStore.Clock(decoding: CheckpointStore.Clock(eventTime: .nan, late: 0).encoded()))
        XCTAssertNil(CheckpointStore.Clock(decoding: head.encoded()))
    }

    func testCheckpointRoundTripAndDamageIsRefused() throws {
        var engine = EventEngine()
        _ = engine.add([.circle(id: "depot", lon: 0, lat: 0, radius: 500)])
        _ = engine.evaluate([Position(device: "d1", time: 10, lon: 0, lat: 0), Position(device: "d2", time: 11, lon: 1, lat: 1)])
        var counters = PartitionStream.Counters()
        counters.received = 5
        counters.events = 1
        counters.badMessages = 2
        let cp = PartitionCheckpoint(
            partition: 3, lastSequence: 1234, replayFrom: 1200, lastChangeSequence: 17, horizon: 99.5, latestSeen: 160,
            counters: counters, fingerprint: 0xDEAD_BEEF, owner: "host:1:x", snapshot: engine.snapshot())
        let bytes = cp.encoded()
        XCTAssertEqual(try PartitionCheckpoint(decoding: bytes), cp)
        XCTAssertThrowsError(try PartitionCheckpoint(decoding: Array(bytes.dropLast())))
        var flipped = bytes
        flipped[bytes.count / 2] ^= 0x10
        XCTAssertThrowsError(try PartitionCheckpoint(decoding: flipped)) { error in
            XCTAssertTrue("\(error)".contains("checksum"), "\(error)")
        }
        XCTAssertThrowsError(try PartitionCheckpoint(decoding: Array("FENCESTATE".utf8) + bytes.dropFirst(9)))
    }

    func testDeviceTokensAreSingleSubjectTokens() {
        XCTAssertEqual(DeviceToken.encode("truck-7"), "truck-7")
        XCTAssertEqual(DeviceToken.encode("366952790"), "366952790")
        XCTAssertEqual(DeviceToken.encode("a.b"), "_612e62")
        XCTAssertEqual(DeviceToken.encode("_tick"), "_5f7469636b")
        XCTAssertEqual(DeviceToken.encode(""), "_")
        for id in ["a b", "*", ">", "x.y.z", "émile", "_", "tab\there"] {
            let t = DeviceToken.encode(id)
            XCTAssertFalse(t.contains { $0 == "." || $0 == "*" || $0 == ">" || $0.isWhitespace }, t)
            XCTAssertTrue(t.hasPrefix("_"))
            XCTAssertNotEqual(t, "_tick")
        }
        let topology = Topology(partitions: 4)
        XCTAssertEqual(topology.mapping, "\"fix.*\": \"fix.{{partition(4,1)}}.{{wildcard(1)}}\"")
        XCTAssertEqual(topology.subject(device: "a.b"), "fix._612e62")
        XCTAssertEqual(topology.partitionFilter(2), "fix.2.*")
        XCTAssertEqual(topology.fixStreamSubjects, ["fix.0.*", "fix.1.*", "fix.2.*", "fix.3.*", "fix.ctl.fences"])
        XCTAssertEqual(Topology(prefix: "gps", partitions: 1).fixStreamSubjects, ["gps.0.*", "gps.ctl.fences"])
    }

    func testEventMessageIDsFollowTheirContent() {
        let a = EventOutbox.messageID(partition: 1, cause: 10, chunk: 0, bytes: Array("x\n".utf8))
        XCTAssertEqual(a, EventOutbox.messageID(partition: 1, cause: 10, chunk: 0, bytes: Array("x\n".utf8)))
        XCTAssertNotEqual(a, EventOutbox.messageID(partition: 1, cause: 10, chunk: 0, bytes: Array("y\n".utf8)))
        XCTAssertNotEqual(a, EventOutbox.messageID(partition: 1, cause: 11, chunk: 0, bytes: Array("x\n".utf8)))
        XCTAssertTrue(a.hasPrefix("1:10:0:"))
    }
}
