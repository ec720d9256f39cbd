@testable import FenceEngine
import XCTest

/// The edge index's layout (`FlatGeometry.appendEdgeIndex`) against the obvious way of
/// building it: one list per slab, each edge appended to every slab it reaches, each list
/// sorted by east end (easternmost first, then by edge), the lists concatenated. The engine
/// builds the same bytes with a counting sort and no list per slab; any difference in a slab
/// count, an offset, an order or the padding shows here.
final class EdgeIndexLayoutTests: XCTestCase {
    /// The reference: per-slab arrays, as simple as the layout's definition.
    static func referenceEdgeIndex(_ record: inout [Double]) {
        let k = Int(record[0])
        let rings = FlatGeometry.ringRanges(of: record)
        let n = rings.last?.upperBound ?? 0
        let c = 1 + k
        var minY = Double.infinity
        var maxY = -Double.infinity
        for i in 0..<n {
            minY = min(minY, record[c + 2 * i + 1])
            maxY = max(maxY, record[c + 2 * i + 1])
        }
        var travel = 0.0
        for ring in rings {
            for i in ring.lowerBound..<(ring.upperBound - 1) { travel += abs(record[c + 2 * i + 3] - record[c + 2 * i + 1]) }
        }
        let height = maxY - minY
        let bound = travel > 0 ? 3 * Double(n) * height / travel : Double(n)
        let slabs = max(1, min(4096, n / 2, Int(bound.rounded(.down))))
        let scale = maxY > minY ? Double(slabs) / (maxY - minY) : 0
        var lists = [[Int32]](repeating: [], count: slabs)
        for ring in rings {
            for i in ring.lowerBound..<(ring.upperBound - 1) {
                let y1 = record[c + 2 * i + 1]
                let y2 = record[c + 2 * i + 3]
                let lo = FlatGeometry.slab(min(y1, y2), minY: minY, scale: scale, slabs: slabs)
                let hi = FlatGeometry.slab(max(y1, y2), minY: minY, scale: scale, slabs: slabs)
                for s in lo...hi { lists[s].append(Int32(i)) }
            }
        }
        for s in lists.indices {
            lists[s].sort { a, b in
                let ea = max(record[c + 2 * Int(a)], record[c + 2 * Int(a) + 2])
                let eb = max(record[c + 2 * Int(b)], record[c + 2 * Int(b) + 2])
                return ea > eb || (ea == eb && a < b)
            }
        }
        var ints: [Int32] = [0]
        for l in lists { ints.append(ints[ints.count - 1] + Int32(l.count)) }
        for l in lists { ints.append(contentsOf: l) }
        if ints.count % 2 == 1 { ints.append(0) }
        record.append(Double(slabs))
        record.append(minY)
        record.append(scale)
        ints.withUnsafeBytes { raw in
            for d in 0..<(raw.count / 8) { record.append(raw.load(fromByteOffset: 8 * d, as: Double.self)) }
        }
    }

    /// Rings of many kinds: stars (spikes crowding slabs), near-circles, combs whose teeth
    /// span the whole height (an edge in every slab), staircases of axis-parallel edges (ties
    /// in east end, horizontal edges in one slab), coordinates on a coarse lattice (many equal
    /// values), and polygons with holes or several parts.
    static func rings(_ rng: inout TestRandom, kind: Int) -> [[LonLat]] {
        let lon = rng.uniform(-170, 170)
        let lat = rng.uniform(-80, 80)
        let n = 65 + Int(rng.next() % 1500)
        switch kind {
        case 0:
            return [Shapes.star(&rng, lon: lon, lat: lat, radius: rng.uniform(1e-4, 5), vertices: n)]
        case 1:
            var ring = (0..<n).map { k -> LonLat in
                let a = 2 * Double.pi * Double(k) / Double(n)
                let r = 0.3 * (1 + 0.01 * rng.uniform(-1, 1))
                return LonLat(lon: lon + r * cos(a), lat: lat + r * sin(a))
            }
            ring.append(ring[0])
            return [ring]
        case 2:
            // A comb: teeth from the spine at lat up to lat + 1, each tooth two vertical edges.
            let teeth = n / 4
            var ring: [LonLat] = []
            for t in 0..<teeth {
                let x = lon + Double(t) * 0.01
                ring.append(LonLat(lon: x, lat: lat))
                ring.append(LonLat(lon: x, lat: lat + 1))
                ring.append(LonLat(lon: x + 0.005, lat: lat + 1))
                ring.append(LonLat(lon: x + 0.005, lat: lat))
            }
            ring.append(LonLat(lon: lon + Double(teeth) * 0.01, lat: lat - 0.5))
            ring.append(LonLat(lon: lon, lat: lat - 0.5))
            ring.append(ring[0])
            return [ring]
        case 3:
            // A staircase on a lattice: axis-parallel edges, many equal coordinates.
            let steps = n / 2
            var ring: [LonLat] = [LonLat(lon: lon, lat: lat)]
            for s in 0..<steps {
                ring.append(LonLat(lon: lon + Double(s + 1) * 0.25, lat: lat + Double(s) * 0.25))
                ring.append(LonLat(lon: lon + Double(s + 1) * 0.25, lat: lat + Double(s + 1) * 0.25))
            }
            ring.append(LonLat(lon: lon, lat: lat + Double(steps) * 0.25))
            ring.append(ring[0])
            return [ring]
        default:
            let outer = Shapes.star(&rng, lon: lon, lat: lat, radius: 2, vertices: n, inner: 0.9...1.0)
            let hole = Shapes.star(&rng, lon: lon, lat: lat, radius: 0.5, vertices: 4 + Int(rng.next() % 200))
            let part = Shapes.star(&rng, lon: lon + 5, lat: lat, radius: 1, vertices: 4 + Int(rng.next() % 300))
            return [outer, hole, part]
        }
    }

    func testSameBytesAsPerSlabLists() {
        for seed in 0..<300 {
            var rng = TestRandom(mixing: UInt64(seed))
            let rings = Self.rings(&rng, kind: seed % 5)
            var coords: [Double] = []
            var layout: [(count: Int, isExterior: Bool)] = []
            for (r, ring) in rings.enumerated() {
                coords += Shapes.flat(ring)
                layout.append((ring.count, r != 1))
            }
            let record = FlatGeometry.polygonRecord(coords: coords, rings: layout)
            var engine = record
            var reference = record
            FlatGeometry.appendEdgeIndex(to: &engine)
            Self.referenceEdgeIndex(&reference)
            XCTAssertEqual(engine.count, reference.count, "seed \(seed): length")
            let first = engine.indices.first { $0 >= reference.count || engine[$0].bitPattern != reference[$0].bitPattern }
            XCTAssertNil(first, "seed \(seed) (kind \(seed % 5), \(coords.count / 2) positions): first difference at double \(first ?? -1)")
        }
    }
}
