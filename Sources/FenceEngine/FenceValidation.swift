import SpatialIndex

/// A fence checked and converted to the store's flat form: WGS84, closed rings, index boxes.
struct NormalizedFence: Sendable {
    enum Kind: UInt8 { case circle = 1, polygon = 2 }
    var kind: Kind
    /// A polygon record carrying a cell grid and an edge index (`FlatGeometry.insertCellGrid`).
    var indexed = false
    /// The record laid out as `FlatGeometry` describes.
    var geometry: [Double]
    /// The index boxes: one or two for a circle, up to `FenceValidation.maxIndexBoxes` for a polygon.
    var boxes: [Box]
    var repaired: Bool
}

/// Limits on one fence, so hostile input is refused before it costs unbounded memory or time.
public struct FenceLimits: Sendable, Hashable {
    /// Most positions in one fence, over all its rings.
    public var maxPositions: Int = 1_000_000
    /// Most polygons in one MultiPolygon.
    public var maxPolygons: Int = 100_000
    public init() {}
}

package enum FenceValidation {
    /// How far past ±180 or ±90 degrees a fence coordinate may lie and be taken as the bound:
    /// 1e-9 degrees (0.1 mm). Reprojected data carries that much floating-point noise
    /// (Natural Earth's Russia reaches 180.00000000000006); beyond it is out of range.
    package static let rangeTolerance = 1e-9
    /// The largest circle radius taken, in metres: half a meridian of WGS84 (20,003,931.5 m,
    /// the longest geodesic) rounded up to the kilometre. Such a circle covers the globe.
    static let maxRadius = 20_004_000.0

    /// `p` with a coordinate within `rangeTolerance` beyond its range put on the bound.
    static func snappedToRange(_ p: LonLat) -> LonLat {
        func snap(_ v: Double, _ bound: Double) -> Double {
            v > bound && v <= bound + rangeTolerance ? bound : (v < -bound && v >= -bound - rangeTolerance ? -bound : v)
        }
        return LonLat(lon: snap(p.lon, 180), lat: snap(p.lat, 90))
    }

    /// Checks one fence and converts it to the flat WGS84 form.
    ///
    /// Rules (SPEC "Fences"): radius positive and finite; every coordinate finite and in range
    /// (after conversion to WGS84); rings of at least 4 positions, closed; GEOS-valid (the
    /// reason is GEOS's own, from `GEOSisValidDetail_r`), unless `repair` lets
    /// `GEOSMakeValidWithParams_r` fix it; per-fence settings in range.
    /// - Complexity: O(n log n) in the number of vertices (GEOS validity).
    static func normalize(_ fence: Fence, repair: Bool, limits: FenceLimits, geos: () -> GEOSContext)
        -> Result<NormalizedFence, FenceError>
    {
        let name = fence.id
        func fail(_ kind: FenceError.Kind, _ reason: String) -> Result<NormalizedFence, FenceError> {
            .failure(FenceError(kind, fence: name, reason: reason))
        }
        // A raw mask with other bits: it would be stored, then refused in every state file
        // and checkpoint the engine writes (and 0xFF is the store's "the engine's mask").
        if let actions = fence.actions, !FenceActions.all.isSuperset(of: actions) {
            return fail(.invalidSetting, "actions mask \(actions.rawValue) has bits that are no action (enter 1, exit 2, dwell 4, cross 8)")
        }
        if let dwell = fence.dwell, !(dwell.isFinite && dwell >= 0) {
            return fail(.invalidSetting, "dwell must be a finite number of seconds >= 0, got \(dwell)")
        }
        // A time no fix can have (epoch milliseconds: the fence would never expire).
        if let expires = fence.expires, let why = Position.timeProblem(expires, fence: true) {
            return fail(.invalidSetting, "expires: \(why)")
        }
        switch fence.shape {
        case .circle(let center, let radius):
            guard radius.isFinite && radius > 0 else {
                return fail(.invalidRadius, "radius must be a positive finite number of metres, got \(radius)")
            }
            // No two points of the ellipsoid are further apart than half a meridian
            // (20,003,931.5 m): a circle that wide covers the whole globe, and a larger radius
            // (1e300, a value in the wrong unit) only reaches `nearest` as a 300-digit distance.
            guard radius <= Self.maxRadius else {
                return fail(.invalidRadius, "radius \(radius) m is beyond the longest distance on the Earth (at most \(Int(Self.maxRadius)) m)")
            }
            guard center.lon.isFinite && center.lat.isFinite else {
                return fail(.coordinateOutOfRange, "center \(center) is not a finite coordinate")
            }
            let wgs = snappedToRange(CoordinateConversion.toWGS84(center, from: fence.coord))
            guard wgs.isValidWGS84Range else {
                return fail(.coordinateOutOfRange, "center \(center) is outside [-180, 180] x [-90, 90]")
            }
            return .success(
                NormalizedFence(
                    kind: .circle, geometry: CircleGeometry.record(center: wgs, radius: radius),
                    boxes: CircleGeometry.boxes(center: wgs, radius: radius), repaired: false))

        case .polygons(let polygons):
            if polygons.isEmpty { return fail(.emptyGeometry, "the shape has no polygon") }
            if polygons.count > limits.maxPolygons {
                return fail(.limitExceeded, "\(polygons.count) polygons exceed the limit of \(limits.maxPolygons)")
            }
            var total = 0
            for polygon in polygons {
                total += polygon.exterior.count
                for hole in polygon.holes { total += hole.count }
            }
            if total > limits.maxPositions {
                return fail(.limitExceeded, "\(total) positions exceed the limit of \(limits.maxPositions)")
            }
            var coords: [Double] = []
            coords.reserveCapacity(2 * total)
            var rings: [(count: Int, isExterior: Bool)] = []
            for (p, polygon) in polygons.enumerated() {
                for (r, ring) in polygon.rings.enumerated() {
                    let where_ =
                        (polygons.count > 1 ? "polygon \(p + 1) " : "")
                        + (r == 0 ? "exterior ring" : "hole \(r)")
                    if ring.count < 4 {
                        return fail(.ringTooShort, "\(where_) has \(ring.count) positions; a ring needs at least 4")
                    }
                    if ring.first! != ring.last! {
                        return fail(
                            .ringNotClosed, "\(where_) is not closed: it starts at \(ring.first!) and ends at \(ring.last!)")
                    }
                    for (i, point) in ring.enumerated() {
                        guard point.lon.isFinite && point.lat.isFinite else {
                            return fail(.coordinateOutOfRange, "\(where_) position \(i + 1) \(point) is not finite")
                        }
                        let q = snappedToRange(CoordinateConversion.toWGS84(point, from: fence.coord))
                        guard q.isValidWGS84Range else {
                            return fail(
                                .coordinateOutOfRange,
                                "\(where_) position \(i + 1) \(point) is outside [-180, 180] x [-90, 90]")
                        }
                        coords.append(q.lon)
                        coords.append(q.lat)
                    }
                    rings.append((ring.count, r == 0))
                }
            }
            // A single ring proven simple is valid without asking GEOS (the common case: it
            // halves bulk-load time for small rings, and large rings are proven through a grid
            // of their edges, or a sweep when they crowd it). A crowded ring that certainly
            // meets itself is refused with the sweep's contact, unless it is to be repaired:
            // GEOS takes as long to explain it as to check it (minutes for a large hedgehog).
            // Anything else, GEOS decides and explains.
            if polygons.count == 1 && polygons[0].holes.isEmpty {
                switch coords.withUnsafeBufferPointer({ RingSimplicity.verdict($0.baseAddress!, count: total) }) {
                case .simple:
                    return .success(polygonFence(coords, rings, repaired: false))
                case .meets(let x, let y, let proper) where !repair:
                    return fail(.invalidGeometry, "\(proper ? "Self-intersection" : "Ring Self-intersection") at (\(x), \(y))")
                default:
                    break
                }
            }
            let context = geos()
            guard let geometry = coords.withUnsafeBufferPointer({ context.makePolygonal(coords: $0, rings: rings) })
            else {
                return fail(.invalidGeometry, context.lastMessage ?? "GEOS could not build the polygon")
            }
            guard let reason = context.invalidityReason(geometry) else {
                return .success(polygonFence(coords, rings, repaired: false))
            }
            guard repair else { return fail(.invalidGeometry, reason) }
            guard let fixed = context.makeValid(geometry) else {
                return fail(.invalidGeometry, "\(reason); repair failed: \(context.lastMessage ?? "no message")")
            }
            let repairedPolygons = context.polygons(of: fixed)
            if repairedPolygons.isEmpty {
                return fail(.emptyGeometry, "\(reason); nothing polygonal is left after repair")
            }
            var fixedCoords: [Double] = []
            var fixedRings: [(count: Int, isExterior: Bool)] = []
            for polygon in repairedPolygons {
                for (r, ring) in polygon.rings.enumerated() {
                    for point in ring {
                        fixedCoords.append(point.lon)
                        fixedCoords.append(point.lat)
                    }
                    fixedRings.append((ring.count, r == 0))
                }
            }
            return .success(polygonFence(fixedCoords, fixedRings, repaired: true))
        }
    }

    /// The stored form of a checked polygon: its record, with an edge index, cell grid and edge
    /// tree (`EdgeTree`) when it is large, else a small grid (`SmallPolygonGrid`).
    static func polygonFence(_ coords: [Double], _ rings: [(count: Int, isExterior: Bool)], repaired: Bool) -> NormalizedFence {
        let indexed = coords.count / 2 > FlatGeometry.indexThreshold
        let extra = indexed ? 0 : SmallPolygonGrid.doubles(positions: coords.count / 2)
        var record = FlatGeometry.polygonRecord(coords: coords, rings: rings, extra: extra)
        if indexed {
            FlatGeometry.appendEdgeIndex(to: &record)
            FlatGeometry.insertCellGrid(into: &record)
            EdgeTree.append(to: &record)
        } else {
            SmallPolygonGrid.append(to: &record)
        }
        return NormalizedFence(kind: .polygon, indexed: indexed, geometry: record, boxes: polygonBoxes(coords, rings), repaired: repaired)
    }
}
