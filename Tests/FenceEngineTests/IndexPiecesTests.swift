@testable import FenceEngine
import SpatialIndex
import XCTest

/// A polygon's index boxes (`FenceValidation.polygonBoxes`) cover every point of it, boundary
/// included, while cutting long thin shapes into up to `maxIndexBoxes` small boxes and leaving
/// ordinary shapes one box, exactly their vertex box.
final class IndexPiecesTests: XCTestCase {
    /// Random thin corridors, L and U shapes, buffered zig-zags, stars, MultiPolygons and shells
    /// with holes, over the globe (the antimeridian and high latitudes included): every vertex,
    /// points along every edge and random interior points lie in a returned box; the boxes are
    /// few, ordered and finite, and cover no more area than the two-group boxes did.
    func testEveryPointCoveredOverSeeds() {
        var misses = 0
        var shapes = 0
        var cutShapes = 0
        var points = 0
        for seed in UInt64(1)...150 {
            var rng = TestRandom(mixing: seed)
            var cases: [(String, [Polygon])] = []
            for kind in ["corridor", "L", "U", "zigzag", "star", "holes"] {
                cases.append((kind, [Self.randomShape(kind, &rng)]))
            }
            let parts = (0..<(2 + Int(rng.next() % 4))).map { _ in
                Self.randomShape(["corridor", "L", "zigzag", "star", "holes"][Int(rng.next() % 5)], &rng)
            }
            cases.append(("multi", parts))
            for (kind, polygons) in cases {
                let (coords, rings) = Self.flat(polygons)
                let boxes = FenceValidation.polygonBoxes(coords, rings)
                shapes += 1
                if boxes.count > 1 && polygons.count == 1 { cutShapes += 1 }
                XCTAssertLessThanOrEqual(boxes.count, FenceValidation.maxIndexBoxes, "seed \(seed) \(kind)")
                for b in boxes {
                    XCTAssert(
                        b.minX <= b.maxX && b.minY <= b.maxY && [b.minX, b.minY, b.maxX, b.maxY].allSatisfy(\.isFinite),
                        "seed \(seed) \(kind): box \(b)")
                }
                let legacy = Self.twoGroupBoxes(coords, rings)
                XCTAssertLessThanOrEqual(Self.area(boxes), Self.area(legacy), "seed \(seed) \(kind): more area than the two-group boxes")
                if boxes.count == legacy.count {  // nothing cut: the vertex boxes, bit for bit
                    XCTAssertEqual(boxes, legacy, "seed \(seed) \(kind)")
                }
                for p in Self.oraclePoints(polygons, &rng) + Self.nearSidePoints(polygons, boxes) {
                    points += 1
                    if !boxes.contains(where: { $0.contains(x: p.lon, y: p.lat) }) {
                        misses += 1
                        if misses <= 5 { XCTFail("seed \(seed) \(kind): \(p) is in no box of \(boxes.count)") }
                    }
                }
            }
        }
        XCTAssertEqual(misses, 0, "points in no box, of \(points)")
        // The oracle means little unless many shapes were cut.
        XCTAssertGreaterThan(cutShapes, shapes / 4, "\(cutShapes) of \(shapes) shapes were cut")
        print("IndexPiecesTests: \(shapes) shapes (\(cutShapes) single polygons cut), \(points) points, \(misses) misses")
    }

    /// A corridor 3 degrees long and 40 m wide at 45 degrees: one box would hold 4.5 square
    /// degrees for a polygon of 0.001; 16 pieces or more hold at most a 16th of that.
    func testDiagonalCorridorIsCut() {
        let ring = Self.place(Self.rectangle(length: 3, width: 40 / 111_195), lon: 10, lat: 45, angle: .pi / 4, lonScale: 1)
        let (coords, rings) = Self.flat([Polygon(exterior: ring)])
        let boxes = FenceValidation.polygonBoxes(coords, rings)
        let one = Self.vertexBox(ring)
        XCTAssertGreaterThanOrEqual(boxes.count, 16)
        XCTAssertLessThanOrEqual(Self.area(boxes), one.area / 16)
        print("IndexPiecesTests: corridor \(boxes.count) boxes, \(Self.area(boxes) / one.area) of its one box")
    }

    /// A thin diagonal under `minimumCutSide` across keeps its one box (a 100 m driveway), and
    /// one just over it is cut, down to pieces about that size.
    func testSmallThinShapesAreNotCut() {
        for (length, cut) in [(0.001, false), (0.006, false), (0.05, true)] {
            let ring = Self.place(Self.rectangle(length: length, width: length / 10), lon: 10, lat: 45, angle: .pi / 4, lonScale: 1)
            let (coords, rings) = Self.flat([Polygon(exterior: ring)])
            let boxes = FenceValidation.polygonBoxes(coords, rings)
            XCTAssertEqual(boxes.count > 1, cut, "length \(length): \(boxes.count) boxes")
            for b in boxes where boxes.count > 1 {
                XCTAssertGreaterThan(max(b.maxX - b.minX, b.maxY - b.minY), FenceValidation.minimumCutSide / 2 * 0.99, "length \(length)")
            }
        }
    }

    /// Ordinary shapes are not cut: their one box is their vertex box, bit for bit.
    func testOrdinaryShapesKeepTheirVertexBox() {
        var rng = TestRandom(mixing: 99)
        let rectangle = [(1.0, 2.0), (4.5, 2.0), (4.5, 2.25), (1.0, 2.25), (1.0, 2.0)].map { LonLat(lon: $0.0, lat: $0.1) }
        let regular = (0...16).map { k in
            LonLat(lon: 7.3 + 0.2 * cos(2 * .pi * Double(k % 16) / 16 + 0.1), lat: 48.1 + 0.2 * sin(2 * .pi * Double(k % 16) / 16 + 0.1))
        }
        let star = Shapes.star(&rng, lon: -120.5, lat: 37.2, radius: 0.3, vertices: 16, inner: 0.6...0.9)
        for (name, ring) in [("rectangle", rectangle), ("16-gon", regular), ("star", star)] {
            let (coords, rings) = Self.flat([Polygon(exterior: ring)])
            XCTAssertEqual(FenceValidation.polygonBoxes(coords, rings), [Self.vertexBox(ring)], name)
        }
    }

    /// Shapes of no area end in bounded work and still cover themselves: a point, a diagonal
    /// out and back (every cut halves its box, up to the cap), a triangle with a hair.
    func testDegenerateShapesTerminate() {
        let point = [LonLat](repeating: LonLat(lon: 3, lat: 4), count: 4)
        let line = [(0.0, 0.0), (2.0, 2.0), (1.0, 1.0), (0.0, 0.0)].map { LonLat(lon: $0.0, lat: $0.1) }
        let hair = [(0.0, 0.0), (0.01, 0.0), (0.01, 0.01), (3.0, 3.0), (0.01, 0.01), (0.0, 0.01), (0.0, 0.0)].map {
            LonLat(lon: $0.0, lat: $0.1)
        }
        var rng = TestRandom(mixing: 5)
        for (name, ring) in [("point", point), ("line", line), ("hair", hair)] {
            let (coords, rings) = Self.flat([Polygon(exterior: ring)])
            let boxes = FenceValidation.polygonBoxes(coords, rings)
            XCTAssertLessThanOrEqual(boxes.count, FenceValidation.maxIndexBoxes, name)
            for p in Self.oraclePoints([Polygon(exterior: ring)], &rng) {
                XCTAssert(boxes.contains { $0.contains(x: p.lon, y: p.lat) }, "\(name): \(p)")
            }
        }
    }

    /// Vertices exactly on a cut line go to both halves: a thin quadrilateral whose apex lies on
    /// the first cut (the middle of its box), turned by quarter turns and mirrored (exactly, in
    /// floating point), and moved by powers of two.
    func testVerticesOnTheCut() {
        var rng = TestRandom(mixing: 17)
        let base = [(0.0, 0.0), (4.0, 3.9), (2.0, 2.5), (0.0, 0.01)]
        var misses = 0
        var cut = 0
        for turn in 0..<4 {
            for mirror in [false, true] {
                for shift in [0.0, 16.0, -64.0] {
                    let corners = base.map { p -> (Double, Double) in
                        var (x, y) = mirror ? (p.1, p.0) : p
                        for _ in 0..<turn { (x, y) = (-y, x) }
                        return (x + shift, y - shift / 2)
                    }
                    let polygon = Polygon(exterior: Self.ring(corners))
                    let (coords, rings) = Self.flat([polygon])
                    let boxes = FenceValidation.polygonBoxes(coords, rings)
                    if boxes.count > 1 { cut += 1 }
                    for p in Self.oraclePoints([polygon], &rng) + Self.nearSidePoints([polygon], boxes)
                    where !boxes.contains(where: { $0.contains(x: p.lon, y: p.lat) }) {
                        misses += 1
                        if misses <= 5 { XCTFail("turn \(turn) mirror \(mirror) shift \(shift): \(p) is in no box of \(boxes.count)") }
                    }
                }
            }
        }
        XCTAssertEqual(cut, 24, "every quadrilateral is cut")
        XCTAssertEqual(misses, 0)
    }

    // MARK: - Shapes

    /// A random shape of `kind` in local degrees, rotated and placed anywhere on the globe whole
    /// (sometimes touching ±180, sometimes at high latitude).
    static func randomShape(_ kind: String, _ rng: inout TestRandom) -> Polygon {
        let metres = 1 / 111_195.0
        var local: Polygon
        switch kind {
        case "corridor":
            local = Polygon(exterior: rectangle(length: rng.uniform(0.01, 5), width: rng.uniform(5, 500) * metres))
        case "L":
            let (a, b) = (rng.uniform(0.05, 3), rng.uniform(0.05, 3))
            let w = rng.chance(0.5) ? rng.uniform(5, 500) * metres : rng.uniform(0.01, 0.3) * min(a, b)
            local = Polygon(exterior: ring([(0, 0), (a, 0), (a, w), (w, w), (w, b), (0, b)]))
        case "U":
            let (W, H) = (rng.uniform(0.05, 3), rng.uniform(0.05, 3))
            let w = rng.chance(0.5) ? rng.uniform(5, 500) * metres : rng.uniform(0.01, 0.3) * min(W, H)
            local = Polygon(exterior: ring([(0, 0), (W, 0), (W, H), (W - w, H), (W - w, w), (w, w), (w, H), (0, H)]))
        case "zigzag":
            local = Polygon(exterior: zigzag(&rng, halfWidth: rng.uniform(5, 500) * metres / 2))
        case "star":
            let inner = rng.uniform(0.05, 1)
            local = Polygon(
                exterior: Shapes.star(&rng, lon: 0, lat: 0, radius: rng.uniform(0.001, 3), vertices: 5 + Int(rng.next() % 36), inner: inner...1))
        default:  // "holes": a star with holes, or a long fat bar with a hole along it
            if rng.chance(0.5) {
                local = Shapes.polygonWithHoles(&rng, lon: 0, lat: 0, radius: rng.uniform(0.001, 2))
            } else {
                let (l, w) = (rng.uniform(0.5, 4), rng.uniform(0.02, 0.3))
                local = Polygon(
                    exterior: rectangle(length: l, width: w),
                    holes: [ring([(-0.4 * l, -0.2 * w), (-0.4 * l, 0.2 * w), (0.4 * l, 0.2 * w), (0.4 * l, -0.2 * w)])])
            }
        }
        if rng.chance(0.5) {
            local.exterior.reverse()
        }
        let lat0 = rng.chance(0.25) ? (rng.chance(0.5) ? 1 : -1) * rng.uniform(70, 88) : rng.uniform(-60, 60)
        let lonScale = rng.chance(0.3) ? 1 : 1 / cos(lat0 * .pi / 180)
        let angle = rng.uniform(0, 2 * .pi)
        var placed = local.rings.map { place($0, lon: 0, lat: lat0, angle: angle, lonScale: lonScale) }
        // Shift whole into range: anywhere, or against the antimeridian on either side.
        let all = placed.flatMap { $0 }
        let (minX, maxX) = (all.map(\.lon).min()!, all.map(\.lon).max()!)
        let (minY, maxY) = (all.map(\.lat).min()!, all.map(\.lat).max()!)
        let dx: Double
        switch rng.next() % 4 {
        case 0: dx = 180 - maxX
        case 1: dx = -180 - minX
        default: dx = maxX - minX >= 360 ? -minX - 180 : rng.uniform(-180 - minX, 180 - maxX)
        }
        let dy = maxY > 90 ? 90 - maxY : (minY < -90 ? -90 - minY : 0)
        placed = placed.map { $0.map { LonLat(lon: max(-180, min(180, $0.lon + dx)), lat: max(-90, min(90, $0.lat + dy))) } }
        return Polygon(exterior: placed[0], holes: Array(placed.dropFirst()))
    }

    /// A closed ring from corners.
    static func ring(_ corners: [(Double, Double)]) -> [LonLat] {
        (corners + [corners[0]]).map { LonLat(lon: $0.0, lat: $0.1) }
    }

    /// A closed rectangle along x, centred on the origin.
    static func rectangle(length: Double, width: Double) -> [LonLat] {
        let (l, w) = (length / 2, width / 2)
        return ring([(-l, -w), (l, -w), (l, w), (-l, w)])
    }

    /// A polyline of 3 to 12 legs turning by at most 60 degrees, buffered by `halfWidth` on
    /// each side with mitred corners (legs of 0.05 degrees or more, so the ring stays simple).
    static func zigzag(_ rng: inout TestRandom, halfWidth: Double) -> [LonLat] {
        var line = [(0.0, 0.0)]
        var heading = 0.0
        for k in 0..<(3 + Int(rng.next() % 10)) {
            heading += (k % 2 == 0 ? 1 : -1) * rng.uniform(0, .pi / 3)
            let step = rng.uniform(0.05, 1)
            line.append((line[line.count - 1].0 + step * cos(heading), line[line.count - 1].1 + step * sin(heading)))
        }
        func normal(_ i: Int) -> (Double, Double) {  // left unit normal of leg i
            let (dx, dy) = (line[i + 1].0 - line[i].0, line[i + 1].1 - line[i].1)
            let n = (dx * dx + dy * dy).squareRoot()
            return (-dy / n, dx / n)
        }
        var left: [(Double, Double)] = []
        var right: [(Double, Double)] = []
        for i in line.indices {
            let a = normal(max(0, i - 1))
            let b = normal(min(line.count - 2, i))
            var m = (a.0 + b.0, a.1 + b.1)
            let len = (m.0 * m.0 + m.1 * m.1).squareRoot()
            m = (m.0 / len, m.1 / len)
            let scale = halfWidth / (m.0 * b.0 + m.1 * b.1)
            left.append((line[i].0 + scale * m.0, line[i].1 + scale * m.1))
            right.append((line[i].0 - scale * m.0, line[i].1 - scale * m.1))
        }
        return ring(left + right.reversed())
    }

    /// `ring` rotated by `angle`, x scaled by `lonScale`, moved to (lon, lat).
    static func place(_ ring: [LonLat], lon: Double, lat: Double, angle: Double, lonScale: Double) -> [LonLat] {
        let (c, s) = (cos(angle), sin(angle))
        return ring.map { p in
            let x = p.lon * c - p.lat * s
            let y = p.lon * s + p.lat * c
            return LonLat(lon: lon + x * lonScale, lat: lat + y)
        }
    }

    // MARK: - Oracle

    /// The flat coordinates and ring list `polygonBoxes` takes, as `FenceValidation.normalize`
    /// builds them (closed rings, the closing position included).
    static func flat(_ polygons: [Polygon]) -> ([Double], [(count: Int, isExterior: Bool)]) {
        var coords: [Double] = []
        var rings: [(count: Int, isExterior: Bool)] = []
        for p in polygons {
            for (r, ring) in p.rings.enumerated() {
                coords += ring.flatMap { [$0.lon, $0.lat] }
                rings.append((ring.count, r == 0))
            }
        }
        return (coords, rings)
    }

    /// Points of the closed polygons: every vertex; along every edge its two ends and three
    /// random points (kept inside the edge's box); interior points drawn in each shell's box
    /// and between random boundary points, kept when inside the shell (even-odd crossing).
    static func oraclePoints(_ polygons: [Polygon], _ rng: inout TestRandom) -> [LonLat] {
        var out: [LonLat] = []
        for polygon in polygons {
            var boundary: [LonLat] = []
            for ring in polygon.rings {
                for i in 0..<(ring.count - 1) {
                    let (a, b) = (ring[i], ring[i + 1])
                    out.append(a)
                    out.append(b)
                    for _ in 0..<3 { boundary.append(along(a, b, rng.uniform(0, 1))) }
                }
            }
            out += boundary
            let shell = polygon.exterior
            let box = vertexBox(shell)
            var candidates: [LonLat] = []
            for _ in 0..<150 {
                candidates.append(LonLat(lon: rng.uniform(box.minX, box.maxX), lat: rng.uniform(box.minY, box.maxY)))
                let (p, q) = (boundary[Int(rng.next() % UInt64(boundary.count))], boundary[Int(rng.next() % UInt64(boundary.count))])
                candidates.append(along(p, q, rng.uniform(0, 1)))
            }
            out += candidates.filter { inside($0, shell) }
        }
        return out
    }

    /// Boundary points just beside every box's sides, where a cut lies and rounding bites: where
    /// each edge crosses the lines a few units in the last place either side of a box side
    /// (computed in `Float80` where there is one, then rounded to the nearest `Double`, so
    /// within half a unit of the edge).
    static func nearSidePoints(_ polygons: [Polygon], _ boxes: [Box]) -> [LonLat] {
        #if arch(x86_64)
            typealias Wide = Float80
        #else
            typealias Wide = Double
        #endif
        var out: [LonLat] = []
        for polygon in polygons {
            for ring in polygon.rings {
                for i in 0..<(ring.count - 1) {
                    let (a, b) = (ring[i], ring[i + 1])
                    for box in boxes {
                        for (alongX, side) in [(true, box.minX), (true, box.maxX), (false, box.minY), (false, box.maxY)] {
                            var v = side
                            for _ in 0..<3 { v = v.nextDown }
                            for _ in 0..<7 {
                                let (pa, pb, qa, qb) = alongX ? (a.lon, a.lat, b.lon, b.lat) : (a.lat, a.lon, b.lat, b.lon)
                                if min(pa, qa) < v && v < max(pa, qa) {
                                    let t = (Wide(v) - Wide(pa)) / (Wide(qa) - Wide(pa))
                                    let w = min(max(Double(Wide(pb) + t * (Wide(qb) - Wide(pb))), min(pb, qb)), max(pb, qb))
                                    out.append(alongX ? LonLat(lon: v, lat: w) : LonLat(lon: w, lat: v))
                                }
                                v = v.nextUp
                            }
                        }
                    }
                }
            }
        }
        return out
    }

    /// The point at `t` from `a` to `b`, kept inside the segment's box against rounding.
    static func along(_ a: LonLat, _ b: LonLat, _ t: Double) -> LonLat {
        LonLat(
            lon: min(max(a.lon + t * (b.lon - a.lon), min(a.lon, b.lon)), max(a.lon, b.lon)),
            lat: min(max(a.lat + t * (b.lat - a.lat), min(a.lat, b.lat)), max(a.lat, b.lat)))
    }

    /// Even-odd point in a closed ring.
    static func inside(_ p: LonLat, _ ring: [LonLat]) -> Bool {
        var odd = false
        for i in 0..<(ring.count - 1) {
            let (a, b) = (ring[i], ring[i + 1])
            if (a.lat > p.lat) != (b.lat > p.lat) && p.lon < a.lon + (p.lat - a.lat) * (b.lon - a.lon) / (b.lat - a.lat) {
                odd.toggle()
            }
        }
        return odd
    }

    static func vertexBox(_ ring: [LonLat]) -> Box {
        Box(
            minX: ring.map(\.lon).min()!, minY: ring.map(\.lat).min()!, maxX: ring.map(\.lon).max()!, maxY: ring.map(\.lat).max()!)
    }

    static func area(_ boxes: [Box]) -> Double { boxes.reduce(0) { $0 + $1.area } }

    /// The boxes before pieces (a6c3b93's `polygonBoxes`): the shells' vertex box, or two group
    /// boxes when they halve its area.
    static func twoGroupBoxes(_ coords: [Double], _ rings: [(count: Int, isExterior: Bool)]) -> [Box] {
        var parts: [Box] = []
        var offset = 0
        for ring in rings {
            if ring.isExterior {
                parts.append(vertexBox((offset..<(offset + ring.count)).map { LonLat(lon: coords[2 * $0], lat: coords[2 * $0 + 1]) }))
            }
            offset += ring.count
        }
        let union = parts.dropFirst().reduce(parts[0]) { $0.union($1) }
        guard parts.count > 1 else { return parts }
        var best: (area: Double, boxes: [Box]) = (union.area, [union])
        for axisX in [true, false] {
            let sorted = parts.sorted {
                axisX ? ($0.minX + $0.maxX) < ($1.minX + $1.maxX) : ($0.minY + $0.maxY) < ($1.minY + $1.maxY)
            }
            for cut in 1..<sorted.count {
                let a = sorted[..<cut].dropFirst().reduce(sorted[0]) { $0.union($1) }
                let b = sorted[cut...].dropFirst().reduce(sorted[cut]) { $0.union($1) }
                if a.area + b.area < best.area && !a.intersects(b) { best = (a.area + b.area, [a, b]) }
            }
        }
        return best.area < 0.5 * union.area ? best.boxes : [union]
    }
}
