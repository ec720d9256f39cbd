@testable import FenceEngine
import XCTest

/// `FenceStore.probe`, the benchmark's ceiling, finds what the index holds: for every position,
/// each stored box that contains it (both names of the antimeridian for a position on it), on
/// any thread count (over 12,000 positions: several chunks of 4,096); a position out of range
/// finds nothing.
final class ProbeTests: XCTestCase {
    func testProbeCountsEveryStoredBoxHoldingEachPosition() throws {
        for seed in UInt64(1)...6 {
            var rng = TestRandom(mixing: seed)
            var fences: [Fence] = []
            for i in 0..<400 {
                let lon = rng.uniform(-10, 10)
                let lat = rng.uniform(40, 50)
                if rng.next() % 3 == 0 {
                    fences.append(.circle(id: "c\(i)", lon: lon, lat: lat, radius: rng.uniform(500, 150_000)))
                } else {
                    fences.append(.polygon(id: "s\(i)", exterior: Shapes.star(&rng, lon: lon, lat: lat, radius: rng.uniform(0.05, 1.5), vertices: 16)))
                }
            }
            // Crowded across the antimeridian: more than a slab's first 64 candidates at once.
            for i in 0..<150 {
                let lon = rng.uniform(179.7, 180.3)
                fences.append(.circle(id: "a\(i)", lon: lon > 180 ? lon - 360 : lon, lat: rng.uniform(-0.1, 0.1), radius: rng.uniform(60_000, 90_000)))
            }
            var store = FenceStore()
            let results = store.add(fences, threads: 2)
            XCTAssertEqual(results.filter { $0.error != nil }.count, 0, "seed \(seed)")

            var points: [LonLat] = (0..<12_000).map { _ in LonLat(lon: rng.uniform(-12, 12), lat: rng.uniform(38, 52)) }
            points += (0..<300).map { _ in
                let lon = rng.uniform(179.6, 180.4)
                return LonLat(lon: lon > 180 ? lon - 360 : lon, lat: rng.uniform(-0.5, 0.5))
            }
            points += (0..<40).map { _ in LonLat(lon: rng.next() % 2 == 0 ? 180 : -180, lat: rng.uniform(-0.3, 0.3)) }
            points += [LonLat(lon: .nan, lat: 45), LonLat(lon: 5, lat: 91), LonLat(lon: 181, lat: 0)]
            points.shuffle(using: &rng)

            // The oracle: every stored box, by a linear scan, as the index compares them: the
            // box widened to the Float32 values at or beyond its edges, the point rounded to the
            // nearest Float32 (so a point less than a Float32 step outside a box is a candidate).
            func down(_ v: Double) -> Float {
                var f = Float(v)
                while Double(f) > v { f = f.nextDown }
                return f
            }
            func up(_ v: Double) -> Float {
                var f = Float(v)
                while Double(f) < v { f = f.nextUp }
                return f
            }
            var boxes: [(minX: Float, minY: Float, maxX: Float, maxY: Float)] = []
            for item in 0..<Int32(2 * store.slotHot.count) {
                if let b = store.tree.box(of: item) { boxes.append((down(b.minX), down(b.minY), up(b.maxX), up(b.maxY))) }
            }
            func holding(_ x: Double, _ y: Double) -> Int {
                let fx = Float(x)
                let fy = Float(y)
                return boxes.reduce(0) { $0 + ($1.minX <= fx && fx <= $1.maxX && $1.minY <= fy && fy <= $1.maxY ? 1 : 0) }
            }
            var expected = 0
            var most = 0
            for p in points where p.isValidWGS84Range {
                var n = holding(p.lon, p.lat)
                if abs(p.lon) == 180 { n += holding(-p.lon, p.lat) }
                expected += n
                most = max(most, n)
            }
            XCTAssertGreaterThan(most, 64, "seed \(seed): no position outgrew the slab's first capacity")
            let pairs = store.covering(points, threads: 2).pairCount
            for threads in [1, 2, 8] {
                let found = points.withUnsafeBufferPointer { store.probe($0, threads: threads) }.candidates
                XCTAssertEqual(found, expected, "seed \(seed) threads \(threads)")
                XCTAssertGreaterThanOrEqual(found, pairs, "seed \(seed): every covering fence is a candidate")
            }
        }
    }
}
