@testable import FenceEngine
import XCTest

/// A state file whose frame and checksum hold but whose payload does not have the layout
/// `TrackerSnapshot.encoded()` writes (a crafted or buggy writer's file): refused with the
/// record that is wrong, never read as a shorter state, never a crash or a huge allocation.
/// The coverage audit found no test reaching these decoder checks (the value checks after them
/// are `EventScenarioTests.testStateFileWithImpossibleValuesIsRefused`).
final class StateFileStructureTests: XCTestCase {
    /// One device "v" inside fence "sq", and one fence record with group "g": 102 payload bytes.
    /// Offsets: watermark and device count 0..<16; the device 16..<49 (id 16..<21, times and
    /// position 21..<45, pair count 45..<49); its pair 49..<72 (id 49..<55, flags 55, times
    /// 56..<72); the engine's mask 72, the record count 73..<81; the record 81..<102 (id
    /// 81..<87, group flag 87, group 88..<93, mask 93, digest 94..<102).
    static let snapshot = TrackerSnapshot(
        watermark: 20,
        devices: [
            TrackerSnapshot.Device(
                id: "v", lastTime: 20, lastLon: 0.5, lastLat: 0.5,
                pairs: [TrackerSnapshot.Pair(fence: "sq", stayed: false, exitPending: false, enterTime: 10, pendingSince: 0)])
        ],
        fences: [TrackerSnapshot.FenceRecord(id: "sq", group: "g", actions: 0xFF, shapeDigest: 7)],
        engineActions: .standard)

    static var payload: [UInt8] {
        Array(snapshot.encoded()[(TrackerSnapshot.magic.count + 16)...])
    }

    /// The reason the decoder gives for `payload` in a well-framed file, or nil when it reads.
    func reason(_ payload: [UInt8], version: UInt32 = TrackerSnapshot.formatVersion) -> String? {
        let file = ByteWriter.framed(magic: TrackerSnapshot.magic, version: version, payload: payload)
        do {
            _ = try TrackerSnapshot(decoding: file)
            return nil
        } catch {
            XCTAssertEqual(error.kind, .malformedInput)
            return error.reason
        }
    }

    func testTheLayoutIsTheOneDocumented() throws {
        let payload = Self.payload
        XCTAssertEqual(payload.count, 102)
        XCTAssertEqual(Array(payload[16..<21]), [1, 0, 0, 0] + Array("v".utf8))
        XCTAssertEqual(Array(payload[49..<55]), [2, 0, 0, 0] + Array("sq".utf8))
        XCTAssertEqual(Array(payload[81..<93]), [2, 0, 0, 0] + Array("sq".utf8) + [1, 1, 0, 0, 0] + Array("g".utf8))
        XCTAssertNil(reason(payload))
        XCTAssertEqual(try TrackerSnapshot(decoding: Self.snapshot.encoded()), Self.snapshot)
    }

    /// Every cut of the payload, framed with a checksum that holds, is refused naming the
    /// record the cut falls in (or the count it leaves too large for the bytes there).
    func testEveryCutIsRefusedNamingTheRecord() {
        let payload = Self.payload
        for cut in 0..<payload.count {
            let expected: String
            switch cut {
            case ..<16: expected = "truncated payload"
            case ..<32: expected = "device count 1 does not fit the file"
            case ..<49: expected = "truncated device record"
            case ..<72: expected = "truncated pair record"
            case ..<81: expected = "truncated fence records"
            default: expected = "truncated fence record"
            }
            XCTAssertEqual(reason(Array(payload[..<cut])), "state file: " + expected, "cut at \(cut)")
        }
        // Version 1 ends after the devices: the same bytes read as one, and a byte more is left over.
        XCTAssertNil(reason(Array(payload[..<72]), version: 1))
        XCTAssertEqual(reason(Array(payload[..<73]), version: 1), "state file: 1 unexpected bytes after the last record")
    }

    /// Bytes after the last record, counts larger than the file could hold, flags no engine
    /// writes and text that is not UTF-8 are each refused, naming the record.
    func testPaddingCountsFlagsAndTextAreNamed() {
        let payload = Self.payload
        func edited(_ edit: (inout [UInt8]) -> Void) -> [UInt8] {
            var p = payload
            edit(&p)
            return p
        }
        func put64(_ v: UInt64, at k: Int, in p: inout [UInt8]) { for b in 0..<8 { p[k + b] = UInt8(truncatingIfNeeded: v >> (8 * b)) } }
        func put32(_ v: UInt32, at k: Int, in p: inout [UInt8]) { for b in 0..<4 { p[k + b] = UInt8(truncatingIfNeeded: v >> (8 * b)) } }
        let cases: [(String, [UInt8])] = [
            ("3 unexpected bytes after the last record", payload + [0, 0, 0]),
            ("device count 1099511627776 does not fit the file", edited { put64(1 << 40, at: 8, in: &$0) }),
            ("pair count 5 does not fit the file", edited { put32(5, at: 45, in: &$0) }),
            ("fence record count 8 does not fit the file", edited { put64(8, at: 73, in: &$0) }),
            (#"device 1 ("v"): fence "sq" has unknown flags 8"#, edited { $0[55] = 8 }),
            (#"device 1 ("v"): fence "sq" has unknown flags 133"#, edited { $0[55] = 0x85 }),
            ("pair record holds text that is not valid UTF-8", edited { $0[54] = 0xFF }),
            ("fence record holds text that is not valid UTF-8", edited { $0[92] = 0xC3 }),
            ("fence record holds text that is not valid UTF-8", edited { $0[86] = 0x80 }),
            // Two devices said, one there: the second record is cut.
            ("truncated device record", edited { put64(2, at: 8, in: &$0) }),
            // No group said where one is written: the record is read out of step, and what it
            // leaves over is named.
            ("5 unexpected bytes after the last record", edited { $0[87] = 0 }),
        ]
        for (why, bytes) in cases {
            XCTAssertEqual(reason(bytes), "state file: " + why)
        }
    }

    /// Undetermined with exit-pending (flags 6) is refused as undetermined with stayed (5) is,
    /// naming the flags; undetermined alone (4) is a status an engine writes.
    func testUndeterminedWithAnotherFlagIsNamed() {
        func withFlags(_ flags: UInt8) -> [UInt8] {
            var p = Self.payload
            p[55] = flags
            for b in 0..<8 { p[64 + b] = UInt8(truncatingIfNeeded: (15.0).bitPattern >> (8 * b)) }  // pending since 15, in the visit
            return p
        }
        XCTAssertNil(reason(withFlags(4)))
        XCTAssertNil(reason(withFlags(2)))
        XCTAssertEqual(
            reason(withFlags(6)), #"state file: device 1 ("v"): fence "sq" has flags 6: undetermined with stayed or exit-pending"#)
        XCTAssertEqual(
            reason(withFlags(5)), #"state file: device 1 ("v"): fence "sq" has flags 5: undetermined with stayed or exit-pending"#)
        XCTAssertEqual(
            reason(withFlags(7)), #"state file: device 1 ("v"): fence "sq" has flags 7: undetermined with stayed or exit-pending"#)
    }
}
