@testable import FenceIO
import Foundation
import SeededRandom
import XCTest

/// The CSV cells the output writers copy straight from an id's bytes (`appendCSVField`, and
/// `fence contains`' list of ids) against the strings they were made from before: every byte
/// the same, for ids that need nothing and for every kind that needs quoting, a formula guard
/// or a list escape.
final class CSVCellOracleTests: XCTestCase {
    static let tricky = [
        "p1", "a;b", #"c\d"#, "g,h", "q\"uote", "-12.5", "-1+1", "=SUM(A1)", "@x", "+7", "\tx", "\rx", "", " ", "ünï 🚢",
        "a\u{9B}b", "é\u{A0}", "a\u{7F}", "line\nbreak", "Z", "zz", "p10", "p2", "\u{C2}", "x\u{C2};",
    ]

    static func randomText(_ rng: inout SplitMix64) -> String {
        var s = ""
        for _ in 0..<Int(rng.next() % 4) { s += tricky[Int(rng.next() % UInt64(tricky.count))] }
        return s
    }

    func testAppendCSVFieldIsCSVFieldsBytes() {
        for s in Self.tricky { check(s) }
        for seed in 0..<100 {
            var rng = SplitMix64(seed: UInt64(seed))
            for _ in 0..<100 { check(Self.randomText(&rng)) }
        }
    }

    func check(_ s: String, file: StaticString = #filePath, line: UInt = #line) {
        var out: [UInt8] = [1, 2]
        OutputEscaping.appendCSVField(s, to: &out)
        XCTAssertEqual(out, [1, 2] + Array(OutputEscaping.csvField(s).utf8), s.debugDescription, file: file, line: line)
    }

    /// A fence id as an item of `contains`' CSV list (the command's `listItem`).
    static func listItem(_ id: String) -> String {
        id.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: ";", with: "\\;")
    }

    /// `fence contains` over concentric circles with tricky ids: each point lies in a known
    /// set of them, and its row is the device's cell, the time and the list's cell as
    /// `csvField` makes them of the ids in UTF-8 order (no id, one, two, and more).
    func testContainsRowsOverManySeeds() throws {
        let rings = 5
        let metresPerDegree = 111_319.49 * cos(20 * Double.pi / 180)
        for seed in 0..<12 {
            var rng = SplitMix64(seed: UInt64(seed) &+ 1000)
            var ids: [String] = []
            while ids.count < rings {
                let id = Self.randomText(&rng)
                if !id.isEmpty && !ids.contains(id) && !id.allSatisfy({ $0 == " " || $0 == "\t" }) { ids.append(id) }
            }
            let features = ids.enumerated().map { k, id -> String in
                let json = String(data: try! JSONSerialization.data(withJSONObject: [id]), encoding: .utf8)!.dropFirst().dropLast()
                return #"{"type":"Feature","id":\#(json),"properties":{"radius":\#(100 * (k + 1))},"#
                    + #""geometry":{"type":"Point","coordinates":[10,20]}}"#
            }
            let fences = try CLI.temp(self, "rings.geojson", #"{"type":"FeatureCollection","features":["# + features.joined(separator: ",") + "]}")
            var csv = "device,time,lon,lat\n"
            var expected = ""
            for j in 0...rings {
                var device = "d\(j)" + Self.randomText(&rng)
                if device.contains("\n") || device.contains("\r") || device.contains("\"") { device = "d\(j)" }
                let cell = "\"" + device.replacingOccurrences(of: "\"", with: "\"\"") + "\""
                let metres = 100 * Double(j) + 50  // inside the rings of radius above it
                csv += "\(cell),\(j),\(10 + metres / metresPerDegree),20\n"
                let inside = ids.enumerated().filter { 100 * ($0.offset + 1) > Int(metres) }.map(\.element)
                    .sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
                expected += OutputEscaping.csvField(device) + "," + ISO8601.format(Double(j)) + ","
                    + (inside.isEmpty ? "" : OutputEscaping.csvField(inside.map(Self.listItem).joined(separator: ";"))) + "\n"
            }
            let positions = try CLI.temp(self, "rings.csv", csv)
            for threads in ["1", "2"] {
                let r = try CLI.run(["contains", "--fences", fences, "--positions", positions, "--threads", threads])
                XCTAssertEqual(r.status, 0, r.err)
                XCTAssertEqual(r.out, expected, "seed \(seed): ids \(ids)")
            }
        }
    }
}
