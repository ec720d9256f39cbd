@testable import FenceEngine
import Foundation
import SeededRandom

/// The tests' generator: `SplitMix64`, the benchmark's. `TestRandom(mixing:)` multiplies the
/// seed first, so small consecutive seeds (1, 2, 3) start far apart; `TestRandom(seed:)` is
/// plain splitmix64 seeding, for tests whose points were drawn that way.
typealias TestRandom = SplitMix64

extension SplitMix64 {
    init(mixing seed: UInt64) { self.init(seed: seed &* 0x2545_F491_4F6C_DD1D &+ 1) }
}

/// A test fleet's random walk inside a square of `span` degrees from (lon0, lat0): each step
/// turns by up to 0.7 radians, goes a random number of metres, and bounces off the sides.
struct RandomWalk {
    var lon: Double, lat: Double, heading: Double
    let lon0: Double, lat0: Double, span: Double

    mutating func step(_ rng: inout TestRandom, metres: ClosedRange<Double>) {
        heading += rng.uniform(-0.7, 0.7)
        let step = rng.uniform(metres.lowerBound, metres.upperBound)
        lat += step * cos(heading) / 111_320
        lon += step * sin(heading) / (111_320 * cos(lat * .pi / 180))
        if lon < lon0 || lon > lon0 + span { lon = min(max(lon, lon0), lon0 + span); heading = -heading }
        if lat < lat0 || lat > lat0 + span { lat = min(max(lat, lat0), lat0 + span); heading = .pi - heading }
    }
}

/// Random shapes for oracle tests.
enum Shapes {
    /// A closed ring as the flat x, y coordinates the simplicity proofs take.
    static func flat(_ ring: [LonLat]) -> [Double] { ring.flatMap { [$0.lon, $0.lat] } }

    /// Whether GEOS `isValid` holds for a Polygon with this exterior and no holes: the
    /// authority the simplicity proofs are checked against.
    static func isValidByGEOS(_ ring: [LonLat], context: GEOSContext) -> Bool {
        invalidityByGEOS(ring, context: context) == nil
    }

    /// GEOS's reason why that Polygon is invalid, or nil when it is valid.
    static func invalidityByGEOS(_ ring: [LonLat], context: GEOSContext) -> String? {
        guard let geometry = flat(ring).withUnsafeBufferPointer({ context.makePolygonal(coords: $0, rings: [(ring.count, true)]) })
        else { return "GEOS could not build it" }
        return context.invalidityReason(geometry)
    }

    /// A star-shaped ring around (lon, lat): alternating outer and inner radii, closed.
    static func star(_ rng: inout TestRandom, lon: Double, lat: Double, radius: Double, vertices: Int, inner: ClosedRange<Double> = 0.5...1.0)
        -> [LonLat]
    {
        var ring: [LonLat] = []
        let phase = rng.uniform(0, 2 * .pi)
        for k in 0..<vertices {
            let a = phase + 2 * .pi * Double(k) / Double(vertices)
            let r = k % 2 == 0 ? radius : radius * rng.uniform(inner.lowerBound, inner.upperBound)
            ring.append(LonLat(lon: lon + r * cos(a), lat: lat + r * sin(a)))
        }
        ring.append(ring[0])
        return ring
    }

    /// A straight corridor (a route's buffer): a rectangle `length` degrees long and `width`
    /// degrees wide centred on (lon, lat), its long side `angle` radians from east; closed,
    /// counter-clockwise.
    static func corridor(lon: Double, lat: Double, length: Double, width: Double, angle: Double) -> [LonLat] {
        let (c, s) = (cos(angle), sin(angle))
        let (l, w) = (length / 2, width / 2)
        return [(-l, -w), (l, -w), (l, w), (-l, w), (-l, -w)].map { LonLat(lon: lon + $0.0 * c - $0.1 * s, lat: lat + $0.0 * s + $0.1 * c) }
    }

    /// A polygon with up to two holes well inside its kernel.
    static func polygonWithHoles(_ rng: inout TestRandom, lon: Double, lat: Double, radius: Double) -> Polygon {
        let exterior = star(&rng, lon: lon, lat: lat, radius: radius, vertices: 6 + Int(rng.next() % 20))
        var holes: [[LonLat]] = []
        let holeCount = Int(rng.next() % 3)
        for h in 0..<holeCount {
            // Holes at +-0.2 radius, each at most 0.12 radius: inside the 0.45-radius kernel, apart.
            let dx = h == 0 ? -0.2 * radius : 0.2 * radius
            holes.append(star(&rng, lon: lon + dx, lat: lat, radius: 0.12 * radius, vertices: 4 + Int(rng.next() % 6)))
        }
        return Polygon(exterior: exterior, holes: holes)
    }

    /// Every vertex of every ring, and the midpoints of every edge.
    static func boundaryPoints(_ polygons: [Polygon]) -> [LonLat] {
        var out: [LonLat] = []
        for p in polygons {
            for ring in p.rings {
                for i in 0..<(ring.count - 1) {
                    out.append(ring[i])
                    out.append(LonLat(lon: (ring[i].lon + ring[i + 1].lon) / 2, lat: (ring[i].lat + ring[i + 1].lat) / 2))
                }
            }
        }
        return out
    }
}

/// The oracle: GEOS prepared `covers` on a geometry built straight from the input fence, and
/// the ellipsoidal distance for circles. No index, no fast filter.
final class Oracle {
    let context = GEOSContext()
    var prepared: [String: GEOSPreparedGeometry] = [:]
    var circles: [String: (LonLat, Double)] = [:]

    init(_ fences: [Fence]) {
        for f in fences { add(f) }
    }

    func add(_ f: Fence) {
        switch f.shape {
        case .circle(let c, let r):
            prepared[f.id] = nil
            circles[f.id] = (c, r)
        case .polygons(let polygons):
            circles[f.id] = nil
            var coords: [Double] = []
            var rings: [(count: Int, isExterior: Bool)] = []
            for p in polygons {
                for (i, ring) in p.rings.enumerated() {
                    for q in ring { coords += [q.lon, q.lat] }
                    rings.append((ring.count, i == 0))
                }
            }
            let g = coords.withUnsafeBufferPointer { context.makePolygonal(coords: $0, rings: rings) }!
            prepared[f.id] = GEOSPreparedGeometry(g)!
        }
    }

    func remove(_ id: String) {
        prepared[id] = nil
        circles[id] = nil
    }

    /// Ids covering a WGS84 point, sorted.
    func ids(covering p: LonLat) -> [String] {
        var out: [String] = []
        for (id, pg) in prepared where pg.covers(x: p.lon, y: p.lat)! { out.append(id) }
        for (id, (c, r)) in circles where Geodesic.distance(lon1: c.lon, lat1: c.lat, lon2: p.lon, lat2: p.lat) <= r {
            out.append(id)
        }
        return out.sorted()
    }
}

/// Events as short lines for hand-computed expectations: "time device fence kind [initial]
/// [reason] [inside_s]s".
func summary(_ events: [FenceEvent]) -> [String] {
    events.map { e in
        var s = "\(Int(e.time)) \(e.device) \(e.fence) \(e.kind)"
        if e.initial { s += " initial" }
        if let r = e.reason { s += " \(r.rawValue)" }
        if let i = e.insideSeconds { s += " \(Int(i))s" }
        return s
    }
}

/// Values near `v`: itself and 1, 2 and 4 ulps either side (for tests at edges and cell borders).
func ulpsAround(_ v: Double) -> [Double] {
    var out = [v]
    for k in [1, 2, 4] {
        var a = v
        var b = v
        for _ in 0..<k {
            a = a.nextUp
            b = b.nextDown
        }
        out += [a, b]
    }
    return out
}

/// The least value of `f` over [0, 1], for a function with one minimum there at the scale of
/// the sampling: `samples` + 1 evenly spaced values, then a ternary search between the
/// neighbours of the least (`rounds` steps). The tests' oracle for the nearest point of a
/// segment.
func minimumOverUnitInterval(samples: Int, rounds: Int, _ f: (Double) -> Double) -> Double {
    var bestT = 0.0
    var best = Double.infinity
    for i in 0...samples {
        let t = Double(i) / Double(samples)
        let v = f(t)
        if v < best { (bestT, best) = (t, v) }
    }
    var lo = max(0, bestT - 1 / Double(samples))
    var hi = min(1, bestT + 1 / Double(samples))
    for _ in 0..<rounds {
        let m1 = lo + (hi - lo) / 3
        let m2 = hi - (hi - lo) / 3
        if f(m1) < f(m2) { hi = m2 } else { lo = m1 }
    }
    return min(best, f((lo + hi) / 2))
}

/// What an oracle's scenarios exercised, by rule: counts the oracle keeps, which each test
/// asserts are not zero for the cases it is about, and prints.
struct RuleCounts {
    var counts: [String: Int] = [:]
    subscript(_ key: String) -> Int {
        get { counts[key] ?? 0 }
        set { counts[key] = newValue }
    }
    mutating func add(_ o: RuleCounts) { counts.merge(o.counts, uniquingKeysWith: +) }
    var description: String { counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") }
}

/// A fix of `device` at `t`, `metres` east of (0, 0) on the equator: hand-computed scenarios
/// against a circle centred there.
func fixEast(_ device: String, _ metres: Double, _ t: Double) -> Position {
    let p = Geodesic.destination(lon: 0, lat: 0, azimuth: 90, distance: metres)
    return Position(device: device, time: t, lon: p.lon, lat: p.lat)
}
