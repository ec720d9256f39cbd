@testable import FenceEngine
import SpatialIndex
import XCTest

/// `--margin` on small polygons: positions in pure cells of a polygon's grid, far enough from
/// every mixed cell, are decided without measuring (`SmallPolygonGrid.clearance`). The oracle is
/// the measured distance (`boundaryDistance`, edge by edge): the bound never exceeds it, and
/// `classify` decides as the measured rule does.
final class MarginPolygonBoundsTests: XCTestCase {
    /// Random small polygons: stars of 5-31 points, some with holes, some MultiPolygons, some
    /// long and thin, across the antimeridian and near a pole. None above 64 positions, so
    /// each is stored as a `.polygon` record with a grid.
    static func fences(seed: UInt64) -> [Fence] {
        var rng = TestRandom(mixing: seed)
        var fences: [Fence] = []
        let places: [(lon: Double, lat: Double)] = [(8.5, 47.4), (179.85, -17), (-179.85, 64), (20, 83), (-70, -54)]
        for i in 0..<24 {
            let place = places[i % places.count]
            let lon = place.lon + rng.uniform(-0.02, 0.02)
            let lat = place.lat + rng.uniform(-0.02, 0.02)
            let radius = rng.uniform(0.001, 0.05)
            switch rng.next() % 4 {
            case 0:
                fences.append(Fence(id: "h\(i)", shape: .polygons([Shapes.polygonWithHoles(&rng, lon: lon, lat: lat, radius: radius)])))
            case 1:
                let parts = (0..<2).map { k in
                    Polygon(exterior: Shapes.star(&rng, lon: lon + (lon > 0 ? -1 : 1) * Double(k) * 2.5 * radius, lat: lat, radius: radius, vertices: 6 + Int(rng.next() % 10)))
                }
                fences.append(Fence(id: "m\(i)", shape: .polygons(parts)))
            case 2:
                fences.append(
                    .polygon(
                        id: "r\(i)",
                        exterior: Shapes.corridor(lon: lon, lat: lat, length: radius * 2, width: radius / 20, angle: rng.uniform(0, .pi))))
            default:
                fences.append(.polygon(id: "s\(i)", exterior: Shapes.star(&rng, lon: lon, lat: lat, radius: radius, vertices: 5 + Int(rng.next() % 27))))
            }
        }
        return fences
    }

    /// A position near fence `f`: in or around its box, on or beside a vertex, or across the
    /// antimeridian from it.
    static func position(near f: Fence, _ rng: inout TestRandom) -> LonLat {
        guard case .polygons(let parts) = f.shape else { fatalError() }
        let points = parts.flatMap { $0.exterior + $0.holes.flatMap { $0 } }
        var box = Box.empty
        for q in points { box.extend(q.lon, q.lat) }
        switch rng.next() % 5 {
        case 0, 1, 2:
            let w = box.maxX - box.minX, h = box.maxY - box.minY
            var lon = rng.uniform(box.minX - 0.1 * w, box.maxX + 0.1 * w)
            if lon > 180 { lon -= 360 }
            if lon < -180 { lon += 360 }
            return LonLat(lon: lon, lat: min(90, max(-90, rng.uniform(box.minY - 0.1 * h, box.maxY + 0.1 * h))))
        case 3:
            let v = points[Int(rng.next() % UInt64(points.count))]
            let d = [0, 1e-9, 1e-6, 1e-4][Int(rng.next() % 4)]
            return LonLat(lon: min(180, max(-180, v.lon + rng.uniform(-d, d))), lat: min(90, max(-90, v.lat + rng.uniform(-d, d))))
        default:
            let v = points[Int(rng.next() % UInt64(points.count))]
            return LonLat(lon: v.lon > 0 ? -180 + (180 - v.lon) * rng.uniform(0, 2) : 180 - (v.lon + 180) * rng.uniform(0, 2), lat: v.lat)
        }
    }

    func testClearanceIsALowerBoundOfTheMeasuredDistance() {
        var bounded = 0, total = 0
        for seed in UInt64(1)...30 {
            var store = FenceStore()
            let fences = Self.fences(seed: seed)
            let results = store.add(fences, threads: 1)
            XCTAssertTrue(results.allSatisfy { $0.error == nil }, "\(results.compactMap(\.error))")
            var rng = TestRandom(mixing: seed ^ 0xB0_0D)
            for fence in fences {
                let slot = Int(store.handle(id: fence.id)!.rawValue)
                XCTAssertEqual(store.kind(slot), .polygon, fence.id)
                let record = store.geometry.base + HotWord.start(store.slotHot[slot])
                for _ in 0..<300 {
                    let p = Self.position(near: fence, &rng)
                    let (kx, ky) = PolygonDistance.scales(lat: p.lat)
                    let bound = SmallPolygonGrid.clearance(x: p.lon, y: p.lat, record: record, kx: kx, ky: ky, enough: .infinity)
                    let measured = store.boundaryDistance(slot: slot, p)
                    XCTAssertLessThanOrEqual(bound, measured * (1 + 1e-12) + 1e-9, "\(fence.id) at \(p)")
                    total += 1
                    if bound > 0 { bounded += 1 }
                }
            }
        }
        XCTAssertGreaterThan(bounded, total / 4, "positions with a bound: \(bounded) of \(total)")
    }

    /// `classify`'s classes at `p`, each checked against the measured rule: covered or not
    /// (`fences(covering:)`), and the measured distance to the boundary against the margin.
    static func assertClassifiedAsMeasured(
        _ store: FenceStore, _ p: LonLat, margin: Double, _ context: String, line: UInt = #line
    ) -> [NearFence.Class] {
        var scratch = ContainmentScratch()
        var out: [NearFence] = []
        store.classify(p, margin: margin, time: 0, expiring: false, scratch: &scratch, into: &out)
        let covering = Set(store.fences(covering: p).map(\.rawValue))
        return out.map { near in
            let far = store.boundaryDistance(slot: Int(near.slot), p) >= margin
            let inside = covering.contains(near.slot)
            let want: NearFence.Class = inside ? (far ? .deepInside : .insideBand) : (far ? .farOutside : .outsideBand)
            XCTAssertEqual(
                near.cls, want, "\(context), \(store.id(of: FenceHandle(rawValue: near.slot))) at \(p), margin \(margin)", line: line)
            return want
        }
    }

    /// Large polygons (an edge tree each): with a margin as the cutoff, the walk opens only
    /// boxes nearer than it, and the answer is the distance below it or some value at or above
    /// it; `classify` decides as the full measure does.
    func testLargePolygonsMeasuredUpToTheMargin() {
        var beyond = 0, below = 0
        for seed in UInt64(61)...66 {
            var rng = TestRandom(mixing: seed)
            var fences: [Fence] = []
            for (i, place) in [(8.5, 47.4), (179.8, -17), (-70, -54), (20, 83)].enumerated() {
                let holes = [Shapes.star(&rng, lon: place.0 + 0.01, lat: place.1, radius: 0.004, vertices: 80).reversed() as [LonLat]]
                fences.append(
                    .polygon(
                        id: "big\(i)", exterior: Shapes.star(&rng, lon: place.0, lat: place.1, radius: 0.1, vertices: 100 + Int(rng.next() % 1_900)),
                        holes: seed % 2 == 0 ? holes : []))
            }
            var store = FenceStore()
            let results = store.add(fences, threads: 1)
            XCTAssertTrue(results.allSatisfy { $0.error == nil }, "\(results.compactMap(\.error))")
            for _ in 0..<1_500 {
                let fence = fences[Int(rng.next() % UInt64(fences.count))]
                let slot = Int(store.handle(id: fence.id)!.rawValue)
                XCTAssertEqual(store.kind(slot), .indexedPolygon)
                let p = Self.position(near: fence, &rng)
                let margin = [0.5, 5, 25, 150, 2_000][Int(rng.next() % 5)]
                let measured = store.boundaryDistance(slot: slot, p)
                let cut = store.boundaryDistance(slot: slot, p, cutoff: margin)
                if measured < margin {
                    XCTAssertEqual(cut, measured, "\(fence.id) at \(p), margin \(margin)")
                    below += 1
                } else {
                    XCTAssertGreaterThanOrEqual(cut, margin, "\(fence.id) at \(p), margin \(margin)")
                    beyond += 1
                }
                _ = Self.assertClassifiedAsMeasured(store, p, margin: margin, "seed \(seed)")
            }
        }
        XCTAssertGreaterThan(below, 300)
        XCTAssertGreaterThan(beyond, 3_000)
    }

    /// A polygon 1e-8 degrees across with a slanted edge on the antimeridian (within the range
    /// tolerance of it): the edge is measured as vertical parts at its first end's longitude,
    /// which the grid must count where it files the edge (the review's case: a bound of 3.4e-5
    /// m against a measured 6.9e-6 m, and a fix classed deep inside at a 2e-5 m margin).
    func testASlantedEdgeOnTheAntimeridianKeepsItsCellsMixed() {
        let w = 1e-8, h = 1e-8
        func at(_ u: Double, _ v: Double) -> LonLat { LonLat(lon: 180 - w + u * w / 16, lat: 10 + v * h / 8) }
        let start = LonLat(lon: 180 - FenceValidation.rangeTolerance, lat: 10)
        var store = FenceStore()
        let results = store.add([.polygon(id: "seam", exterior: [start, LonLat(lon: 180, lat: 10 + h / 2), at(8, 8), at(0, 4), start])], threads: 1)
        XCTAssertTrue(results.allSatisfy { $0.error == nil }, "\(results.compactMap(\.error))")
        let slot = Int(store.handle(id: "seam")!.rawValue)
        XCTAssertEqual(store.kind(slot), .polygon)
        let record = store.geometry.base + HotWord.start(store.slotHot[slot])
        let p = at(14.5, 3.5)
        let (kx, ky) = PolygonDistance.scales(lat: p.lat)
        let bound = SmallPolygonGrid.clearance(x: p.lon, y: p.lat, record: record, kx: kx, ky: ky, enough: .infinity)
        XCTAssertLessThanOrEqual(bound, store.boundaryDistance(slot: slot, p))
        XCTAssertFalse(Self.assertClassifiedAsMeasured(store, p, margin: 2e-5, "seam").isEmpty)
    }

    /// `classify` with a margin gives each polygon the class the measured distance gives.
    func testClassifyDecidesAsTheMeasuredDistance() {
        var decided = [NearFence.Class: Int]()
        for seed in UInt64(31)...50 {
            var store = FenceStore()
            let fences = Self.fences(seed: seed)
            store.add(fences, threads: 1)
            var rng = TestRandom(mixing: seed)
            for _ in 0..<2_000 {
                let p = Self.position(near: fences[Int(rng.next() % UInt64(fences.count))], &rng)
                let margin = [0.5, 5, 25, 150, 2_000][Int(rng.next() % 5)]
                for cls in Self.assertClassifiedAsMeasured(store, p, margin: margin, "seed \(seed)") { decided[cls, default: 0] += 1 }
            }
        }
        for cls in [NearFence.Class.farOutside, .outsideBand, .insideBand, .deepInside] {
            XCTAssertGreaterThan(decided[cls] ?? 0, 100, "\(cls)")
        }
    }
}
