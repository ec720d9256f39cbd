@testable import FenceEngine
import Dispatch
import XCTest

/// Thousands of fences over one place: each position's hits arrive in the index's leaf order,
/// not in slot order, and putting them in order must cost O(h log h), not O(h²).
final class OverlapScalingTests: XCTestCase {
    /// Rectangles that all hold the middle of a small area, added in random order so that
    /// slot order and the index's spatial order disagree. The hits match the obvious oracle
    /// (a closed box test) ascending and once each; and the time per position grows about
    /// in step with the hits, not with their square: 16 times the fences may take at most 60
    /// times as long (in order the ratio is about 16; the quadratic insert made it hundreds,
    /// in a debug build about a thousand).
    func testManyOverlappingFencesCostAboutLinearTime() throws {
        var rng = TestRandom(mixing: 2026)
        var boxes: [(Double, Double, Double, Double)] = []
        for _ in 0..<16_000 {
            // Each box reaches past the centre on every side, so the middle is in every one.
            let west = rng.uniform(-1, -0.01), east = rng.uniform(0.01, 1)
            let south = rng.uniform(-1, -0.01), north = rng.uniform(0.01, 1)
            boxes.append((west, south, east, north))
        }
        func fence(_ i: Int) -> Fence {
            let (w, s, e, n) = boxes[i]
            let ring = [(w, s), (e, s), (e, n), (w, n), (w, s)].map { LonLat(lon: $0.0, lat: $0.1) }
            return .polygon(id: "r\(i)", exterior: ring)
        }
        let points = (0..<24).map { _ in LonLat(lon: rng.uniform(-0.02, 0.02), lat: rng.uniform(-0.02, 0.02)) }

        func timed(_ count: Int) throws -> Double {
            var store = FenceStore()
            let results = store.add((0..<count).map(fence), threads: 2)
            XCTAssertEqual(results.filter { $0.error != nil }.count, 0)
            var best = Double.infinity
            var hits: [[FenceHandle]] = []
            for _ in 0..<3 {
                let start = DispatchTime.now().uptimeNanoseconds
                hits = points.map { store.fences(covering: $0) }
                best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start))
            }
            for (p, h) in zip(points, hits) {
                XCTAssertTrue(zip(h, h.dropFirst()).allSatisfy { $0 < $1 }, "\(count) fences: hits at \(p) not ascending")
                let want = (0..<count).filter { i in
                    let (w, s, e, n) = boxes[i]
                    return w <= p.lon && p.lon <= e && s <= p.lat && p.lat <= n
                }.map { "r\($0)" }.sorted()
                XCTAssertEqual(h.map { store.id(of: $0) }.sorted(), want, "\(count) fences at \(p)")
            }
            XCTAssertGreaterThan(hits.map(\.count).min() ?? 0, count / 20, "the test needs crowded points")
            return best
        }
        let small = try timed(1_000)
        let large = try timed(16_000)
        XCTAssertLessThan(large / small, 60, "1k fences \(small / 1e6) ms, 16k fences \(large / 1e6) ms for \(points.count) positions")
    }
}
