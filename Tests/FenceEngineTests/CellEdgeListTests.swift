import CGEOS
@testable import FenceEngine
import XCTest

extension GEOSPreparedGeometry {
    /// `contains` for one point (boundary outside, unlike `covers`). Nil on a GEOS exception.
    func contains(x: Double, y: Double) -> Bool? {
        guard let point = base.context.makePoint(x: x, y: y) else { return nil }
        switch GEOSPreparedContains_r(base.context.handle, raw, point.raw) {
        case 0: return false
        case 1: return true
        default: return nil
        }
    }
}

/// The cell grid of an indexed record as values (`FlatGeometry.insertCellGrid`), read the way
/// the query reads it.
struct CellGridView {
    var side: Int
    var minX, minY, maxX, maxY, scaleX, scaleY, widthX, widthY: Double
    /// Per cell (row-major), its code and its listed edges.
    var codes: [UInt32]
    var lists: [[Int]]

    init(_ record: UnsafePointer<Double>) {
        let g = RingLocator.cellGrid(of: record)
        side = Int(g[0])
        (minX, minY, maxX, maxY, scaleX, scaleY, widthX, widthY) = (g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8])
        let words = UnsafeRawPointer(g + FlatGeometry.cellHeaderCount).assumingMemoryBound(to: UInt32.self)
        let entries = UnsafeRawPointer(words + (side * side + 1))
        let wide = g[9] != 0
        codes = (0..<(side * side)).map { words[$0] & 7 }
        lists = (0..<(side * side)).map { c in
            (Int(words[c] >> 3)..<Int(words[c + 1] >> 3)).map { e in
                wide ? Int(entries.load(fromByteOffset: 4 * e, as: UInt32.self)) : Int(entries.load(fromByteOffset: 2 * e, as: UInt16.self))
            }
        }
    }

    /// The cell a point maps to, as the query maps it.
    func cell(_ x: Double, _ y: Double) -> Int {
        FlatGeometry.slab(y, minY: minY, scale: scaleY, slabs: side) * side + FlatGeometry.slab(x, minY: minX, scale: scaleX, slabs: side)
    }

    /// The cells with a reference (codes 2 and 3) whose centre maps to another cell: the
    /// count from the centre needs the segment to P inside the cell, so there must be none.
    var referencesOutsideTheirCell: [Int] {
        (0..<(side * side)).filter { c in
            let p = centre(c)
            return (codes[c] == 2 || codes[c] == 3) && cell(p.lon, p.lat) != c
        }
    }

    /// The reference point of a cell, as the query computes it.
    func centre(_ c: Int) -> LonLat {
        LonLat(lon: FlatGeometry.cellCentre(c % side, min: minX, width: widthX), lat: FlatGeometry.cellCentre(c / side, min: minY, width: widthY))
    }
}

/// Point location in the mixed cells of large polygons by counting crossings from the cell's
/// centre (`RingLocator.cellLocation`): the grid's answer, wherever it gives one, and the
/// store's, agree with GEOS; the filing of edges under cells is conservative; and the path does
/// decide most points in mixed cells instead of falling back.
final class CellEdgeListTests: XCTestCase {
    /// How the points of a check went through the grid of indexed fences.
    struct Tally: CustomStringConvertible {
        var pure = 0
        /// Points in mixed cells with a reference that the crossing count decided, or left to the slab.
        var decided = 0
        var fellBack = 0
        /// Points in mixed cells without a reference.
        var noReference = 0
        var description: String { "pure \(pure), decided \(decided), fell back \(fellBack), no reference \(noReference)" }
    }

    func withRecord<T>(_ store: FenceStore, _ h: FenceHandle, _ body: (UnsafePointer<Double>) -> T) -> T {
        store.geometry.withUnsafeBufferPointer { body($0.baseAddress! + store.geometryStart(Int(h.rawValue))) }
    }

    /// A store of the fences, every one accepted.
    func build(_ fences: [Fence], line: UInt = #line) -> FenceStore {
        var store = FenceStore()
        let results = store.add(fences, threads: 2)
        XCTAssertTrue(results.allSatisfy { $0.error == nil }, "\(results.compactMap(\.error))", line: line)
        return store
    }

    /// Every point against every fence of `store` (made of `fences`): the store's ids equal
    /// GEOS's, and wherever the grid of an indexed fence gives an answer, it is GEOS's strictly:
    /// interior only where GEOS `contains` (so never on the boundary), exterior only where GEOS
    /// does not `cover`.
    func check(_ fences: [Fence], _ store: FenceStore, _ points: [LonLat], tally: inout Tally, _ label: String, line: UInt = #line) throws {
        let oracle = Oracle(fences)
        let handles = fences.map { store.handle(id: $0.id)! }
        for h in handles {
            XCTAssertEqual(store.slotHot[Int(h.rawValue)] & 3, FlatGeometry.Kind.indexedPolygon.rawValue, label, line: line)
            XCTAssertEqual(withRecord(store, h) { CellGridView($0).referencesOutsideTheirCell }, [], label, line: line)
        }
        var wrong = 0
        for p in points {
            if store.ids(covering: p) != oracle.ids(covering: p) {
                wrong += 1
                if wrong <= 5 { XCTFail("\(label): store says \(store.ids(covering: p)) at \(p), GEOS \(oracle.ids(covering: p))", line: line) }
            }
            for (f, h) in zip(fences, handles) {
                let (code, cell) = withRecord(store, h) {
                    (RingLocator.gridCode(x: p.lon, y: p.lat, record: $0), RingLocator.cellLocation(x: p.lon, y: p.lat, record: $0))
                }
                switch code {
                case 0, 1: tally.pure += 1
                case 2, 3: if cell == nil { tally.fellBack += 1 } else { tally.decided += 1 }
                case 4: tally.noReference += 1
                default: break
                }
                guard let cell else { continue }
                let prepared = oracle.prepared[f.id]!
                let ok = cell == .interior ? prepared.contains(x: p.lon, y: p.lat)! : !prepared.covers(x: p.lon, y: p.lat)!
                if !ok {
                    wrong += 1
                    if wrong <= 5 { XCTFail("\(label): grid code \(code) says \(cell) at \(p) for \(f.id)", line: line) }
                }
            }
        }
        XCTAssertEqual(wrong, 0, "\(label): \(wrong) disagreements", line: line)
    }

    /// A point and its neighbours a few ulps away on either axis and both.
    func around(_ p: LonLat, _ rng: inout TestRandom) -> [LonLat] {
        let xs = ulpsAround(p.lon)
        let ys = ulpsAround(p.lat)
        var out = xs.map { LonLat(lon: $0, lat: p.lat) } + ys.map { LonLat(lon: p.lon, lat: $0) }
        for _ in 0..<4 { out.append(LonLat(lon: xs[Int(rng.next() % 7)], lat: ys[Int(rng.next() % 7)])) }
        return out
    }

    /// Points that stress the grid of each fence: vertices, points on edges, cell centres and
    /// cell borders, each with neighbours a few ulps away; points on the line from a cell's
    /// centre through a listed edge's end, and on a listed edge's line beyond its ends; random
    /// points in the box. `perFence` of them per fence, chosen at random.
    func stressPoints(_ fences: [Fence], _ store: FenceStore, _ rng: inout TestRandom, perFence: Int) throws -> [LonLat] {
        var points: [LonLat] = []
        for f in fences {
            guard case .polygons(let polygons) = f.shape else { continue }
            let h = try XCTUnwrap(store.handle(id: f.id))
            let (grid, coords) = withRecord(store, h) { r -> (CellGridView, [LonLat]) in
                let (rings, offset) = FlatGeometry.rings(of: r)
                let n = rings.reduce(0) { $0 + $1.count }
                return (CellGridView(r), (0..<n).map { LonLat(lon: r[offset + 2 * $0], lat: r[offset + 2 * $0 + 1]) })
            }
            var candidates: [LonLat] = []
            let boundary = Shapes.boundaryPoints(polygons)
            for _ in 0..<(perFence / 8) {
                let p = boundary[Int(rng.next() % UInt64(boundary.count))]
                candidates += around(p, &rng)
            }
            for _ in 0..<(perFence / 16) {
                // A point on an edge, at a random place along it.
                let i = Int(rng.next() % UInt64(coords.count - 1))
                let t = rng.uniform(0, 1)
                candidates += around(LonLat(lon: coords[i].lon + t * (coords[i + 1].lon - coords[i].lon), lat: coords[i].lat + t * (coords[i + 1].lat - coords[i].lat)), &rng)
            }
            let cells = grid.side * grid.side
            for _ in 0..<(perFence / 16) {
                candidates += around(grid.centre(Int(rng.next() % UInt64(cells))), &rng)
                // A cell border, where the mapping changes cell.
                let bx = grid.minX + Double(Int(rng.next() % UInt64(grid.side + 1))) * grid.widthX
                let by = grid.minY + Double(Int(rng.next() % UInt64(grid.side + 1))) * grid.widthY
                candidates += around(LonLat(lon: bx, lat: rng.uniform(grid.minY, grid.maxY)), &rng)
                candidates += around(LonLat(lon: rng.uniform(grid.minX, grid.maxX), lat: by), &rng)
            }
            let listed = (0..<cells).filter { !grid.lists[$0].isEmpty }
            for _ in 0..<(perFence / 8) where !listed.isEmpty {
                let c = listed[Int(rng.next() % UInt64(listed.count))]
                let list = grid.lists[c]
                let i = list[Int(rng.next() % UInt64(list.count))]
                let r = grid.centre(c)
                let a = coords[i + Int(rng.next() % 2)]
                let b = coords[i]
                let e = coords[i + 1]
                for t in [0.25, 0.5, 1.5, rng.uniform(0, 1)] {
                    candidates.append(LonLat(lon: r.lon + t * (a.lon - r.lon), lat: r.lat + t * (a.lat - r.lat)))
                }
                for t in [-0.5, 1.5, rng.uniform(-1, 2)] {
                    candidates.append(LonLat(lon: b.lon + t * (e.lon - b.lon), lat: b.lat + t * (e.lat - b.lat)))
                }
            }
            for _ in 0..<(perFence / 4) {
                candidates.append(LonLat(lon: rng.uniform(grid.minX, grid.maxX), lat: rng.uniform(grid.minY, grid.maxY)))
            }
            points += candidates.shuffled(using: &rng).prefix(perFence)
        }
        return points.filter(\.isValidWGS84Range)
    }

    /// A star-shaped ring with separate radii on each axis.
    func star(_ rng: inout TestRandom, lon: Double, lat: Double, rx: Double, ry: Double, vertices: Int, inner: ClosedRange<Double> = 0.5...1.0) -> [LonLat] {
        var ring = Shapes.star(&rng, lon: 0, lat: 0, radius: 1, vertices: vertices, inner: inner)
        ring = ring.map { LonLat(lon: lon + rx * $0.lon, lat: lat + ry * $0.lat) }
        ring[ring.count - 1] = ring[0]
        return ring
    }

    /// Stars with holes, MultiPolygons of stars (one holed) over many seeds.
    func testStarsHolesAndMultiPolygonsAgreeWithGEOSOverSeeds() throws {
        var tally = Tally()
        for seed in UInt64(1)...16 {
            var rng = TestRandom(mixing: 300 + seed)
            var fences: [Fence] = []
            for i in 0..<5 {
                let lon = rng.uniform(-3, 3)
                let lat = rng.uniform(40, 46)
                let r = rng.uniform(0.05, 2)
                let exterior = star(&rng, lon: lon, lat: lat, rx: r * 1.4, ry: r, vertices: 66 + Int(rng.next() % 1200))
                let hole = star(&rng, lon: lon, lat: lat, rx: r * 0.5, ry: r * 0.35, vertices: 8 + Int(rng.next() % 300), inner: 0.8...1.0)
                switch i % 3 {
                case 0: fences.append(Fence(id: "s\(i)", shape: .polygons([Polygon(exterior: exterior, holes: [hole])])))
                case 1: fences.append(Fence(id: "s\(i)", shape: .polygons([Polygon(exterior: exterior)])))
                default:
                    // A second star beside the first, its box overlapping the first's.
                    let other = star(&rng, lon: lon + 2.6 * r, lat: lat + 0.5 * r, rx: r, ry: r * 0.8, vertices: 10 + Int(rng.next() % 400))
                    fences.append(Fence(id: "m\(i)", shape: .polygons([Polygon(exterior: exterior, holes: [hole]), Polygon(exterior: other)])))
                }
            }
            let store = build(fences)
            let points = try stressPoints(fences, store, &rng, perFence: 500)
            try check(fences, store, points, tally: &tally, "seed \(seed)")
        }
        XCTAssertGreaterThan(tally.decided, 10 * tally.fellBack, "\(tally)")
        XCTAssertGreaterThan(tally.pure, 0, "\(tally)")
    }

    /// The benchmark's spiky stars (1000 vertices, inner radius 0.5 to 1 of the outer): almost
    /// every random point in a mixed cell is decided by the count from the cell's centre, not
    /// left to the slab; a change that always falls back fails here.
    func testCentreCountDecidesMostMixedPoints() throws {
        var tally = Tally()
        var rng = TestRandom(mixing: 77)
        let fences = (0..<4).map { i in
            Fence(id: "b\(i)", shape: .polygons([Polygon(exterior: star(&rng, lon: 5, lat: 45, rx: 0.1 / cos(0.785), ry: 0.1, vertices: 1000))]))
        }
        let points = (0..<3000).map { _ in LonLat(lon: rng.uniform(4.85, 5.15), lat: rng.uniform(44.9, 45.1)) }
        try check(fences, build(fences), points, tally: &tally, "benchmark stars")
        let mixed = tally.decided + tally.fellBack + tally.noReference
        XCTAssertGreaterThan(mixed, 1000, "\(tally)")
        XCTAssertGreaterThan(Double(tally.decided) / Double(mixed), 0.98, "\(tally)")
    }

    /// Every point of every edge maps to a cell that lists the edge, or to a cell without a
    /// reference (no lists); never to a pure cell. Points along each edge, a few ulps either
    /// side of its ends, and a few ulps either side of where it crosses a cell border (the
    /// last double that maps below the border and the first above).
    func testEveryEdgeIsFiledUnderEveryCellItPassesThrough() throws {
        var rng = TestRandom(mixing: 8)
        var fences: [Fence] = []
        for i in 0..<6 {
            let r = rng.uniform(0.01, 3)
            fences.append(.polygon(id: "f\(i)", exterior: star(&rng, lon: rng.uniform(-100, 100), lat: rng.uniform(-60, 60), rx: r, ry: r * rng.uniform(0.3, 3), vertices: 70 + Int(rng.next() % 3000))))
        }
        fences.append(try degenerateCentresFence())
        let store = build(fences)
        var checks = 0
        var failures = 0
        for f in fences {
            try withRecord(store, XCTUnwrap(store.handle(id: f.id))) { r in
                let grid = CellGridView(r)
                let (rings, offset) = FlatGeometry.rings(of: r)
                /// The first double at or above `v` that maps to cell `k` or higher on an axis.
                func border(_ k: Int, _ v: Double, _ min: Double, _ scale: Double) -> Double {
                    var v = v
                    for _ in 0..<64 where FlatGeometry.slab(v, minY: min, scale: scale, slabs: grid.side) >= k { v = v.nextDown }
                    for _ in 0..<64 where FlatGeometry.slab(v, minY: min, scale: scale, slabs: grid.side) < k { v = v.nextUp }
                    return v
                }
                var first = 0
                for ring in rings {
                    for i in first..<(first + ring.count - 1) {
                        let (ax, ay, bx, by) = (r[offset + 2 * i], r[offset + 2 * i + 1], r[offset + 2 * i + 2], r[offset + 2 * i + 3])
                        var samples = (0...16).map { k -> LonLat in
                            let t = Double(k) / 16
                            return LonLat(lon: ax + t * (bx - ax), lat: ay + t * (by - ay))
                        }
                        for x in ulpsAround(ax) { samples.append(LonLat(lon: x, lat: ay)) }
                        for y in ulpsAround(by) { samples.append(LonLat(lon: bx, lat: y)) }
                        for k in 1..<grid.side {
                            let x = border(k, grid.minX + Double(k) * grid.widthX, grid.minX, grid.scaleX)
                            if bx != ax && min(ax, bx) < x && x < max(ax, bx) {
                                let y = ay + (x - ax) / (bx - ax) * (by - ay)
                                samples += ulpsAround(x).map { LonLat(lon: $0, lat: y) } + ulpsAround(y).map { LonLat(lon: x, lat: $0) }
                            }
                            let y = border(k, grid.minY + Double(k) * grid.widthY, grid.minY, grid.scaleY)
                            if by != ay && min(ay, by) < y && y < max(ay, by) {
                                let x = ax + (y - ay) / (by - ay) * (bx - ax)
                                samples += ulpsAround(y).map { LonLat(lon: x, lat: $0) } + ulpsAround(x).map { LonLat(lon: $0, lat: y) }
                            }
                        }
                        for p in samples where p.lon >= grid.minX && p.lon <= grid.maxX && p.lat >= grid.minY && p.lat <= grid.maxY {
                            let c = grid.cell(p.lon, p.lat)
                            checks += 1
                            if grid.codes[c] <= 1 || (grid.codes[c] <= 3 && !grid.lists[c].contains(i)) {
                                failures += 1
                                if failures <= 5 { XCTFail("\(f.id): edge \(i) not filed under cell \(c) (code \(grid.codes[c])) at \(p)") }
                            }
                        }
                    }
                    first += ring.count
                }
            }
        }
        XCTAssertEqual(failures, 0, "of \(checks)")
        XCTAssertGreaterThan(checks, 100_000)
    }

    /// A MultiPolygon over [0, 32]² (two corner triangles set the box) of 240 positions: 16
    /// cells a side, each 2 wide, so the cell centres are exactly the points with odd
    /// coordinates. Its main ring has vertices on centres, edges through centres (from centre
    /// to centre, 4 apart), edges along the centre lines x = 1, y = 1 and x = 31, a vertex
    /// where it crosses a centre line between two centres, and a short edge on x = 3 ending
    /// 1 below the centre (3, 23), so points of that cell on x = 3 are collinear with the
    /// centre and the edge.
    func degenerateCentresFence() throws -> Fence {
        var main: [(Double, Double)] = [(1, 1)]
        for j in 0...4 { main.append((3 + 4 * Double(j), j % 2 == 0 ? 1 : 9)) }  // (3, 1) -> (7, 9) passes (5, 5)
        main.append((31, 1))  // along y = 1
        // (28, 5): the boundary crosses the centre line y = 5 at a vertex between the centres
        // (27, 5) and (29, 5); (31, 9) -> (27, 13) passes the centre (29, 11).
        for k in 1...4 { main.append((k % 2 == 0 ? 31 : (k == 1 ? 28 : 27), 1 + 4 * Double(k))) }
        for y in stride(from: 19.0, through: 29, by: 2) { main.append((31, y)) }  // along x = 31
        for i in 0..<4 {
            main.append((31 - 8 * Double(i), 31))  // peaks; (31, 31) -> (27, 27) passes (29, 29)
            if i < 3 { main.append((27 - 8 * Double(i), 31 - 4 * Double(1 + i % 3))) }
        }
        main += [(3, 22), (3, 21), (2, 25), (1, 31)]  // the notch: x = 3 from 21 to 22
        let positions = main.count + 1 + 8
        let padding = 240 - positions  // collinear vertices down x = 1
        for k in 1...padding { main.append((1, 31 - Double(k) * 30 / Double(padding + 1))) }
        main.append((1, 1))
        func ring(_ pts: [(Double, Double)]) -> [LonLat] { pts.map { LonLat(lon: $0.0, lat: $0.1) } }
        let fence = Fence(
            id: "centres",
            shape: .polygons([
                Polygon(exterior: ring(main)), Polygon(exterior: ring([(0, 0), (0.5, 0), (0, 0.5), (0, 0)])),
                Polygon(exterior: ring([(32, 32), (32, 31.5), (31.5, 32), (32, 32)])),
            ]))
        var store = FenceStore()
        let result = store.add([fence]).first
        XCTAssertNil(result?.error)
        let grid = withRecord(store, try XCTUnwrap(store.handle(id: "centres"))) { CellGridView($0) }
        XCTAssertEqual(grid.side, 16)
        XCTAssertEqual(grid.centre(0), LonLat(lon: 1, lat: 1))
        XCTAssertEqual(grid.centre(11 * 16 + 1), LonLat(lon: 3, lat: 23))
        return fence
    }

    /// Vertices exactly on cell centres, edges through cell centres, and points collinear with
    /// a centre and an edge's end or with an edge: the count falls back where it must.
    func testVerticesAndEdgesThroughCellCentres() throws {
        let fence = try degenerateCentresFence()
        var rng = TestRandom(mixing: 12)
        let store = build([fence])
        var points = try stressPoints([fence], store, &rng, perFence: 3000)
        // Every cell centre, and points on the lines from centres through nearby vertices.
        guard case .polygons(let p) = fence.shape else { return }
        let vertices = p[0].exterior
        for y in ulpsAround(23) + (0..<20).map({ 22 + Double($0) / 10 }) { points += [LonLat(lon: 3, lat: y), LonLat(lon: 3.5, lat: y)] }
        for cy in 0..<16 {
            for cx in 0..<16 {
                let c = LonLat(lon: Double(2 * cx + 1), lat: Double(2 * cy + 1))
                points += around(c, &rng)
                let v = vertices[Int(rng.next() % UInt64(vertices.count))]
                for t in [0.1, 0.3, 0.5] {
                    points.append(LonLat(lon: c.lon + t * (v.lon - c.lon), lat: c.lat + t * (v.lat - c.lat)))
                }
                // Off the centre by a fraction of the cell, along the axes and diagonals.
                for (dx, dy) in [(0.5, 0.0), (0.0, 0.5), (0.5, 0.5), (-0.5, 0.5), (0.25, 0.75)] {
                    points.append(LonLat(lon: c.lon + dx, lat: c.lat + dy))
                }
            }
        }
        // In each cell with a reference, for each listed edge: points exactly on it (dyadic
        // steps between integer ends), and on the line from the centre through each end, short
        // of it, at it and past it (exact: half-integer steps from odd centres).
        let (grid, coords) = withRecord(store, store.handle(id: "centres")!) { r -> (CellGridView, [Double]) in
            let (rings, offset) = FlatGeometry.rings(of: r)
            return (CellGridView(r), Array(UnsafeBufferPointer(start: r + offset, count: 2 * rings.reduce(0) { $0 + $1.count })))
        }
        for c in 0..<(grid.side * grid.side) where grid.codes[c] == 2 || grid.codes[c] == 3 {
            let r = grid.centre(c)
            for i in grid.lists[c] {
                let (ax, ay, bx, by) = (coords[2 * i], coords[2 * i + 1], coords[2 * i + 2], coords[2 * i + 3])
                for k in 1..<8 {
                    let t = Double(k) / 8
                    points.append(LonLat(lon: ax + t * (bx - ax), lat: ay + t * (by - ay)))
                }
                for (x, y) in [(ax, ay), (bx, by)] {
                    for t in [0.5, 1, 1.5, 2] { points.append(LonLat(lon: r.lon + t * (x - r.lon), lat: r.lat + t * (y - r.lat))) }
                }
            }
        }
        var tally = Tally()
        try check([fence], store, points, tally: &tally, "centres")
        XCTAssertGreaterThan(tally.decided, 500, "\(tally)")
        XCTAssertGreaterThan(tally.fellBack + tally.noReference, 50, "\(tally)")
    }

    /// Large parts cut at the antimeridian (one MultiPolygon, a grid across the whole world),
    /// tiny stars (1e-7 and 1e-10 degrees), a sawtooth a few ulps wide (its cells narrower
    /// than an ulp, so centres round into other cells), and a star as large as the world.
    func testAntimeridianTinyAndHugePolygons() throws {
        var rng = TestRandom(mixing: 21)
        var fences: [Fence] = []
        for i in 0..<3 {
            let lat = rng.uniform(-40, 40)
            let r = rng.uniform(1, 8)
            // West of 180 and east of -180: spiky half-stars closed along the line.
            func half(_ at: Double, from a0: Double) -> [LonLat] {
                let up = a0 > 0 ? r : -r
                var ring = [LonLat(lon: at, lat: lat + up)]
                for k in 1..<200 {
                    let a = a0 + .pi * Double(k) / 200
                    let rr = k % 2 == 0 ? r : r * rng.uniform(0.5, 1)
                    ring.append(LonLat(lon: at + rr * cos(a), lat: lat + rr * sin(a)))
                }
                ring.append(LonLat(lon: at, lat: lat - up))
                ring.append(ring[0])
                return ring
            }
            let east = half(180, from: .pi / 2)
            let west = half(-180, from: -.pi / 2)
            fences.append(Fence(id: "am\(i)", shape: .polygons([Polygon(exterior: east), Polygon(exterior: west)])))
        }
        for (i, r) in [1e-7, 3e-8, 1e-10].enumerated() {
            fences.append(.polygon(id: "tiny\(i)", exterior: star(&rng, lon: rng.uniform(-179.99, 179.99), lat: rng.uniform(-80, 80), rx: r, ry: r, vertices: 80 + Int(rng.next() % 900))))
        }
        fences.append(.polygon(id: "huge", exterior: star(&rng, lon: 0, lat: 0, rx: 179.9, ry: 89.9, vertices: 2000)))
        fences.append(try sawtoothFence(ulpsWide: 5))
        let store = build(fences)
        let points = try stressPoints(fences, store, &rng, perFence: 1500)
        // And along the antimeridian itself.
        let line = (0..<300).map { _ in LonLat(lon: rng.next() % 2 == 0 ? 180 : -180, lat: rng.uniform(-50, 50)) }
        var tally = Tally()
        try check(fences, store, points + line, tally: &tally, "antimeridian, tiny, huge")
        XCTAssertGreaterThan(tally.decided, 1000, "\(tally)")
    }

    /// A ring at x = 1 whose right side saws between 3 and `ulpsWide` ulps east of it as it
    /// climbs from y = 0 to 1: the box is a few ulps wide, so cells are narrower than an ulp
    /// and some centres round into a neighbouring cell (those cells have no reference).
    func sawtoothFence(ulpsWide: Int) throws -> Fence {
        let u = (1.0).ulp
        var ring = [LonLat(lon: 1, lat: 0), LonLat(lon: 1 + Double(ulpsWide) * u, lat: 0)]
        let teeth = 80
        for k in 1..<teeth {
            let y = Double(k) / Double(teeth)
            ring.append(LonLat(lon: 1 + Double(k % 2 == 0 ? ulpsWide : 3) * u, lat: y))
        }
        ring.append(LonLat(lon: 1 + Double(ulpsWide) * u, lat: 1))
        ring.append(LonLat(lon: 1, lat: 1))
        ring.append(ring[0])
        let fence = Fence.polygon(id: "saw", exterior: ring)
        var store = FenceStore()
        XCTAssertNil(store.add([fence]).first?.error)
        let h = try XCTUnwrap(store.handle(id: "saw"))
        let moved = withRecord(store, h) { r -> Int in
            let g = CellGridView(r)
            return (0..<(g.side * g.side)).filter { c in
                let p = g.centre(c)
                return g.cell(p.lon, p.lat) != c
            }.count
        }
        XCTAssertGreaterThan(moved, 0, "some centres round into another cell")
        return fence
    }

    /// A star of over 65 535 positions lists its edges as UInt32. (A hole, so GEOS validates
    /// it: the simplicity proof of a ring this long is slow in a debug build.)
    func testWideEdgeNumbers() throws {
        var rng = TestRandom(mixing: 5)
        let exterior = star(&rng, lon: 10, lat: 10, rx: 2, ry: 2, vertices: 70_000, inner: 0.9...1.0)
        let hole = star(&rng, lon: 10, lat: 10, rx: 0.5, ry: 0.5, vertices: 20)
        let fence = Fence(id: "wide", shape: .polygons([Polygon(exterior: exterior, holes: [hole])]))
        let store = build([fence])
        let (wide, maxListed) = withRecord(store, store.handle(id: "wide")!) { r in
            (RingLocator.cellGrid(of: r)[9], CellGridView(r).lists.flatMap { $0 }.max() ?? 0)
        }
        XCTAssertEqual(wide, 1)
        XCTAssertGreaterThan(maxListed, 65_535)
        let points = try stressPoints([fence], store, &rng, perFence: 3000)
        var tally = Tally()
        try check([fence], store, points, tally: &tally, "wide")
        XCTAssertGreaterThan(tally.decided, 300, "\(tally)")
    }
}
