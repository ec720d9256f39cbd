@testable import FenceEngine
import XCTest

/// `SpatialOrder.permutation` against the obvious oracle: indices sorted by (Morton key,
/// index) with the standard library's sort.
final class SpatialOrderTests: XCTestCase {
    func oracle(_ positions: [LonLat]) -> [UInt32] {
        let keys = positions.map(SpatialOrder.key)
        return (0..<UInt32(positions.count)).sorted { a, b in
            keys[Int(a)] != keys[Int(b)] ? keys[Int(a)] < keys[Int(b)] : a < b
        }
    }

    func check(_ positions: [LonLat], _ label: String) {
        let expected = oracle(positions)
        for threads in [1, 2, 3] {
            let got = positions.withUnsafeBufferPointer { SpatialOrder.permutation($0, threads: threads) }
            // The first difference, not two arrays of 100k numbers.
            let first = (0..<min(got.count, expected.count)).first { got[$0] != expected[$0] }
            XCTAssertTrue(got.count == expected.count && first == nil, "\(label), \(threads) threads: first difference at \(first ?? -1)")
        }
    }

    /// Sizes on both sides of the parallel cut (65,536), areas from a city (high key bytes
    /// constant, skipped) to the world, many equal keys, and NaN and out-of-range positions
    /// (key 0), over several seeds.
    func testMatchesSortedKeysOverSeeds() {
        for seed: UInt64 in 1...4 {
            var rng = TestRandom(mixing: seed)
            for (count, span) in [(0, 1.0), (1, 1.0), (2, 1.0), (1000, 0.01), (70_000, 0.5), (100_003, 360.0), (131_072, 20.0)] {
                var positions: [LonLat] = []
                for _ in 0..<count {
                    switch rng.next() % 50 {
                    case 0: positions.append(LonLat(lon: .nan, lat: rng.uniform(-90, 90)))
                    case 1: positions.append(LonLat(lon: rng.uniform(-180, 180), lat: 91))
                    case 2: positions.append(positions.last ?? LonLat(lon: 0, lat: 0))  // an equal key
                    default:
                        let lon = min(180, max(-180, 8.5 + rng.uniform(-span / 2, span / 2)))
                        let lat = min(90, max(-90, 47.3 + rng.uniform(-span / 4, span / 4)))
                        positions.append(LonLat(lon: lon, lat: lat))
                    }
                }
                check(positions, "seed \(seed), \(count) positions over \(span) degrees")
            }
        }
    }

    /// One key for everything: no byte varies, no pass runs, the order is the input's.
    func testAllEqualKeysKeepInputOrder() {
        let positions = [LonLat](repeating: LonLat(lon: 3, lat: 4), count: 80_000)
        let got = positions.withUnsafeBufferPointer { SpatialOrder.permutation($0, threads: 2) }
        XCTAssertEqual(Array(got), Array(0..<UInt32(80_000)))
    }
}
