import CGDAL
import FenceEngine

/// A geometry OGR made for us (a reprojected or linearised copy), destroyed with
/// `OGR_G_DestroyGeometry`.
final class OGROwnedGeometry {
    let raw: OGRGeometryH

    init(owning raw: OGRGeometryH) { self.raw = raw }

    deinit { OGR_G_DestroyGeometry(raw) }
}

/// What the fence reader asks of an OGR geometry: its type, its size, and its WKB.
enum OGRGeometry {
    /// The 2D base type (`wkbPoint`, `wkbPolygon`, `wkbCurvePolygon`, ...).
    static func flatType(_ g: OGRGeometryH) -> OGRwkbGeometryType {
        OGR_GT_Flatten(OGR_G_GetGeometryType(g))
    }

    static func typeName(_ g: OGRGeometryH) -> String {
        OGR_G_GetGeometryName(g).map { String(cString: $0) } ?? "?"
    }

    static func isEmpty(_ g: OGRGeometryH) -> Bool { OGR_G_IsEmpty(g) != 0 }

    /// Positions over all rings and polygons over all members, counted from OGR's own
    /// structure without copying a coordinate, so limits are checked before WKB is made.
    /// - Complexity: O(rings).
    static func size(_ g: OGRGeometryH) -> (positions: Int, polygons: Int) {
        let type = flatType(g)
        if type == wkbPolygon || type == wkbCurvePolygon || type == wkbTriangle {
            var positions = 0
            for r in 0..<OGR_G_GetGeometryCount(g) {
                if let ring = OGR_G_GetGeometryRef(g, r) { positions += Int(OGR_G_GetPointCount(ring)) }
            }
            return (positions, 1)
        }
        let parts = OGR_G_GetGeometryCount(g)
        if parts > 0 {
            var total = (positions: 0, polygons: 0)
            for p in 0..<parts {
                if let part = OGR_G_GetGeometryRef(g, p) {
                    let s = size(part)
                    total.positions += s.positions
                    total.polygons += s.polygons
                }
            }
            return total
        }
        return (Int(OGR_G_GetPointCount(g)), 0)
    }

    /// Calls `body` with each point sequence of `g`, depth first: `g` itself when it has no
    /// parts (a Point, LineString or LinearRing), else the rings of each polygon and the
    /// members of each collection. The sequences are borrowed from `g`.
    /// - Complexity: O(rings + members).
    static func forEachPointSequence(_ g: OGRGeometryH, _ body: (OGRGeometryH) throws(FenceError) -> Void) throws(FenceError) {
        // "Only geometries of type wkbPolygon, wkbMultiPoint, wkbMultiLineString,
        // wkbMultiPolygon or wkbGeometryCollection may return a valid value. Other geometry
        // types will silently return 0."
        let parts = OGR_G_GetGeometryCount(g)
        if parts == 0 { return try body(g) }
        for p in 0..<parts {
            if let part = OGR_G_GetGeometryRef(g, p) { try forEachPointSequence(part, body) }
        }
    }

    /// Copies the x and y of a Point or a LineString/LinearRing into `xs` and `ys` (grown as
    /// needed, reused between calls) with `OGR_G_GetPoints`; Z and M are left out.
    /// - Returns: the number of points copied (0 for any other type).
    /// - Complexity: O(n) in the points: one copy.
    static func copyXY(_ g: OGRGeometryH, xs: inout [Double], ys: inout [Double]) -> Int {
        let n = Int(OGR_G_GetPointCount(g))
        guard n > 0 else { return 0 }
        if xs.count < n {
            xs = [Double](repeating: 0, count: max(n, 2 * xs.count))
            ys = xs
        }
        let stride = Int32(MemoryLayout<Double>.stride)
        return xs.withUnsafeMutableBufferPointer { x in
            ys.withUnsafeMutableBufferPointer { y in
                Int(OGR_G_GetPoints(g, x.baseAddress, stride, y.baseAddress, stride, nil, 0))
            }
        }
    }

    /// For a layer that declares no CRS (and none is named): `coordinateOutOfRange` when the
    /// geometry's box reaches past longitude ±180 or latitude ±90 (beyond the 1e-9 degrees of
    /// noise every reader takes as the bound), with its extent and the way out, since such
    /// coordinates are almost always metres or feet of a projected CRS whose `.prj` went
    /// missing. Nil when the box is within range: the engine's own check then applies as to
    /// any fence.
    /// - Complexity: O(n) in the positions (OGR's envelope).
    static func beyondDegrees(_ g: OGRGeometryH) -> FenceError? {
        var box = OGREnvelope()
        OGR_G_GetEnvelope(g, &box)
        let noise = FenceValidation.rangeTolerance
        guard box.MinX < -180 - noise || box.MaxX > 180 + noise || box.MinY < -90 - noise || box.MaxY > 90 + noise else {
            return nil
        }
        return FenceError(
            .coordinateOutOfRange,
            reason: "coordinates span x \(box.MinX) to \(box.MaxX), y \(box.MinY) to \(box.MaxY), outside [-180, 180] x [-90, 90]: "
                + "the layer declares no CRS, so they are read as WGS84 longitude/latitude; name the CRS they are in with "
                + "--fence-crs (for example EPSG:32618 for UTM zone 18N)")
    }

    /// Curves (CurvePolygon, MultiSurface: GeoPackage and PostGIS may hold them) as straight
    /// segments, by OGR's default step; nil when the geometry has none.
    static func linearised(_ g: OGRGeometryH) -> OGROwnedGeometry? {
        guard OGR_G_HasCurveGeometry(g, 1) != 0 else { return nil }
        // "Returns a new geometry": ours to destroy.
        return OGR_G_GetLinearGeometry(g, 0, nil).map(OGROwnedGeometry.init(owning:))
    }

    /// Writes the geometry as 2D ISO WKB, little-endian, into `buffer` (reused between calls).
    /// Z and M are dropped in place first (`OGR_G_FlattenTo2D`), so `g` must be ours to change.
    /// - Returns: the number of bytes written, or nil when OGR fails.
    /// - Complexity: O(n) in the number of positions: one copy.
    static func isoWKB(_ g: OGRGeometryH, into buffer: inout [UInt8]) -> Int? {
        OGR_G_FlattenTo2D(g)
        let size = Int(OGR_G_WkbSize(g))
        guard size > 0 else { return nil }
        if buffer.count < size { buffer = [UInt8](repeating: 0, count: max(size, 2 * buffer.count)) }
        let status = buffer.withUnsafeMutableBufferPointer { OGR_G_ExportToIsoWkb(g, wkbNDR, $0.baseAddress) }
        return status == OGRERR_NONE ? size : nil
    }
}
