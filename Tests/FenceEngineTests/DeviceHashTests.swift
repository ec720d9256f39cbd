import Foundation
import XCTest

@testable import FenceEngine

/// The device hash decides a device's partition and, through the NATS worker, which worker owns
/// it: it must be FNV-1a over the id's UTF-8, whatever the string's storage.
final class DeviceHashTests: XCTestCase {
    func testKnownFNV1aValues() {
        // Reference values from a plain byte loop (Python) over the UTF-8 bytes.
        let expected: [(String, UInt64)] = [
            ("", 0xCBF2_9CE4_8422_2325),
            ("a", 0xAF63_DC4C_8601_EC8C),
            ("foobar", 0x8594_4171_F739_67E8),
            ("dev-12345", 0x0F60_001C_AB16_E08A),
            ("ünïcødé-device", 0x2C2C_1E04_B7AF_D5BD),
            ("a-device-id-longer-than-fifteen-bytes-0001", 0x9727_9080_5D9C_DA7F),
        ]
        for (id, hash) in expected {
            XCTAssertEqual(stableHash64(id), hash, "FNV-1a of \(id.debugDescription)")
        }
    }

    func testSameHashForEveryStorageOfTheSameId() {
        // Small (inline), large (heap), substring-made and NSString-made strings of the same
        // text hash the same, over many random ids.
        var rng = SystemRandomNumberGenerator()
        let alphabet = Array("abcXYZ019-_.é漢🚚")
        for _ in 0..<500 {
            let length = Int.random(in: 0...40, using: &rng)
            let id = String((0..<length).map { _ in alphabet.randomElement(using: &rng)! })
            var reference: UInt64 = 0xCBF2_9CE4_8422_2325
            for b in Array(id.utf8) {
                reference ^= UInt64(b)
                reference = reference &* 0x100_0000_01B3
            }
            XCTAssertEqual(stableHash64(id), reference)
            XCTAssertEqual(stableHash64(String(("<" + id + ">").dropFirst().dropLast())), reference)
            XCTAssertEqual(stableHash64(NSString(string: id) as String), reference)
        }
    }
}
