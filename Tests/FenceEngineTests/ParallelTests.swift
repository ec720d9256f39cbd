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
    /// Parts moved end to end: every element once, in order, none copied or lost (a class's
    /// instances count themselves), the parts left empty, on any number of workers.
    func testMoveEndToEndMovesEveryElementOnce() {
        final class Item {
            nonisolated(unsafe) static var live = 0
            let value: Int
            init(_ value: Int) {
                self.value = value
                Item.live += 1
            }
            deinit { Item.live -= 1 }
        }
        var rng = TestRandom(mixing: 7)
        for round in 0..<20 {
            var next = 0
            var parts: [[Item?]] = (0..<Int(rng.next() % 12)).map { _ in
                (0..<Int(rng.next() % 3 == 0 ? 0 : rng.next() % 500)).map { _ in
                    next += 1
                    return Item(next)
                }
            }
            let threads = 1 + round % 4
            let joined = Parallel.moveEndToEnd(&parts, filler: nil, threads: threads)
            XCTAssertEqual(joined.map { $0!.value }, Array(stride(from: 1, through: next, by: 1)), "round \(round)")
            XCTAssertTrue(parts.allSatisfy(\.isEmpty), "round \(round): parts left empty")
            XCTAssertEqual(Item.live, next, "round \(round): each item alive once")
            withExtendedLifetime(joined) {}
        }
        XCTAssertEqual(Item.live, 0, "every item freed once")
    }
}
