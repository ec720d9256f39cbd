@testable import FenceEngine
import SeededRandom
import XCTest

/// `cross` drops candidates whose index boxes the segment passes clear of, before any exact
/// test: a wrong drop would lose a `cross` event silently. Random segments (across the
/// antimeridian, vertical, horizontal, on a grid the fences' vertices share so that they
/// touch vertices and run along edges, through holes) against random polygons, MultiPolygons
/// cut at the antimeridian and circles (across it, round a pole), checked against two
/// oracles that never look at a box: the exact test on every fence (the unpruned path:
/// GEOS `intersects` for polygons, the circle search), and dense sampling along the segment.
final class CrossPruningTests: XCTestCase {
    /// Fences round three places (Europe, the antimeridian, the north pole), half of the seeds
    /// with every coordinate on a 1/8-degree grid.
    static func fences(_ rng: inout TestRandom, grid: Bool) -> [Fence] {
        func snap(_ v: Double) -> Double { grid ? (v * 8).rounded() / 8 : v }
        func snapped(_ ring: [LonLat]) -> [LonLat] { ring.map { LonLat(lon: snap($0.lon), lat: snap($0.lat)) } }
        var fences: [Fence] = []
        let places: [(lon: Double, lat: Double)] = [(10, 45), (179, 10), (-179, 10), (30, 84)]
        for i in 0..<int(&rng, 12...24) {
            let place = places[i % places.count]
            let lon = place.lon + rng.uniform(-3, 3)
            let lat = min(88, place.lat + rng.uniform(-3, 3))
            switch rng.next() % 5 {
            case 4:
                // A long thin corridor, indexed under many boxes (`polygonBoxes`'s pieces).
                let ring = Shapes.corridor(
                    lon: min(176, max(-176, lon)), lat: min(84, lat), length: rng.uniform(1, 5), width: rng.uniform(0.0005, 0.02),
                    angle: rng.uniform(0, .pi))
                fences.append(.polygon(id: "r\(i)", exterior: snapped(ring)))
            case 0:
                // A star, sometimes with a square hole round its centre.
                let radius = rng.uniform(0.3, 2)
                let star = snapped(Shapes.star(&rng, lon: min(178, max(-178, lon)), lat: lat, radius: radius, vertices: 2 * int(&rng, 3...9)))
                var holes: [[LonLat]] = []
                if rng.next() % 2 == 0 {
                    let c = star.dropLast().reduce((0.0, 0.0)) { ($0.0 + $1.lon, $0.1 + $1.lat) }
                    let (cx, cy) = (snap(c.0 / Double(star.count - 1)), snap(c.1 / Double(star.count - 1)))
                    let h = grid ? 0.125 : radius * 0.2
                    holes = [[(cx - h, cy - h), (cx + h, cy - h), (cx + h, cy + h), (cx - h, cy + h), (cx - h, cy - h)].map { LonLat(lon: $0.0, lat: $0.1) }]
                }
                fences.append(.polygon(id: "p\(i)", exterior: star, holes: holes))
            case 1:
                // A box cut at the antimeridian (RFC 7946), as two polygons meeting on it.
                let h = snap(rng.uniform(0.2, 1.5))
                let w1 = snap(rng.uniform(0.2, 1.5))
                let w2 = snap(rng.uniform(0.2, 1.5))
                let y = snap(rng.uniform(5, 15))
                let east = [(180 - w1, y - h), (180, y - h), (180, y), (180, y + h), (180 - w1, y + h), (180 - w1, y - h)]
                let west = [(-180, y - h), (-180 + w2, y - h), (-180 + w2, y + h), (-180, y + h), (-180, y), (-180, y - h)]
                let parts = [east, west].map { Polygon(exterior: $0.map { LonLat(lon: $0.0, lat: $0.1) }) }
                fences.append(Fence(id: "m\(i)", shape: .polygons(parts)))
            default:
                // Circles of 1-300 km, some across the antimeridian or round the pole.
                let radius = rng.next() % 3 == 0 ? rng.uniform(1000, 20000) : rng.uniform(20000, 300_000)
                let centre = place.lon == 30 && rng.next() % 2 == 0 ? LonLat(lon: snap(rng.uniform(-180, 180)), lat: 89) : LonLat(lon: snap(lon > 180 ? lon - 360 : lon), lat: snap(lat))
                fences.append(.circle(id: "c\(i)", lon: centre.lon, lat: centre.lat, radius: radius))
            }
        }
        return fences
    }

    /// A store of random fences, and the fences it took (snapping to the grid can make a star's
    /// ring touch itself, which the store refuses).
    static func store(_ rng: inout TestRandom, grid: Bool) -> (FenceStore, [Fence]) {
        let fences = Self.fences(&rng, grid: grid)
        var store = FenceStore()
        let results = store.add(fences, threads: 1)
        return (store, zip(fences, results).filter { $0.1.error == nil }.map(\.0))
    }

    static func int(_ rng: inout TestRandom, _ r: ClosedRange<Int>) -> Int { r.lowerBound + Int(rng.next() % UInt64(r.count)) }

    /// A segment near one of the fences: random, vertical, horizontal, from or to a vertex of a
    /// polygon, along an edge, through a hole, or across the antimeridian.
    static func segment(_ rng: inout TestRandom, fences: [Fence], grid: Bool) -> (LonLat, LonLat) {
        func snap(_ v: Double) -> Double { grid ? (v * 8).rounded() / 8 : v }
        func wrap(_ p: LonLat) -> LonLat {
            var lon = p.lon
            if lon > 180 { lon -= 360 }
            if lon < -180 { lon += 360 }
            return LonLat(lon: lon, lat: max(-90, min(90, p.lat)))
        }
        let fence = fences[Int(rng.next() % UInt64(fences.count))]
        var vertices: [LonLat]
        switch fence.shape {
        case .circle(let c, _): vertices = [c]
        case .polygons(let parts): vertices = parts.flatMap { $0.rings.flatMap { $0 } }
        }
        let v = vertices[Int(rng.next() % UInt64(vertices.count))]
        let w = vertices[Int(rng.next() % UInt64(vertices.count))]
        let step = [0.05, 0.5, 2, 6][Int(rng.next() % 4)]
        let a = wrap(LonLat(lon: snap(v.lon + rng.uniform(-step, step)), lat: snap(v.lat + rng.uniform(-step, step))))
        switch rng.next() % 8 {
        case 0: return (a, wrap(LonLat(lon: a.lon, lat: snap(a.lat + rng.uniform(-step, step)))))  // vertical
        case 1: return (a, wrap(LonLat(lon: snap(a.lon + rng.uniform(-step, step)), lat: a.lat)))  // horizontal
        case 2: return (a, v)  // to a vertex
        case 3:
            // Along the line through two vertices, beyond them (edge-on, or through the fence).
            let t = rng.uniform(1, 2)
            return (wrap(LonLat(lon: v.lon + t * (w.lon - v.lon), lat: v.lat + t * (w.lat - v.lat))), wrap(LonLat(lon: v.lon - (t - 1) * (w.lon - v.lon), lat: v.lat - (t - 1) * (w.lat - v.lat))))
        case 4:
            // Across the antimeridian, the short way.
            let lat = snap(rng.uniform(0, 20))
            return (LonLat(lon: snap(rng.uniform(177, 180)), lat: lat), LonLat(lon: snap(rng.uniform(-180, -177)), lat: snap(lat + rng.uniform(-step, step))))
        case 5: return (a, wrap(LonLat(lon: snap(2 * v.lon - a.lon), lat: snap(2 * v.lat - a.lat))))  // through a vertex
        default: return (a, wrap(LonLat(lon: snap(a.lon + rng.uniform(-step, step)), lat: snap(a.lat + rng.uniform(-step, step)))))
        }
    }

    /// The exact test on every piece, as `cross` ran it on every candidate before boxes were
    /// looked at: GEOS `intersects` for polygons, the circle search for circles.
    static func meets(_ engine: EventEngine, _ a: LonLat, _ b: LonLat, slot: Int32, scratch: inout ApplyScratch) -> Bool {
        EventEngine.segmentPieces(a, b).contains { p, q in exact(engine, p, q, slot: slot, scratch: &scratch) }
    }

    static func exact(_ engine: EventEngine, _ p: LonLat, _ q: LonLat, slot: Int32, scratch: inout ApplyScratch) -> Bool {
        engine.store.kind(Int(slot)) == .circle
            ? engine.segment(p, q, intersects: slot, scratch: &scratch) : engine.segmentByGEOS(p, q, intersects: slot, scratch: &scratch)
    }

    static func mayMeet(_ engine: EventEngine, _ a: LonLat, _ b: LonLat, slot: Int32) -> Bool {
        EventEngine.segmentPieces(a, b).contains { p, q in engine.segment(p, q, mayMeetBoxesOf: slot) }
    }

    func testNoFenceTheSegmentMeetsIsDropped() throws {
        var met = 0, sampledHits = 0, kept = 0, dropped = 0, edgeChecks = 0, edgeMet = 0, failures: [String] = []
        var pieced = 0
        for seed in UInt64(1)...120 {
            var rng = TestRandom(mixing: seed)
            let grid = seed % 2 == 0
            let (store, fences) = Self.store(&rng, grid: grid)
            pieced += store.sharedBoxes.count
            var settings = EventSettings()
            settings.crossDetection = true
            let engine = try EventEngine(store: store, settings: settings)
            var scratch = ApplyScratch()
            for _ in 0..<150 {
                let (a, b) = Self.segment(&rng, fences: fences, grid: grid)
                for fence in fences {
                    let slot = store.handle(id: fence.id)!.rawValue
                    let may = Self.mayMeet(engine, a, b, slot: slot)
                    if may { kept += 1 } else { dropped += 1 }
                    // Oracle 1: the exact test the unpruned path ran.
                    if Self.meets(engine, a, b, slot: slot, scratch: &scratch) {
                        met += 1
                        if !may { failures.append("seed \(seed): \(fence.id) met by \(a) -> \(b) but dropped") }
                    }
                    for (p, q) in EventEngine.segmentPieces(a, b) {
                        // A small polygon's edges decide a piece with an end outside as GEOS does.
                        var up: (Double, Double, Double)?
                        var uq: (Double, Double, Double)?
                        if !store.covers(slot: slot, p, unit: &up, scratch: &scratch.containment)
                            || !store.covers(slot: slot, q, unit: &uq, scratch: &scratch.containment)
                        {
                            let geos = Self.exact(engine, p, q, slot: slot, scratch: &scratch)
                            if engine.segment(p, q, intersects: slot, scratch: &scratch) != geos {
                                failures.append("seed \(seed): \(fence.id) and \(p) -> \(q): GEOS says \(geos), the edges not")
                            }
                            if store.kind(Int(slot)) == .polygon {
                                edgeChecks += 1
                                if geos { edgeMet += 1 }
                            }
                        }
                        // Oracle 2: points along the segment (on its pieces) the fence covers.
                        for k in 0...64 {
                            let t = Double(k) / 64
                            let x = LonLat(lon: p.lon + t * (q.lon - p.lon), lat: p.lat + t * (q.lat - p.lat))
                            var unit: (Double, Double, Double)?
                            if store.covers(slot: slot, x, unit: &unit, scratch: &scratch.containment) {
                                sampledHits += 1
                                if !may { failures.append("seed \(seed): \(fence.id) covers \(x) on \(a) -> \(b) but dropped") }
                                break
                            }
                        }
                    }
                }
            }
        }
        print("cross pruning: \(met) fence-segment pairs met, \(sampledHits) seen by sampling; \(kept) kept, \(dropped) dropped; \(edgeChecks) small-polygon pieces checked against GEOS, \(edgeMet) meeting")
        XCTAssertEqual(failures.count, 0, "\(failures.prefix(5))")
        XCTAssertGreaterThan(met, 5000)
        XCTAssertGreaterThan(dropped, 50_000, "the boxes drop most fences")
        XCTAssertGreaterThan(edgeChecks, 50_000)
        XCTAssertGreaterThan(edgeMet, 3000)
        XCTAssertGreaterThan(pieced, 100, "fences indexed under many boxes")
    }

    /// End to end: the engine's `cross` events over random jumping tracks equal the rule
    /// applied to every fence without an index: both fixes not covered, and the segment meets
    /// the fence (no hysteresis, so a pair is inside exactly when its fence covers the fix).
    func testCrossEventsEqualTheRuleOverEveryFence() throws {
        var total = 0, failures: [String] = []
        for seed in UInt64(1)...40 {
            var rng = TestRandom(mixing: seed &+ 1000)
            let grid = seed % 2 == 0
            let (store, fences) = Self.store(&rng, grid: grid)
            var settings = EventSettings()
            settings.crossDetection = true
            var engine = try EventEngine(store: store, settings: settings)
            var fixes: [Position] = []
            for d in 0..<12 {
                var (a, b) = Self.segment(&rng, fences: fences, grid: grid)
                for k in 0..<15 {
                    fixes.append(Position(device: "d\(d)", time: Double(100 * k), lon: a.lon, lat: a.lat))
                    // The next segment starts where this one ended.
                    let (_, next) = Self.segment(&rng, fences: fences, grid: grid)
                    a = b
                    b = rng.next() % 2 == 0 ? next : b
                    if a == b { b = next }
                }
            }
            let got = Set(engine.evaluate(fixes, threads: 1 + Int(seed % 2)).events.filter { $0.kind == .cross }.map { "\($0.time) \($0.device) \($0.fence)" })
            var expected = Set<String>()
            var scratch = ApplyScratch()
            let checker = try EventEngine(store: store, settings: settings)
            for d in 0..<12 {
                let track = fixes.filter { $0.device == "d\(d)" }
                for k in 1..<track.count {
                    let a = LonLat(lon: track[k - 1].lon, lat: track[k - 1].lat)
                    let b = LonLat(lon: track[k].lon, lat: track[k].lat)
                    for fence in fences {
                        let slot = store.handle(id: fence.id)!.rawValue
                        var ua: (Double, Double, Double)?
                        var ub: (Double, Double, Double)?
                        if store.covers(slot: slot, a, unit: &ua, scratch: &scratch.containment) { continue }
                        if store.covers(slot: slot, b, unit: &ub, scratch: &scratch.containment) { continue }
                        if Self.meets(checker, a, b, slot: slot, scratch: &scratch) { expected.insert("\(track[k].time) d\(d) \(fence.id)") }
                    }
                }
            }
            total += expected.count
            if got != expected {
                failures.append("seed \(seed): missing \(expected.subtracting(got).sorted().prefix(3)), extra \(got.subtracting(expected).sorted().prefix(3))")
            }
        }
        print("cross end to end: \(total) cross events")
        XCTAssertEqual(failures, [])
        XCTAssertGreaterThan(total, 500)
    }
}
