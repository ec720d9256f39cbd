@testable import FenceEngine
import XCTest

/// The fast simplicity proof never calls a ring valid that GEOS calls invalid.
final class RingSimplicityTests: XCTestCase {
    func testNeverDisagreesWithGEOSOverSeeds() throws {
        let context = GEOSContext()
        var proven = 0
        var validByGEOS = 0
        for seed in UInt64(1)...40 {
            var rng = TestRandom(mixing: seed)
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
                let coords = Shapes.flat(ring)
                let fast = coords.withUnsafeBufferPointer { RingSimplicity.isCertainlySimple($0.baseAddress!, count: ring.count) }
                let valid = Shapes.isValidByGEOS(ring, context: context)
                if fast { XCTAssertTrue(valid, "seed \(seed) ring \(ring) proven simple but GEOS says invalid") }
                if fast { proven += 1 }
                if valid { validByGEOS += 1 }
            }
        }
        // The proof must also be useful: it recognises most valid rings.
        XCTAssertGreaterThan(Double(proven), 0.8 * Double(validByGEOS) * 0.5)
        print("ring simplicity: \(proven) proven of \(validByGEOS) GEOS-valid rings")
    }

    /// Rings of 65 to 2000 edges, which take the grid path: never proven simple when GEOS
    /// says invalid, and most valid ones proven.
    func testLargeRingsNeverDisagreeWithGEOS() throws {
        let context = GEOSContext()
        var proven = 0
        var validByGEOS = 0
        var invalidByGEOS = 0
        for seed in UInt64(1)...12 {
            var rng = TestRandom(mixing: 500 + seed)
            for k in 0..<24 {
                var ring: [LonLat]
                let n = 65 + Int(rng.next() % 1900)
                switch k % 6 {
                case 0:  // a star: simple
                    ring = Shapes.star(&rng, lon: 0.5, lat: 0.5, radius: 0.3, vertices: n)
                case 1:  // a star with one vertex pushed across the middle: crosses
                    ring = Shapes.star(&rng, lon: 0.5, lat: 0.5, radius: 0.3, vertices: n)
                    let v = 1 + Int(rng.next() % UInt64(n - 2))
                    ring[v] = LonLat(lon: 1 - ring[v].lon, lat: 1 - ring[v].lat)
                case 2:  // a star whose spike touches a neighbour's vertex exactly
                    ring = Shapes.star(&rng, lon: 0.5, lat: 0.5, radius: 0.3, vertices: n)
                    let v = 2 + Int(rng.next() % UInt64(n - 5))
                    ring[v] = ring[v + 2]
                case 3:  // a star with two spikes crossing by a hair
                    ring = Shapes.star(&rng, lon: 0.5, lat: 0.5, radius: 0.3, vertices: n)
                    let v = 2 + Int(rng.next() % UInt64(n - 5))
                    let a = ring[v - 1]
                    let b = ring[v + 1]
                    ring[v] = LonLat(lon: b.lon + (b.lon - a.lon) * 1e-9, lat: b.lat + (b.lat - a.lat) * 1e-9)
                case 4:  // a random walk on a coarse grid: touching vertices, collinear edges
                    var p = LonLat(lon: 10, lat: 10)
                    ring = [p]
                    for _ in 0..<(n - 2) {
                        p = LonLat(lon: p.lon + Double(Int(rng.next() % 3) - 1), lat: p.lat + Double(Int(rng.next() % 3) - 1))
                        ring.append(p)
                    }
                    ring.append(ring[0])
                default:  // a comb: long parallel teeth, close but apart
                    ring = [LonLat(lon: 0, lat: 0)]
                    let teeth = (n - 3) / 2
                    for t in 0..<teeth {
                        ring.append(LonLat(lon: Double(t), lat: t % 2 == 0 ? 1 : 100))
                        ring.append(LonLat(lon: Double(t) + 0.999_999, lat: t % 2 == 0 ? 1 : 100))
                    }
                    ring.append(LonLat(lon: Double(teeth), lat: 0))
                    ring.append(ring[0])
                }
                let coords = Shapes.flat(ring)
                let fast = coords.withUnsafeBufferPointer { RingSimplicity.isCertainlySimple($0.baseAddress!, count: ring.count) }
                let valid = Shapes.isValidByGEOS(ring, context: context)
                if fast { XCTAssertTrue(valid, "seed \(seed) case \(k % 6), \(ring.count) positions: proven simple but GEOS says invalid") }
                if fast { proven += 1 }
                if valid { validByGEOS += 1 } else { invalidByGEOS += 1 }
            }
        }
        XCTAssertGreaterThan(invalidByGEOS, 50)
        XCTAssertGreaterThan(Double(proven), 0.8 * Double(validByGEOS))
        print("large ring simplicity: \(proven) proven of \(validByGEOS) GEOS-valid rings, \(invalidByGEOS) invalid")
    }
}
