import SeededRandom
@testable import FenceIO
import XCTest

/// `PositionField.match(ascii:)`, the NDJSON key matcher that packs a key's bytes into words,
/// against the obvious reading of its rule: any byte past ASCII is nil (the caller matches the
/// decoded text), else the key lowercased without separators, 24 bytes or more is no name, and
/// a name of `names` is its field at its rank.
final class PositionKeyMatchTests: XCTestCase {
    static func oracle(_ key: [UInt8]) -> (field: PositionField, rank: Int)?? {
        if key.contains(where: { $0 >= 0x80 }) { return nil }
        let normalized = String(decoding: key.filter { !PositionField.isSeparator($0) }.map { (65...90).contains($0) ? $0 + 32 : $0 }, as: UTF8.self)
        if normalized.utf8.count >= 24 { return .some(nil) }
        for field in PositionField.allCases {
            if let rank = field.names.firstIndex(of: normalized) { return .some((field, rank)) }
        }
        return .some(nil)
    }

    func check(_ key: [UInt8], file: StaticString = #filePath, line: UInt = #line) {
        let got = key.withUnsafeBufferPointer { PositionField.match(ascii: $0) }
        let want = Self.oracle(key)
        let text = String(decoding: key, as: UTF8.self)
        switch (got, want) {
        case (nil, nil), (.some(nil), .some(nil)): break
        case (.some(let g?), .some(let w?)):
            XCTAssertTrue(g.field == w.field && g.rank == w.rank, "\(text): \(g) against \(w)", file: file, line: line)
        default: XCTFail("\(text): \(String(describing: got)) against \(String(describing: want))", file: file, line: line)
        }
    }

    /// The search may go in any order only because no two names are alike.
    func testNoTwoNamesAreAlike() {
        let all = PositionField.allCases.flatMap(\.names)
        XCTAssertEqual(Set(all).count, all.count)
        XCTAssertTrue(all.allSatisfy { $0.utf8.count < 24 })
    }

    func testEveryNameAndItsSpellings() {
        for field in PositionField.allCases {
            for name in field.names {
                check(Array(name.utf8))
                check(Array(name.uppercased().utf8))
                check(Array(("_" + name + "-").utf8))
                check(Array((name + "x").utf8))
                check(Array(name.dropLast().utf8))
            }
        }
        // Lengths round the word boundaries (7, 8, 9, 15, 16, 17, 23, 24, 25 bytes), and past
        // 24 with separators that bring them under.
        for n in [0, 1, 7, 8, 9, 15, 16, 17, 23, 24, 25, 40] { check([UInt8](repeating: 97, count: n)) }
        check(Array("horizontal_accuracy".utf8))
        check(Array("H.o.r.i.z.o.n.t.a.l-A/c c u r a c y".utf8))
        check(Array("horizontalaccuracyhorizontal".utf8))
        check(Array("device\u{E9}".utf8))
        check(Array("________________________________device".utf8))
        // A NUL byte (an escaped `\u0000` in an NDJSON key) is no padding: `lon\u0000` is no
        // `lon` (it was, from the review of session 42's fast paths).
        for key in ["lon\u{0}", "lat\u{0}\u{0}", "\u{0}device", "ti\u{0}me", "accuracy\u{0}"] {
            check(Array(key.utf8))
            XCTAssertEqual(Array(key.utf8).withUnsafeBufferPointer { PositionField.match(ascii: $0) }.map { $0 == nil }, true, key)
        }
    }

    func testRandomKeysOverManySeeds() {
        let pieces = PositionField.allCases.flatMap(\.names) + ["", "a", "zz", "ID", "Lon", "Time"]
        let separators: [UInt8] = [32, 95, 45, 46, 47]
        for seed in 0..<200 {
            var rng = SplitMix64(seed: UInt64(seed))
            for _ in 0..<200 {
                var key: [UInt8] = Array(pieces[Int(rng.next() % UInt64(pieces.count))].utf8)
                for _ in 0..<Int(rng.next() % 4) {
                    let at = Int(rng.next() % UInt64(key.count + 1))
                    switch rng.next() % 5 {
                    case 0: key.insert(separators[Int(rng.next() % 5)], at: at)
                    case 1: key.insert(UInt8(32 + rng.next() % 95), at: at)
                    case 2: if at < key.count, (97...122).contains(key[at]) { key[at] -= 32 }
                    case 3:
                        if rng.next() % 8 == 0 { key.insert(UInt8(0x80 + rng.next() % 0x80), at: at) }
                        else if rng.next() % 4 == 0 { key.insert(UInt8(rng.next() % 32), at: at) }
                    default: key += Array(pieces[Int(rng.next() % UInt64(pieces.count))].utf8)
                    }
                }
                check(key)
            }
        }
    }
}
