@testable import FenceEngine
import XCTest

/// The fast simplicity proof never calls a ring valid that GEOS calls invalid.
final class RingSimplicityTests: XCTestCase {
    func testNeverDisagreesWithGEOSOverSeeds() throws {
        let context = GEOSContext()
        var proven = 0
        var validByGEOS = 0
        for seed in UInt64(1)...40 {
            var rng = TestRandom(seed: seed)
            for k in 0..<250 {
                var ring: [LonLat]
                switch k % 4 {
                case 0:  // random points: often self-intersecting
                    ring = (0..<Int(3 + rng.next() % 8)).map { _ in LonLat(lon: rng.uniform(0, 1), lat: rng.uniform(0, 1)) }
                    ring.append(ring[0])
                case 1:  // stars: simple
                    ring = Shapes.star(&rng, lon: 0.5, lat: 0.5, radius: 0.3, vertices: 4 + Int(rng.next() % 40))
                case 2:  // points on a coarse grid: touching vertices, collinear edges
                    ring = (0..<Int(4 + rng.next() % 6)).map { _ in LonLat(lon: Double(rng.next() % 3), lat: Double(rng.next() % 3)) }
                    ring.append(ring[0])
                default:  // a star with one vertex pushed across: folds
                    ring = Shapes.star(&rng, lon: 0.5, lat: 0.5, radius: 0.3, vertices: 8)
                    let v = Int(rng.next() % 7) + 1
                    ring[v] = LonLat(lon: 1 - ring[v].lon, lat: 1 - ring[v].lat)
                }
                let coords = ring.flatMap { [$0.lon, $0.lat] }
                let fast = coords.withUnsafeBufferPointer { RingSimplicity.isCertainlySimple($0.baseAddress!, count: ring.count) }
                let geometry = coords.withUnsafeBufferPointer { context.makePolygonal(coords: $0, rings: [(ring.count, true)]) }
                let valid = geometry.map { context.invalidityReason($0) == nil } ?? false
                if fast { XCTAssertTrue(valid, "seed \(seed) ring \(ring) proven simple but GEOS says invalid") }
                if fast { proven += 1 }
                if valid { validByGEOS += 1 }
            }
        }
        // The proof must also be useful: it recognises most valid rings.
        XCTAssertGreaterThan(Double(proven), 0.8 * Double(validByGEOS) * 0.5)
        print("ring simplicity: \(proven) proven of \(validByGEOS) GEOS-valid rings")
    }
}
