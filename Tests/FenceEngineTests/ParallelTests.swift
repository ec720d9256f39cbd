@testable import FenceEngine
import XCTest

/// The parallel paths, run by `.ci/tsan` under the thread sanitizer with 8 threads: batch
/// validation (one GEOS context per worker) and batch containment (shared read-only store,
/// per-worker scratch and GEOS fallback).
final class ParallelTests: XCTestCase {
    func testParallelAddAndContainmentAreThreadCountInvariant() throws {
        var rng = TestRandom(mixing: 42)
        var fences: [Fence] = []
        for i in 0..<3000 {
            let lon = rng.uniform(0, 4)
            let lat = rng.uniform(0, 4)
            if i % 3 == 0 {
                fences.append(.circle(id: "c\(i)", lon: lon, lat: lat, radius: rng.uniform(1000, 20_000)))
            } else {
                fences.append(.polygon(id: "p\(i)", exterior: Shapes.star(&rng, lon: lon, lat: lat, radius: 0.15, vertices: 12)))
            }
        }
        // Points on diagonal edges make workers call GEOS concurrently, each in its own context.
        var points: [LonLat] = (0..<20_000).map { _ in LonLat(lon: rng.uniform(0, 4), lat: rng.uniform(0, 4)) }
        for f in fences.prefix(300) {
            if case .polygons(let p) = f.shape { points += Shapes.boundaryPoints(p).prefix(6) }
        }
        var reference: Coverage?
        for threads in [1, 2, 8] {
            var store = FenceStore()
            let results = store.add(fences, threads: threads)
            XCTAssertTrue(results.allSatisfy { $0.error == nil })
            let coverage = store.covering(points, threads: threads)
            if let reference {
                XCTAssertEqual(coverage.offsets, reference.offsets, "threads \(threads)")
                XCTAssertEqual(coverage.handles, reference.handles, "threads \(threads)")
            } else {
                reference = coverage
                XCTAssertGreaterThan(coverage.pairCount, 1000)
            }
        }
    }
}
