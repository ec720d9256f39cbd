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

    /// FenceNATS hashes byte arrays, byte sequences and chained pieces with the same function:
    /// every form gives the plain byte loop's value, and a hash seeded with the hash of a
    /// prefix equals the hash of the whole.
    func testByteFormsAndSeedChaining() {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            let bytes = (0..<Int.random(in: 0...64, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            var reference: UInt64 = 0xCBF2_9CE4_8422_2325
            for b in bytes {
                reference ^= UInt64(b)
                reference = reference &* 0x100_0000_01B3
            }
            XCTAssertEqual(FNV1a.hash(bytes), reference)
            XCTAssertEqual(FNV1a.hash(bytes.lazy.map { $0 }), reference, "a non-contiguous sequence")
            let cut = Int.random(in: 0...bytes.count, using: &rng)
            XCTAssertEqual(FNV1a.hash(bytes[cut...], seed: FNV1a.hash(bytes[..<cut])), reference)
        }
    }
}
