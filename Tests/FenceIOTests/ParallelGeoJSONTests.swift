import FenceEngine
@testable import FenceIO
import Foundation
import SeededRandom
import XCTest

/// The built-in GeoJSON reader on several threads (a `features` array cut by `FeatureSplit`,
/// parts read side by side) against the same reader on one thread, the oracle: over random
/// documents full of what can fool a cut (brackets, commas and escaped quotes inside strings,
/// arrays of objects in properties, elements that are not features, white space anywhere),
/// the same fences, origins and rejections; over the same documents damaged at random, the
/// same error or the same result.
final class ParallelGeoJSONTests: XCTestCase {
    /// Random GeoJSON text, as a reference type so that nested helpers share one generator.
    final class Writer {
        var rng: SplitMix64
        init(seed: UInt64) { rng = SplitMix64(seed: seed) }

        func chance(_ p: Double) -> Bool { rng.chance(p) }
        func int(_ r: ClosedRange<Int>) -> Int { rng.int(r) }

        /// A string literal's content with what a cut must not take for structure.
        func trickyText() -> String {
            let pieces = ["a", "Z", "7", " ", ",", "]", "}", "[", "{", "\\\"", "\\\\", "\\u00e9", "é", "\\n", "\\/", "],[", "},{", "\\\\\\\""]
            return (0..<int(0...6)).map { _ in pieces[int(0...(pieces.count - 1))] }.joined()
        }

        /// Optional white space, as a document written by anything may have it.
        func ws() -> String {
            switch int(0...5) {
            case 0: return " "
            case 1: return "\n  "
            case 2: return "\t"
            default: return ""
            }
        }

        func ring() -> String {
            let x = rng.uniform(-170, 170), y = rng.uniform(-80, 80), d = rng.uniform(0.001, 0.5)
            var points = [(x, y), (x + d, y), (x + d, y + d), (x, y + d)]
            if !chance(0.05) { points.append((x, y)) }  // else unclosed: refused by the reader
            return "[" + points.map { "[\(ws())\($0.0),\(ws())\($0.1)\(ws())]" }.joined(separator: "," + ws()) + "]"
        }

        /// One element of the `features` array: mostly features (good and bad), sometimes not.
        func element(number: Int) -> String {
            switch int(0...19) {
            case 0: return "42"
            case 1: return "\"" + trickyText() + "\""
            case 2: return "[1,[2,{\"a\":\"]\"}],null]"
            case 3: return "null"
            case 4: return "{}"
            default: break
            }
            var members = ["\"type\":\(ws())\"Feature\""]
            var props: [String] = []
            if !chance(0.05) { props.append("\"id\":\(ws())\"f\(number)-\(trickyText())\"") }
            if chance(0.3) { props.append("\"group\":\"g\(int(0...3))\"") }
            if chance(0.3) { props.append("\"note\":\(ws())\"\(trickyText())\"") }
            if chance(0.3) { props.append("\"list\":[{\"k\":\"\(trickyText())\"},{\(ws())\"k\":[1,2,{}]},[],\"],\"]") }
            if chance(0.1) { props.append("\"dwell\":\(chance(0.5) ? "60" : "\"soon\"")") }
            let geometry: String
            switch int(0...9) {
            case 0...4:
                geometry = "{\"type\":\"Polygon\",\(ws())\"coordinates\":[\(ring())]}"
            case 5, 6:
                props.append("\"radius\":\(chance(0.9) ? String(int(1...5000)) : "-3")")
                geometry = "{\"coordinates\":[\(rng.uniform(-179, 179)),\(rng.uniform(-89, 89))],\(ws())\"type\":\"Point\"}"
            case 7:
                geometry = "{\"type\":\"MultiPolygon\",\"coordinates\":[[\(ring())],\(ws())[\(ring())]]}"
            case 8:
                geometry = "null"
            default:
                geometry = "{\"type\":\"LineString\",\"coordinates\":[[0,0],[1,1]]}"
            }
            members.append("\"properties\":\(ws()){\(props.joined(separator: "," + ws()))}")
            members.append("\"geometry\":\(ws())\(geometry)")
            if chance(0.2) { members.append("\"bbox\":[0,0,1,1]") }
            if chance(0.5) { members.shuffle(using: &rng) }
            return "{" + ws() + members.joined(separator: "," + ws()) + ws() + "}"
        }
    }

    static func document(seed: UInt64, features: Int) -> String {
        let w = Writer(seed: seed)
        var text = "{\"type\":\"FeatureCollection\",\(w.ws())\"name\":\"t\",\"features\":\(w.ws())["
        text += (1...features).map { w.element(number: $0) }.joined(separator: "," + w.ws())
        text += w.ws() + "]" + (w.chance(0.5) ? ",\"crs\":{\"type\":\"name\",\"properties\":{\"name\":\"urn:ogc:def:crs:OGC:1.3:CRS84\"}}" : "") + "}"
        return text
    }

    static func read(_ bytes: [UInt8], threads: Int) -> Result<FenceReadResult, FenceError> {
        var options = FenceInputOptions()
        options.threads = threads
        options.parallelMinimumBytes = 0
        do {
            return .success(try GeoJSONFences.read(Data(bytes), layer: "t", options: options))
        } catch {
            return .failure(error)
        }
    }

    func assertSame(_ a: Result<FenceReadResult, FenceError>, _ b: Result<FenceReadResult, FenceError>, _ what: String) {
        switch (a, b) {
        case (.success(let x), .success(let y)):
            XCTAssertEqual(x.fences, y.fences, what)
            XCTAssertEqual(x.origins, y.origins, what)
            XCTAssertEqual(x.rejected, y.rejected, what)
        case (.failure(let x), .failure(let y)):
            XCTAssertEqual(x, y, what)
        default:
            XCTFail("\(what): one thread \(a), several \(b)")
        }
    }

    func testManyThreadsReadWhatOneThreadReads() throws {
        var partsSeen = 0
        var fencesSeen = 0
        var rejectedSeen = 0
        for seed in UInt64(1)...120 {
            let features = Int(seed % 7 == 0 ? 1 : 2 + seed * 3 % 150)
            let bytes = Array(Self.document(seed: seed, features: features).utf8)
            XCTAssertNotNil(try? JSONSerialization.jsonObject(with: Data(bytes)), "seed \(seed): the generator wrote bad JSON")
            let one = Self.read(bytes, threads: 1)
            guard case .success(let oracle) = one else { return XCTFail("seed \(seed): \(one)") }
            XCTAssertEqual(oracle.parallelParts, 0)
            XCTAssertEqual(oracle.featureCount, features, "seed \(seed)")
            fencesSeen += oracle.fences.count
            rejectedSeen += oracle.rejected.count
            for threads in [2, 3, 8] {
                let many = Self.read(bytes, threads: threads)
                assertSame(one, many, "seed \(seed), \(threads) threads")
                if case .success(let r) = many {
                    partsSeen += r.parallelParts
                    if features >= 4 * threads * 2 { XCTAssertGreaterThan(r.parallelParts, 1, "seed \(seed), \(threads) threads: not cut") }
                }
            }
        }
        XCTAssertGreaterThan(partsSeen, 1000)
        XCTAssertGreaterThan(fencesSeen, 3000)
        XCTAssertGreaterThan(rejectedSeen, 500)
    }

    /// A document with two `features` members: whatever one thread makes of it (the second
    /// array read after the first), several threads make too, the second array joined after
    /// the fences already read.
    func testTwoFeaturesMembersReadAsOnOneThread() throws {
        for seed in UInt64(1)...12 {
            let first = Self.document(seed: seed, features: 40)
            let second = Self.document(seed: seed + 100, features: 60)
            // The second document's array, as a second member of the first document.
            let array = second[second.range(of: "\"features\":")!.upperBound...]
            let combined = String(first.dropLast()) + ",\"features\":" + array
            let bytes = Array(combined.utf8)
            let one = Self.read(bytes, threads: 1)
            guard case .success(let oracle) = one else { return XCTFail("seed \(seed): \(one)") }
            for threads in [2, 3] {
                let many = Self.read(bytes, threads: threads)
                assertSame(one, many, "seed \(seed), \(threads) threads, two features members")
                if case .success(let r) = many { XCTAssertGreaterThan(r.parallelParts, 1, "seed \(seed): not cut") }
            }
            XCTAssertGreaterThan(oracle.featureCount, 60, "seed \(seed): both arrays read")
        }
    }

    /// Damaged documents: cut short, or one byte replaced by, inserted as or deleted for one
    /// that changes the structure. Either both readers refuse with the same error or both read
    /// the same; a wrong guess at a cut must never show.
    func testDamagedDocumentsFailAsOnOneThread() throws {
        let structural = Array("[]{},\"\\:0 ".utf8)
        var rng = SplitMix64(seed: 7)
        var refused = 0
        var read = 0
        for seed in UInt64(1)...60 {
            let clean = Array(Self.document(seed: seed, features: 40).utf8)
            for _ in 0..<12 {
                var bytes = clean
                let at = rng.int(0...(bytes.count - 1))
                switch rng.int(0...3) {
                case 0: bytes.removeSubrange(at...)
                case 1: bytes[at] = structural[rng.int(0...(structural.count - 1))]
                case 2: bytes.insert(structural[rng.int(0...(structural.count - 1))], at: at)
                default: bytes.remove(at: at)
                }
                let one = Self.read(bytes, threads: 1)
                let many = Self.read(bytes, threads: 4)
                assertSame(one, many, "seed \(seed), damage at \(at)")
                switch many {
                case .failure: refused += 1
                case .success: read += 1
                }
            }
        }
        // Both outcomes occur, so both paths were compared.
        XCTAssertGreaterThan(refused, 200)
        XCTAssertGreaterThan(read, 100)
    }

    /// The cuts are the array's element boundaries: each part's start follows a comma between
    /// elements (or the `[`), its end is the next such comma (or the `]`), and its first number
    /// counts the elements before it. The oracle walks the elements with the scanner's
    /// validating `skipValue`.
    func testCutsAreElementBoundaries() throws {
        for seed in UInt64(1)...80 {
            let text = Self.document(seed: seed, features: Int(10 + seed % 90))
            let bytes = Array(text.utf8)
            bytes.withUnsafeBufferPointer { buffer in
                var scanner = JSONScanner(buffer)
                let open = text.utf8.firstIndex(of: UInt8(ascii: "["))!
                let start = text.utf8.distance(from: text.utf8.startIndex, to: open) + 1
                scanner.at = start
                var separators: [Int] = []
                var close = -1
                while true {
                    _ = try! scanner.skipValue()
                    scanner.space()
                    if buffer[scanner.at] == UInt8(ascii: "]") {
                        close = scanner.at
                        break
                    }
                    separators.append(scanner.at)
                    scanner.at += 1
                }
                for count in [2, 5, 16] {
                    guard let split = FeatureSplit.split(buffer, from: start, count: count) else { return XCTFail("seed \(seed): no split") }
                    XCTAssertEqual(split.close, close, "seed \(seed)")
                    XCTAssertEqual(split.parts.first?.start, start)
                    XCTAssertEqual(split.parts.last?.end, close)
                    XCTAssertLessThanOrEqual(split.parts.count, count)
                    XCTAssertGreaterThan(split.parts.count, 1, "seed \(seed), \(count) parts")
                    for (a, b) in zip(split.parts, split.parts.dropFirst()) {
                        XCTAssertEqual(b.start, a.end + 1)
                        guard let k = separators.firstIndex(of: a.end) else { return XCTFail("seed \(seed): cut at \(a.end) is no separator") }
                        XCTAssertEqual(b.firstNumber, k + 2, "seed \(seed)")
                    }
                    XCTAssertEqual(split.parts.first?.firstNumber, 1)
                }
            }
        }
    }

    /// A short array of many elements is cut into at most the parts asked for (a share of a
    /// few bytes would otherwise cut at every comma).
    func testNoMorePartsThanAskedOnSmallArrays() {
        let text = "[" + Array(repeating: "1", count: 23).joined(separator: ",") + "]"
        let bytes = Array(text.utf8)
        bytes.withUnsafeBufferPointer { buffer in
            for count in [2, 5, 16, 40] {
                guard let split = FeatureSplit.split(buffer, from: 1, count: count) else { return XCTFail("no split") }
                XCTAssertEqual(split.parts.count, min(count, 23), "\(count)")
                XCTAssertEqual(split.parts.last?.end, bytes.count - 1)
                XCTAssertEqual(split.parts.last.map { $0.firstNumber + (bytes.count - 1 - $0.start) / 2 }, 23, "\(count)")
            }
        }
    }

    /// What the cut pass refuses: an array never closed (the serial reader then reports it).
    func testUnclosedArraysAreNotCut() {
        for text in ["[{\"a\":1},{\"b\":\"]", "[{\"a\":1},{\"b\":2}", "[{\"a\":1}}", "[\"\\"] {
            let bytes = Array(text.utf8)
            bytes.withUnsafeBufferPointer { XCTAssertNil(FeatureSplit.split($0, from: 1, count: 4), text) }
        }
    }

    /// The word classifier against a byte-by-byte oracle, over random bytes and every byte value.
    func testKindsMarkExactlyTheStructuralBytes() {
        var rng = SplitMix64(seed: 3)
        var words: [[UInt8]] = (0..<32).map { k in (0..<8).map { UInt8((k * 8 + $0) & 0xFF) } }
        words += (0..<20000).map { _ in (0..<8).map { _ in UInt8(truncatingIfNeeded: rng.next()) } }
        for bytes in words {
            let word = bytes.enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
            let kinds = FeatureSplit.Kinds(word)
            func expected(_ set: Set<UInt8>) -> UInt64 {
                bytes.enumerated().reduce(UInt64(0)) { set.contains($1.element) ? $0 | 0x80 << (8 * UInt64($1.offset)) : $0 }
            }
            XCTAssertEqual(kinds.quotes, expected([34]), "\(bytes)")
            XCTAssertEqual(kinds.commas, expected([44]), "\(bytes)")
            XCTAssertEqual(kinds.opens, expected([91, 123]), "\(bytes)")
            XCTAssertEqual(kinds.closes, expected([93, 125]), "\(bytes)")
        }
    }
}
