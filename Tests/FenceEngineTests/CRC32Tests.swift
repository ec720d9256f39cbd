import Foundation
import XCTest

@testable import FenceEngine

/// The slicing-by-8 CRC-32 against the obvious oracle, the bit-at-a-time definition, over
/// random lengths (every length 0-64, then up to 5,000) and start offsets (unaligned words),
/// and against published check values.
final class CRC32Tests: XCTestCase {
    static func bitwise(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in bytes {
            c ^= UInt32(b)
            for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        }
        return c ^ 0xFFFF_FFFF
    }

    func testKnownValues() {
        XCTAssertEqual(CRC32.checksum(Array("123456789".utf8)), 0xCBF4_3926)
        XCTAssertEqual(CRC32.checksum([UInt8]()), 0)
        XCTAssertEqual(CRC32.checksum(Array("The quick brown fox jumps over the lazy dog".utf8)), 0x414F_A339)
    }

    func testEqualsTheBitwiseDefinition() {
        var rng = TestRandom(mixing: 32)
        let pool = (0..<6_000).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        for k in 0..<400 {
            let length = k <= 64 ? k : Int(rng.next() % 5_000)
            let start = Int(rng.next() % 8)
            let slice = pool[start..<(start + length)]
            let want = Self.bitwise(Array(slice))
            XCTAssertEqual(CRC32.checksum(slice), want, "length \(length) at \(start)")
            XCTAssertEqual(slice.withUnsafeBytes { CRC32.checksum($0) }, want, "length \(length) at \(start)")
            // A sequence without contiguous storage takes the copying path.
            XCTAssertEqual(CRC32.checksum(slice.lazy.map { $0 }), want, "length \(length) at \(start)")
        }
    }
}

/// `UTF8Order.precedes` and `compare` (one memcmp) against the generic walk over the UTF-8 it replaced, on
/// random ids of ASCII, multi-byte and NUL characters, with shared prefixes, small (inline)
/// and large (heap) strings, and substrings made into strings.
final class UTF8OrderTests: XCTestCase {
    func testEqualsTheUTF8Walk() {
        var rng = TestRandom(mixing: 8)
        let alphabet: [Character] = ["a", "b", "z", "0", "-", "é", "ü", "中", "\u{0}", "🚚", "e\u{301}"]
        func id() -> String {
            let stem = rng.next() % 2 == 0 ? "device-0000" : ""
            return stem + String((0..<Int(rng.next() % 24)).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] })
        }
        var ids = (0..<600).map { _ in id() }
        ids += ids.prefix(50).map { String($0.dropLast()) }
        ids += ["", "a", "ab", "é", "e\u{301}"]
        for a in ids {
            for _ in 0..<20 {
                let b = ids[Int(rng.next() % UInt64(ids.count))]
                XCTAssertEqual(UTF8Order.precedes(a, b), a.utf8.lexicographicallyPrecedes(b.utf8), "\(Array(a.utf8)) \(Array(b.utf8))")
                let oracle = a.utf8.elementsEqual(b.utf8) ? 0 : a.utf8.lexicographicallyPrecedes(b.utf8) ? -1 : 1
                XCTAssertEqual(UTF8Order.compare(a, b).signum(), oracle, "\(Array(a.utf8)) \(Array(b.utf8))")
            }
            XCTAssertFalse(UTF8Order.precedes(a, a))
            XCTAssertEqual(UTF8Order.compare(a, a), 0)
        }
    }

    /// `UTF8Order.sort` (16-byte keys, then the full compare) orders like the UTF-8 walk:
    /// ids shorter and longer than 16 bytes, sharing 16-byte prefixes, with NUL bytes.
    func testSortEqualsTheUTF8Walk() {
        var rng = TestRandom(mixing: 16)
        let stems = ["", "d", "device-000000000", "device-0000000001", "vehicle/ü/", "a\u{0}"]
        let tails: [Character] = ["0", "1", "\u{0}", "é", "z"]
        for round in 0..<20 {
            var ids = Set<String>()
            while ids.count < 300 {
                let stem = stems[Int(rng.next() % UInt64(stems.count))]
                ids.insert(stem + String((0..<Int(rng.next() % 6)).map { _ in tails[Int(rng.next() % UInt64(tails.count))] }))
            }
            var items = ids.shuffled(using: &rng).map { ($0, 0) }
            UTF8Order.sort(&items) { $0.0 }
            let want = ids.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            XCTAssertEqual(items.map(\.0), want, "round \(round)")
        }
    }
}
