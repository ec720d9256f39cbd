import Foundation
import SpatialIndex

/// Distance from a position to a polygon record's boundary: its edges, straight lines in
/// longitude/latitude (RFC 7946), so not geodesics.
///
/// Two stages:
/// 1. **Screen** every edge in a local projection at the position, with the ellipsoid's
///    scales there (metres per degree east `N cos(lat) pi/180`, north `M pi/180`, from the
///    prime-vertical and meridional radii of curvature). An edge is shifted as a whole by the
///    multiple of 360 degrees that brings it nearest the position, so an edge seen across the
///    antimeridian is measured the short way, and one spanning more than 180 degrees of
///    longitude (a polar cap's, a whole-world fence's) keeps its length. Within about 0.1%
///    for distances up to 10 km below 80 degrees of latitude; the error grows with distance and
///    towards the poles (the east scale changes along the way).
/// 2. **Measure** (`exact`): every edge screened near enough to the nearest (1% plus the
///    projection's error, which grows with the distance) is measured on the ellipsoid,
///    nearest first, until the next cannot beat the nearest measured (a ring of many edges
///    all about as far, the position at its centre, measures them all). Above 75 degrees of latitude or beyond 100 km, where the projection
///    misjudges, every edge whose true lower bound is below the nearest measured is
///    (`boundaryByBounds`). The edge's nearest point is found by a golden-section search on
///    the sphere (after sampling a long edge at 9 points, so that its other local minimum is
///    not taken), then polished on the ellipsoid with Karney's geodesic. The result is the
///    ellipsoidal distance to a point of the boundary, within about 1e-8 of the nearest's for
///    the edge measured (tests hold the result to 2e-6 of an independent scan), at any
///    latitude and range, so long as the projection misjudges by less than the margin.
///
/// - Complexity: O(v) for v vertices, a few flops an edge; `exact` adds about 30 spherical
///   distances (0.05 µs each) and 4 geodesics (0.4 µs each) per measured edge, and 0.1 µs per
///   edge on the bounded path.
enum PolygonDistance {
    /// Metres per degree of longitude and latitude at `lat` on the WGS84 ellipsoid.
    static func scales(lat: Double) -> (east: Double, north: Double) {
        let phi = lat * .pi / 180
        let e2 = Geodesic.wgs84F * (2 - Geodesic.wgs84F)
        let s = sin(phi)
        let w2 = 1 - e2 * s * s
        let w = w2.squareRoot()
        let n = Geodesic.wgs84A / w
        let m = Geodesic.wgs84A * (1 - e2) / (w2 * w)
        return (max(0, n * cos(phi)) * .pi / 180, m * .pi / 180)
    }

    /// An edge of the record, as `boundary` visits it: start and end in degrees.
    struct Edge {
        var ax, ay, bx, by: Double
    }

    /// Distance in metres from `p` to the boundary of the polygon record (its rings' edges).
    /// - Parameters:
    ///   - cutoff: with `exact`, a distance already found (another fence's): a polygon whose
    ///     screened distance, allowing for the projection's error, is beyond it is not
    ///     measured, and a value beyond `cutoff` is returned. Without `exact`, with a tree:
    ///     the screened distance when it is below `cutoff`, else a value at or above it (boxes
    ///     beyond it are left shut: a fix deep inside a large polygon opens none with a
    ///     hysteresis margin as the cutoff).
    ///   - tree: the record's `EdgeTree`, for an indexed polygon: edges are then visited
    ///     best-first by their boxes' projected distance, and a box that cannot hold an edge
    ///     that counts is not opened.
    static func boundary(
        _ record: UnsafePointer<Double>, _ p: LonLat, exact: Bool, cutoff: Double = .infinity, tree: EdgeTree.View? = nil
    ) -> Double {
        if exact && abs(p.lat) >= polarLatitude { return boundaryByBounds(record, p, cutoff: cutoff, tree: tree) }
        let (kx, ky) = scales(lat: p.lat)
        let ringCount = Int(record[0])
        let coords = record + 1 + ringCount
        // How far the projection may misjudge, relative: the east scale changes by about
        // tan(lat) per radian of latitude travelled; 1% for the rest.
        let growth = exact ? 2 * (tan(abs(p.lat) * .pi / 180) + 1) / 6_371_000 : 0
        func reach(_ d: Double) -> Double { d * (1.01 + growth * d) + 1 }
        var best = Double.infinity
        var near: [(estimate: Double, edge: Edge, t: Double)] = []
        // With a tree: the bound of the first box left shut, if any.
        var unopened = Double.infinity
        // Edges on the antimeridian wait until every one is known (`AntimeridianSeam`).
        var onLine: [Edge] = []
        func take(_ e: Edge) {
            let (d2, t) = screen(e, p, kx: kx, ky: ky)
            if exact {
                let d = d2.squareRoot()
                if d <= reach(best) {
                    near.append((d, e, t))
                    best = min(best, d)
                }
            } else {
                best = min(best, d2)
            }
        }
        // With a tree, its list of the edges on the antimeridian gives their cover at once, so
        // such an edge's boundary parts count as soon as the walk meets it: the walk's limits
        // and its far stop then judge every edge it has seen. (They waited to the end at
        // first, and the far stop shut boxes beyond 100 km, some nearer than they screened,
        // while a real edge on the line 99 km off was still to count: 397 m too far, found
        // by a review.)
        let treeCover = tree.flatMap { t in t.seamCount == 0 ? nil : AntimeridianSeam.Cover(seamEdges(record, t).filter { !isOnPole($0) }) }
        // The edge from position i: on a pole it is no boundary, on the antimeridian only its
        // parts nothing covers from the other side are.
        func visit(_ i: Int) {
            let e = Edge(ax: coords[2 * i], ay: coords[2 * i + 1], bx: coords[2 * i + 2], by: coords[2 * i + 3])
            if isOnPole(e) { return }
            if AntimeridianSeam.isOnLine(e.ax, e.bx) {
                if let treeCover {
                    for part in AntimeridianSeam.boundaryParts(of: e, treeCover) { take(part) }
                } else {
                    onLine.append(e)
                }
            } else {
                take(e)
            }
        }
        if let tree {
            // Best-first by box: an edge's screened distance is at least its box's. Exact, a
            // box beyond reach of reach of the nearest screened is left shut (the measuring
            // below goes no further), and so is one beyond reach of `cutoff`: its edges could
            // only give a value beyond `cutoff`. Otherwise one beyond the nearest screened.
            let rings = EdgeTree.RingEnds(record)
            var heap = BoundHeap()
            tree.forEachTop { heap.push(BoundHeap.Element(bound: boxBound(tree.box($0), p, kx: kx, ky: ky), ref: Int32($0))) }
            while let top = heap.popMin() {
                let limit = exact ? min(reach(reach(best)), reach(cutoff)) : min(best.squareRoot(), cutoff)
                // Far (every edge beyond `farDistance`) is all the measuring below needs to
                // know: it then bounds edges on the ellipsoid.
                if top.bound > limit || (exact && top.bound > farDistance && best > farDistance) {
                    unopened = top.bound
                    break
                }
                let node = Int(top.ref)
                if let children = tree.children(of: node) {
                    for child in children {
                        let bound = boxBound(tree.box(child), p, kx: kx, ky: ky)
                        if bound <= limit { heap.push(BoundHeap.Element(bound: bound, ref: Int32(child))) }
                    }
                } else {
                    EdgeTree.forEachEdge(leaf: tree.locate(node).index, rings: rings, visit)
                }
            }
        } else {
            for r in 0..<ringCount {
                let positions = FlatGeometry.ringPositions(r, of: record)
                for i in positions.lowerBound..<max(positions.lowerBound, positions.upperBound - 1) { visit(i) }
            }
        }
        if !onLine.isEmpty {
            let cover = AntimeridianSeam.Cover(onLine)
            for e in onLine {
                for part in AntimeridianSeam.boundaryParts(of: e, cover) { take(part) }
            }
        }
        guard exact else { return min(best.squareRoot(), unopened) }
        // Not the nearest fence, whatever the edges measure (no edge is nearer than the
        // nearest screened, nor than a box left shut).
        let screened = min(best, unopened)
        if reach(cutoff) < screened { return screened }
        // Far away the projection's error lets too many edges through.
        if screened > farDistance { return boundaryByBounds(record, p, cutoff: cutoff, tree: tree) }
        near.sort { $0.estimate < $1.estimate }
        var measured = Double.infinity
        let surface = SurfacePoint(p)
        for candidate in near {
            if candidate.estimate > reach(min(measured, reach(best))) { break }
            // Beside a long outline of short edges many are screened about as near: those
            // their ends' chords, or else geodesics, put beyond the nearest measured need no
            // measuring.
            if measured.isFinite && (chordEndsBound(candidate.edge, surface) > measured || endsBound(candidate.edge, p) > measured) {
                continue
            }
            measured = min(measured, onEllipsoid(candidate.edge, p, hint: candidate.t, estimate: candidate.estimate))
        }
        return measured
    }

    /// Above this latitude (either hemisphere) the projection cannot screen edges: a few
    /// kilometres from a pole the shortest way to an edge may run over the pole.
    static let polarLatitude = 75.0
    /// Beyond this distance (metres) the projection cannot screen edges either: its error
    /// grows with the distance.
    static let farDistance = 100_000.0

    /// `boundary(exact: true)` near a pole or far from the polygon: every edge that may be
    /// nearest gets a true lower bound (the chord to its longitude/latitude box,
    /// `FenceStore.lowerBound`), and edges are measured on the ellipsoid in order of that
    /// bound until the bound passes the nearest measured.
    ///
    /// Best-first over two levels: runs of up to `boundsRun` consecutive edges of a ring are
    /// bounded by their joint box first, and a run's edges are bounded one by one only when
    /// the run comes up (`BoundHeap`). A run's bound is at most each of its edges', so edges
    /// still come up in order of their own bounds, and every edge that could be nearest is
    /// measured; a ring of a thousand edges far away costs about 60 bounds, not a thousand.
    /// - Complexity: O(v / r) run bounds for v vertices, plus O(r log v) per run opened and
    ///   about 0.1 µs an edge bounded.
    /// With the record's `EdgeTree` (`tree`), its boxes serve as the runs, level by level.
    static func boundaryByBounds(_ record: UnsafePointer<Double>, _ p: LonLat, cutoff: Double, tree: EdgeTree.View? = nil) -> Double {
        let origin = FenceStore.SphereOrigin(p)
        let ringCount = Int(record[0])
        let coords = record + 1 + ringCount
        @inline(__always) func edge(at v: Int) -> Edge { Edge(ax: coords[v], ay: coords[v + 1], bx: coords[v + 2], by: coords[v + 3]) }
        // Heap refs: a run's index (a node), or `~v` for the edge from coordinate v (an item).
        var runs: [(start: Int, count: Int)] = []
        var heap = BoundHeap()
        var nearestRun = Double.infinity
        var v = 0
        let rings = EdgeTree.RingEnds(record)
        if let tree {
            tree.forEachTop { node in
                if isOnPole(tree.box(node)) { return }
                let bound = FenceStore.lowerBound(origin, tree.box(node))
                heap.push(BoundHeap.Element(bound: bound, ref: Int32(node)))
                nearestRun = min(nearestRun, bound)
            }
        }
        for r in 0..<(tree == nil ? ringCount : 0) {
            let n = FlatGeometry.ringPositions(r, of: record).count
            var i = 0
            while i < n - 1 {
                let count = min(boundsRun, n - 1 - i)
                let first = v + 2 * i
                var box = Box.empty
                for k in 0...count { box.extend(coords[first + 2 * k], coords[first + 2 * k + 1]) }
                let bound = FenceStore.lowerBound(origin, box)
                heap.push(BoundHeap.Element(bound: bound, ref: Int32(runs.count)))
                runs.append((first, count))
                nearestRun = min(nearestRun, bound)
                i += count
            }
            v += 2 * n
        }
        if nearestRun > cutoff { return nearestRun }
        var best = Double.infinity
        let (kx, ky) = scales(lat: p.lat)
        // Found once an edge on the antimeridian comes up (`AntimeridianSeam`).
        var cover: AntimeridianSeam.Cover?
        // The edge from coordinate v on the heap by its box's bound, unless that is beyond the
        // nearest measured (an edge on a pole is no boundary: never).
        func pushEdge(at v: Int) {
            let e = edge(at: v)
            if isOnPole(e) { return }
            let box = Box(minX: min(e.ax, e.bx), minY: min(e.ay, e.by), maxX: max(e.ax, e.bx), maxY: max(e.ay, e.by))
            let bound = FenceStore.lowerBound(origin, box)
            if bound <= best { heap.push(BoundHeap.Element(bound: bound, ref: ~Int32(v))) }
        }
        // Beyond `cutoff` the answer only has to be beyond it too.
        while let top = heap.popMin(), top.bound <= best {
            if top.bound > cutoff { return min(best, top.bound) }
            if let tree, top.ref >= 0 {
                let node = Int(top.ref)
                if let children = tree.children(of: node) {
                    for child in children where !isOnPole(tree.box(child)) {
                        let bound = FenceStore.lowerBound(origin, tree.box(child))
                        if bound <= best { heap.push(BoundHeap.Element(bound: bound, ref: Int32(child))) }
                    }
                } else {
                    EdgeTree.forEachEdge(leaf: tree.locate(node).index, rings: rings) { pushEdge(at: 2 * $0) }
                }
            } else if top.ref >= 0 {
                let run = runs[Int(top.ref)]
                for k in 0..<run.count { pushEdge(at: run.start + 2 * k) }
            } else {
                // An even coordinate index: an edge as bounded by its box; odd: the edge before
                // it, bounded again from its ends (`endsBound`), which is measured.
                let at = Int(~top.ref)
                let whole = edge(at: at & ~1)
                var parts = [whole]
                let onLine = AntimeridianSeam.isOnLine(whole.ax, whole.bx)
                // Far away the sphere's band lets thousands of edges of a long outline under
                // the nearest measured; their ends' geodesics bound most of them above it, at a
                // tenth of a measurement each.
                if at & 1 == 0 && !onLine {
                    let bound = endsBound(whole, p)
                    if bound > top.bound {
                        if bound <= best { heap.push(BoundHeap.Element(bound: bound, ref: ~Int32(at + 1))) }
                        continue
                    }
                }
                if onLine {
                    if cover == nil, let tree {
                        cover = AntimeridianSeam.Cover(seamEdges(record, tree))
                    } else if cover == nil {
                        var edges: [Edge] = []
                        for r in 0..<ringCount {
                            let positions = FlatGeometry.ringPositions(r, of: record)
                            for i in positions.lowerBound..<max(positions.lowerBound, positions.upperBound - 1)
                            where AntimeridianSeam.isOnLine(coords[2 * i], coords[2 * i + 2]) {
                                edges.append(edge(at: 2 * i))
                            }
                        }
                        cover = AntimeridianSeam.Cover(edges)
                    }
                    parts = AntimeridianSeam.boundaryParts(of: whole, cover!)
                }
                for e in parts {
                    let (d2, hint) = screen(e, p, kx: kx, ky: ky)
                    best = min(best, onEllipsoid(e, p, hint: hint, estimate: d2.squareRoot()))
                }
            }
        }
        return best
    }

    /// A lower bound in metres on the ellipsoidal distance from `p` to any point of the edge,
    /// from the geodesics to its ends: a point of it whose way along the edge from one end is
    /// l1, and to the other l2, is within l1 of the first end and l2 of the other, and l1 + l2
    /// is at most `pathLength`, L, so it is no nearer than (dA + dB - L) / 2. Tight for an edge
    /// short beside its distance (a coastline's, thousands of kilometres off); two geodesics,
    /// about 0.8 µs.
    static func endsBound(_ e: Edge, _ p: LonLat) -> Double {
        let dA = Geodesic.distance(lon1: p.lon, lat1: p.lat, lon2: e.ax, lat2: e.ay)
        let dB = Geodesic.distance(lon1: p.lon, lat1: p.lat, lon2: e.bx, lat2: e.by)
        return (dA + dB - pathLength(e)) / 2 - 0.001
    }

    /// `endsBound` with the chords (straight lines through the Earth, `SurfacePoint`) to the
    /// ends instead of their geodesics: a chord is never longer than the geodesic between its
    /// ends, nor the way along the edge than `pathLength`, so the bound holds the same way. Short
    /// of `endsBound` by about d³/(24 R²) at distance d (1 mm at 10 km, 1 m at 100 km), so the
    /// near search (under 100 km) asks it first: four sines and cosines and two square roots,
    /// about a tenth of `endsBound`. (The far search's boxes are bounded within 0.67%, which
    /// the chords beat only below about 1,000 km: tried there, it changed nothing measured.)
    static func chordEndsBound(_ e: Edge, _ p: SurfacePoint) -> Double {
        let cA = p.chord(to: SurfacePoint(lon: e.ax, lat: e.ay))
        let cB = p.chord(to: SurfacePoint(lon: e.bx, lat: e.by))
        return (cA + cB - pathLength(e)) / 2 - 0.001
    }

    /// At least the length of the edge's way on the ellipsoid (straight in longitude and
    /// latitude): the largest radius of curvature, 6,399,594 m, times its angular length with
    /// the widest parallel it crosses.
    @inline(__always)
    static func pathLength(_ e: Edge) -> Double { pathLength(dLat: e.by - e.ay, dLon: e.bx - e.ax, between: e.ay, e.by) }

    /// At least the length on the ellipsoid of a way straight in longitude and latitude that
    /// moves `dLat` and `dLon` degrees between the parallels `lat1` and `lat2`: 6,399,594 m (the
    /// largest radius of curvature, a²/b) times its angular length, longitude scaled by the
    /// widest parallel between them. An edge's (`pathLength(_:)`) and a box's reach from its
    /// centre (`FarBound.reach`).
    @inline(__always)
    static func pathLength(dLat: Double, dLon: Double, between lat1: Double, _ lat2: Double) -> Double {
        let degree = Double.pi / 180
        let widest = (lat1 >= 0) == (lat2 >= 0) ? cos(min(abs(lat1), abs(lat2)) * degree) : 1
        let dPhi = dLat * degree
        let dLambda = dLon * degree * widest
        return 6_399_594 * (dPhi * dPhi + dLambda * dLambda).squareRoot()
    }

    /// A point of the WGS84 ellipsoid's surface in Earth-centred Cartesian metres: the chord
    /// between two such points is a lower bound on the geodesic between them (the straight
    /// line is the shortest way), a tight one nearby.
    struct SurfacePoint {
        var x, y, z: Double

        init(lon: Double, lat: Double) {
            let degree = Double.pi / 180
            let e2 = Geodesic.wgs84F * (2 - Geodesic.wgs84F)
            let phi = lat * degree
            let lambda = lon * degree
            let (sinPhi, cosPhi) = (sin(phi), cos(phi))
            let n = Geodesic.wgs84A / (1 - e2 * sinPhi * sinPhi).squareRoot()
            x = n * cosPhi * cos(lambda)
            y = n * cosPhi * sin(lambda)
            z = n * (1 - e2) * sinPhi
        }

        init(_ p: LonLat) { self.init(lon: p.lon, lat: p.lat) }

        @inline(__always)
        func chord(to q: SurfacePoint) -> Double {
            let (dx, dy, dz) = (x - q.x, y - q.y, z - q.z)
            return (dx * dx + dy * dy + dz * dz).squareRoot()
        }
    }

    /// Whether the edge lies on a pole (both ends at latitude 90, or both at -90, within
    /// `FenceValidation.rangeTolerance`): in longitude/latitude a line, on the globe one
    /// point, and not the boundary by itself. A polar cap is written with one (RFC 7946): its
    /// pole is inside, and was 111 km from a position at latitude 89 (an independent audit).
    /// Where the pole is on the boundary, other edges end there (a wedge's meridians).
    @inline(__always)
    static func isOnPole(_ e: Edge) -> Bool {
        let t = 90 - FenceValidation.rangeTolerance
        return (e.ay >= t && e.by >= t) || (e.ay <= -t && e.by <= -t)
    }

    /// Whether every edge inside the box lies on a pole (`isOnPole`): a tree's box over a
    /// polar cap's run along the pole, which is not opened.
    @inline(__always)
    static func isOnPole(_ box: Box) -> Bool {
        let t = 90 - FenceValidation.rangeTolerance
        return box.minY >= t || box.maxY <= -t
    }

    /// Consecutive edges bounded together by `boundaryByBounds` before one by one.
    static let boundsRun = 16

    /// The edges of the record on the antimeridian, from its tree's list.
    static func seamEdges(_ record: UnsafePointer<Double>, _ tree: EdgeTree.View) -> [Edge] {
        let q = record + 1 + Int(record[0])
        return tree.seams.map { i in
            Edge(ax: q[2 * i], ay: q[2 * i + 1], bx: q[2 * i + 2], by: q[2 * i + 3])
        }
    }

    /// A lower bound in metres on `screen`'s distance from `p` to any edge inside the box: the
    /// projected distance to the box, over the same shifts by 360 degrees.
    @inline(__always)
    static func boxBound(_ box: Box, _ p: LonLat, kx: Double, ky: Double) -> Double {
        let x0 = box.minX - p.lon
        let x1 = box.maxX - p.lon
        var dx = max(0, x0, -x1)
        if x1 > 180 { dx = min(dx, max(0, x0 - 360, 360 - x1)) }
        if x0 < -180 { dx = min(dx, max(0, x0 + 360, -360 - x1)) }
        let dy = max(0, box.minY - p.lat, p.lat - box.maxY)
        let ex = dx * kx
        let ey = dy * ky
        return (ex * ex + ey * ey).squareRoot()
    }

    /// Squared projected distance (m²) from `p` to the edge, and the edge parameter of the
    /// nearest point, over the shifts of the edge by -360, 0 and +360 degrees that reach
    /// within 180 degrees of `p`.
    @inline(__always)
    static func screen(_ e: Edge, _ p: LonLat, kx: Double, ky: Double) -> (Double, Double) {
        let ax = e.ax - p.lon
        let bx = e.bx - p.lon
        let ay = (e.ay - p.lat) * ky
        let by = (e.by - p.lat) * ky
        var best = segment(ax * kx, ay, bx * kx, by)
        let lo = min(ax, bx)
        let hi = max(ax, bx)
        if hi > 180 {
            let shifted = segment((ax - 360) * kx, ay, (bx - 360) * kx, by)
            if shifted.0 < best.0 { best = shifted }
        }
        if lo < -180 {
            let shifted = segment((ax + 360) * kx, ay, (bx + 360) * kx, by)
            if shifted.0 < best.0 { best = shifted }
        }
        return best
    }

    /// Squared distance from the origin to the segment (a, b) in the plane, and the
    /// parameter of its nearest point.
    @inline(__always)
    static func segment(_ ax: Double, _ ay: Double, _ bx: Double, _ by: Double) -> (Double, Double) {
        let dx = bx - ax
        let dy = by - ay
        let len2 = dx * dx + dy * dy
        var t = len2 > 0 ? -(ax * dx + ay * dy) / len2 : 0
        t = min(1, max(0, t))
        let cx = ax + t * dx
        let cy = ay + t * dy
        return (cx * cx + cy * cy, t)
    }

    /// The ellipsoidal distance from `p` to the edge's nearest point, found on the sphere.
    /// - Parameters:
    ///   - hint: the edge parameter of the nearest point in the projection.
    ///   - estimate: the projected distance, metres.
    static func onEllipsoid(_ e: Edge, _ p: LonLat, hint: Double, estimate: Double) -> Double {
        func point(_ t: Double) -> (lon: Double, lat: Double) {
            (e.ax + t * (e.bx - e.ax), e.ay + t * (e.by - e.ay))
        }
        func sphere(_ t: Double) -> Double {
            let c = point(t)
            return Geodesic.sphericalDistance(lon1: p.lon, lat1: p.lat, lon2: c.lon, lat2: c.lat)
        }
        let a = point(0)
        let b = point(1)
        // Metres along the edge per unit of t, for the search's stopping rule and the polish's
        // step: the distance between the ends, or for an edge long in longitude the length of
        // its path (16 chords), which its ends can far understate (an edge from -180 to 180
        // ends where it starts, round the world).
        var length = Geodesic.sphericalDistance(lon1: a.lon, lat1: a.lat, lon2: b.lon, lat2: b.lat)
        if abs(e.bx - e.ax) > 10 {
            length = 0
            for k in 0..<16 {
                let p0 = point(Double(k) / 16)
                let p1 = point(Double(k + 1) / 16)
                length += Geodesic.sphericalDistance(lon1: p0.lon, lat1: p0.lat, lon2: p1.lon, lat2: p1.lat)
            }
        }
        func ellipsoid(_ t: Double) -> Double {
            let c = point(t)
            return Geodesic.distance(lon1: p.lon, lat1: p.lat, lon2: c.lon, lat2: c.lat)
        }
        /// The least distance on the ellipsoid near the sphere's least within [lo, hi],
        /// searched from `start`.
        func refined(_ lo: Double, _ hi: Double, from start: Double) -> Double {
            var bestT = start
            var bestD = sphere(bestT)
            // Golden-section search on the sphere until the bracket is within 0.2% of the
            // least distance seen so far along the edge (seen, not the start's: a start one
            // sample away from a position on the edge would stop the search metres wide).
            var seen = bestD
            let onSphere = goldenMinimum(lo, hi, f: { t in
                let d = sphere(t)
                seen = min(seen, d)
                return d
            }) { ($1 - $0) * length <= 0.002 * seen + 0.01 }
            if onSphere.f < bestD { (bestT, bestD) = onSphere }
            // The search's stopping rule suits a minimum inside the edge, where the distance is
            // flat; at an end it is not, and the bracket (0.2% of the distance: the whole of a
            // short edge seen from far away) could stop metres short of it. Far across the
            // globe the nearest point is mostly an end (the distance along the edge is concave
            // there): the audit found 822 m too much at 17,400 km. So the bracket's ends that
            // are the edge's are candidates.
            for t in [0.0, 1.0] where t != bestT && t >= lo && t <= hi {
                let d = sphere(t)
                if d < bestD { (bestT, bestD) = (t, d) }
            }
            // The ellipsoid's nearest point lies within about 0.6% of the distance (the
            // sphere's anisotropy against it) of the sphere's: polish there on the geodesic
            // itself, by the vertex of the parabola through three geodesics 1% of the distance
            // apart (the distance is smooth there: an error far below 1e-8 of it).
            let atBest = ellipsoid(bestT)
            let h = length > 0 ? min(0.125, 0.01 * bestD / length) : 0
            guard h > 1e-12 else { return atBest }
            // Near an end of the edge the three points move inside it.
            let mid = min(1 - h, max(h, bestT))
            let f0 = mid == bestT ? atBest : ellipsoid(mid)
            let fm = ellipsoid(mid - h)
            let fp = ellipsoid(mid + h)
            let curvature = fm - 2 * f0 + fp
            // Concave (far across the globe): the least is at an end of the edge.
            guard curvature > 0 else { return min(atBest, f0, fm, fp, ellipsoid(0), ellipsoid(1)) }
            let vertex = min(1, max(0, mid + h * (fm - fp) / (2 * curvature)))
            return min(atBest, f0, fm, fp, ellipsoid(vertex))
        }
        // An edge long beside the distance (or spanning more than 90 degrees of longitude) may
        // have more than one local minimum: sample it (33 points past 90 degrees, 9 below), and
        // refine beside every sample that is a local least of the samples within 1.2% of the
        // least, since the sphere can rank two minima otherwise than the ellipsoid does (about
        // 0.6% apart at most). Beside the best sample only, a second minimum between two
        // samples, or one the sphere ranked second, was lost: 4 to 51 km too much across edges
        // of 98-126 degrees (an outside audit against a geodesic scan).
        guard length > 0.5 * estimate || abs(e.bx - e.ax) > 90 else { return refined(0, 1, from: min(1, max(0, hint))) }
        let n = abs(e.bx - e.ax) > 90 ? 32 : 8
        return withUnsafeTemporaryAllocation(of: Double.self, capacity: n + 1) { d in
            for k in 0...n { d[k] = sphere(Double(k) / Double(n)) }
            var least = Double.infinity
            for k in 0...n { least = min(least, d[k]) }
            var best = Double.infinity
            // The projection's nearest parameter starts the search of the bracket it lies in
            // when it is nearer than the sample (a position on the edge: exactly there).
            let start = min(1, max(0, hint))
            let atStart = sphere(start)
            var hintSearched = false
            for k in 0...n where (k == 0 || d[k] <= d[k - 1]) && (k == n || d[k] <= d[k + 1]) && d[k] <= least * 1.012 + 1 {
                let lo = Double(max(0, k - 1)) / Double(n)
                let hi = Double(min(n, k + 1)) / Double(n)
                let fromHint = start >= lo && start <= hi && atStart < d[k]
                if fromHint { hintSearched = true }
                best = min(best, refined(lo, hi, from: fromHint ? start : Double(k) / Double(n)))
            }
            // And beside the hint itself, when no such bracket holds it: a minimum between two
            // samples that are both above another sample's.
            if !hintSearched {
                best = min(best, refined(max(0, start - 1 / Double(n)), min(1, start + 1 / Double(n)), from: start))
            }
            return best
        }
    }

    /// Golden-section search for a minimum of `f` in [lo, hi], until `done(lo, hi)`: the
    /// smallest value seen and where. At most 60 steps.
    static func goldenMinimum(
        _ lo: Double, _ hi: Double, f: (Double) -> Double, done: (Double, Double) -> Bool
    ) -> (t: Double, f: Double) {
        let g = (5.0.squareRoot() - 1) / 2
        var lo = lo
        var hi = hi
        var x1 = hi - g * (hi - lo)
        var x2 = lo + g * (hi - lo)
        var f1 = f(x1)
        var f2 = f(x2)
        for _ in 0..<60 where !done(lo, hi) {
            if f1 <= f2 {
                hi = x2
                (x2, f2) = (x1, f1)
                x1 = hi - g * (hi - lo)
                f1 = f(x1)
            } else {
                lo = x1
                (x1, f1) = (x2, f2)
                x2 = lo + g * (hi - lo)
                f2 = f(x2)
            }
        }
        return f1 <= f2 ? (x1, f1) : (x2, f2)
    }
}
