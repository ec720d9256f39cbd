import Foundation
import SeededRandom
import XCTest

@testable import FenceIO

/// `OutputEscaping.escapingLineSeparators(inJSON:)`, a byte scan, against the Foundation
/// version it replaced (kept here as an oracle) and against the obvious scalar-by-scalar
/// replacement: U+2028 / U+2029 at the start, at the end, side by side, and among other
/// multibyte UTF-8 (other E2 characters, A8 / A9 bytes after other leads, combining marks,
/// emoji sequences); and the string itself, not a copy, when there is nothing to escape.
///
/// One deliberate difference: Foundation's search compares grapheme clusters of its own,
/// which join a separator and a mark after it (U+2028 U+0301: Swift, and Unicode's rule that
/// a break follows a line separator, see two clusters), so it left such a separator raw in
/// the output, the line break this escaping is there to keep out. The byte scan escapes every
/// one, as `appendJSONString` does.
final class LineSeparatorEscapingTests: XCTestCase {
    /// The implementation before the byte scan: Foundation's `contains` and
    /// `replacingOccurrences`.
    static func foundationEscaping(_ raw: String) -> String {
        guard raw.contains("\u{2028}") || raw.contains("\u{2029}") else { return raw }
        return raw.replacingOccurrences(of: "\u{2028}", with: "\\u2028").replacingOccurrences(of: "\u{2029}", with: "\\u2029")
    }

    /// The obvious version: every U+2028 / U+2029 scalar replaced, nothing else touched.
    static func scalarEscaping(_ raw: String) -> String {
        var out = String.UnicodeScalarView()
        for s in raw.unicodeScalars {
            switch s {
            case "\u{2028}": out.append(contentsOf: "\\u2028".unicodeScalars)
            case "\u{2029}": out.append(contentsOf: "\\u2029".unicodeScalars)
            default: out.append(s)
            }
        }
        return String(out)
    }

    /// Whether some separator is followed by a scalar Foundation's search joins to it (a
    /// grapheme extender, an emoji modifier), where the Foundation version left it raw.
    static func separatorBeforeExtender(_ s: String) -> Bool {
        let scalars = Array(s.unicodeScalars)
        return scalars.indices.dropLast().contains { i in
            (scalars[i] == "\u{2028}" || scalars[i] == "\u{2029}")
                && (scalars[i + 1].properties.isGraphemeExtend || scalars[i + 1].properties.isEmojiModifier)
        }
    }

    /// Pieces to build strings from: the two separators, characters whose UTF-8 shares bytes
    /// with them (E2 80 xx, E2 with other continuations, C2 A8 / C2 A9, A8 / A9 as the last
    /// byte of longer characters), marks and modifiers, JSON's own escapes.
    static let pieces: [String] = [
        "\u{2028}", "\u{2029}", "a", "Z", " ", "\"", "\\", "\\u2028", "\n", "\r\n", "\u{0}", "\t", ",", "{\"k\":", "}", "[", "]",
        "\u{2027}", "\u{202A}", "\u{2000}", "\u{20AC}", "\u{2080}", "\u{2E28}", "\u{E2}", "\u{A8}", "\u{A9}", "\u{80}",
        "\u{0A28}", "\u{FE28}", "\u{1F028}", "\u{301}", "e\u{301}", "é", "中", "😀", "👨‍👩‍👧", "🇩🇪", "\u{2028}\u{301}",
        "\u{200D}", "\u{FEFF}", "\u{FE0F}", "\u{1F3FB}", "\u{20E3}", "\u{10FFFF}",
    ]

    /// Asserts the byte scan's output: the scalar replacement's always, the Foundation
    /// version's wherever that one saw every separator; and the input's own storage when
    /// nothing was escaped. Returns whether the Foundation version was compared.
    @discardableResult
    func check(_ s: String, _ label: @autoclosure () -> String, line: UInt = #line) -> Bool {
        let got = OutputEscaping.escapingLineSeparators(inJSON: s)
        XCTAssertEqual(Array(got.utf8), Array(Self.scalarEscaping(s).utf8), "\(label()): \(s.debugDescription)", line: line)
        let compared = !Self.separatorBeforeExtender(s)
        if compared {
            XCTAssertEqual(Array(got.utf8), Array(Self.foundationEscaping(s).utf8), "\(label()): \(s.debugDescription)", line: line)
        }
        if Array(got.utf8) == Array(s.utf8) && s.utf8.count > 15 {
            // Nothing escaped: the same storage (a string over 15 bytes lives in a heap
            // buffer; a shorter one is kept inline, where a copy is the value itself).
            var a = s
            var b = got
            let same = a.withUTF8 { x in b.withUTF8 { y in x.baseAddress == y.baseAddress && x.count == y.count } }
            XCTAssertTrue(same, "\(label()): copied", line: line)
        }
        return compared
    }

    func testTheCasesByHand() {
        let cases = [
            "", "\u{2028}", "\u{2029}", "\u{2028}\u{2029}", "\u{2029}\u{2028}", "\u{2028}\u{2028}\u{2028}", "\u{2028}abc", "abc\u{2029}",
            "\"a\u{2028}b\"", "\u{2027}\u{202A}", "\u{E2}\u{80}\u{A8}", "中\u{2029}中", "😀\u{2028}😀", "\u{301}\u{2028}", "e\u{301}\u{2029}",
            String(repeating: "z", count: 30_000), String(repeating: "\u{2000}", count: 5_000),
            "\u{2028}" + String(repeating: "é", count: 20_000) + "\u{2029}",
            String(repeating: "ab\u{2028}", count: 10_000),
        ]
        for (i, s) in cases.enumerated() { XCTAssertTrue(check(s, "case \(i)")) }
        XCTAssertEqual(OutputEscaping.escapingLineSeparators(inJSON: "\u{2028}a\u{2029}"), "\\u2028a\\u2029")
        // A mark after a separator: escaped (the Foundation version left this one raw).
        XCTAssertFalse(check("x\u{2028}\u{301}y", "mark"))
        XCTAssertEqual(OutputEscaping.escapingLineSeparators(inJSON: "x\u{2028}\u{301}\u{2029}\u{FE0F}"), "x\\u2028\u{301}\\u2029\u{FE0F}")
    }

    func testRandomStringsMatchTheFoundationVersion() {
        var escaped = 0
        var compared = 0
        var escapedCompared = 0
        var extended = 0
        for seed in 0..<4_000 {
            var rng = SplitMix64(seed: UInt64(seed) &* 0x9E37_79B9_7F4A_7C15 &+ 11)
            // Mostly short values; every tenth long enough to live in a heap buffer.
            let count = seed % 10 == 0 ? 200 + Int(rng.next() % 2_000) : Int(rng.next() % 40)
            // A third of the strings without separators at all.
            let pool = seed % 3 == 0 ? Self.pieces.filter { !$0.unicodeScalars.contains { $0 == "\u{2028}" || $0 == "\u{2029}" } } : Self.pieces
            var s = ""
            for _ in 0..<count { s += pool[Int(rng.next() % UInt64(pool.count))] }
            if seed % 7 == 1 { s = "\u{2028}" + s }
            if seed % 7 == 2 { s += "\u{2029}" }
            let separators = s.unicodeScalars.contains(where: { $0 == "\u{2028}" || $0 == "\u{2029}" })
            if separators { escaped += 1 }
            if check(s, "seed \(seed)") {
                compared += 1
                if separators { escapedCompared += 1 }
            } else {
                extended += 1
            }
        }
        // 2,513 with separators; 2,584 compared with the Foundation version, 1,097 of them with
        // separators; 1,416 with a mark or modifier after a separator.
        XCTAssertGreaterThan(escaped, 2_000)
        XCTAssertGreaterThan(compared, 2_500)
        XCTAssertGreaterThan(escapedCompared, 1_000)
        XCTAssertGreaterThan(extended, 1_000)
    }
}
