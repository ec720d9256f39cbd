import XCTest

@testable import FenceEngine

/// `ByteWriter.framed` and `ByteReader.unframed`, the frame of the state file and the
/// partition checkpoint: a frame reads back whole; every way a frame can be wrong is named.
final class FrameTests: XCTestCase {
    func testFramesReadBackAndEveryFaultIsNamed() {
        let magic = Array("TESTFRAME".utf8)
        let payload: [UInt8] = Array(0..<200).map { UInt8($0 % 251) }
        let frame = ByteWriter.framed(magic: magic, version: 3, payload: payload)
        func read(_ bytes: [UInt8], versions: Set<UInt32> = [2, 3]) -> Result<(UInt32, [UInt8]), FrameProblem> {
            bytes.withUnsafeBytes { raw in
                ByteReader.unframed(raw, magic: magic, versions: versions, current: versions.max() ?? 0, what: "test frame")
                    .map { ($0.version, Array($0.payload)) }
            }
        }
        guard case .success(let (version, back)) = read(frame) else { return XCTFail("a good frame did not read") }
        XCTAssertEqual(version, 3)
        XCTAssertEqual(back, payload)
        var flipped = frame
        flipped[frame.count - 7] ^= 0x10
        var otherMagic = frame
        otherMagic[0] = UInt8(ascii: "X")
        let cases: [([UInt8], Set<UInt32>, String)] = [
            (otherMagic, [3], "not a test frame (bad magic)"),
            (Array(frame.prefix(magic.count + 2)), [3], "truncated header"),
            (frame, [1, 2], "format version 3, this build reads 2"),
            (Array(frame.prefix(magic.count + 10)), [3], "truncated header"),
            (Array(frame.dropLast()), [3], "truncated or padded: header says 200 payload bytes, there are 199"),
            (frame + [0], [3], "truncated or padded: header says 200 payload bytes, there are 201"),
            (flipped, [3], "checksum mismatch: the test frame is corrupted"),
        ]
        for (bytes, versions, reason) in cases {
            switch read(bytes, versions: versions) {
            case .success: XCTFail("read: \(reason)")
            case .failure(let problem): XCTAssertEqual(problem.reason, reason)
            }
        }
    }
}
