import CGEOS

/// An owned GEOS geometry, destroyed with the context that made it.
final class GEOSGeometry {
    let context: GEOSContext
    let raw: OpaquePointer

    /// Takes ownership of `raw`, which `context` created.
    init(owning raw: OpaquePointer, in context: GEOSContext) {
        self.context = context
        self.raw = raw
    }

    deinit {
        // "Caller is responsible for freeing with GEOSGeom_destroy()": every geometry the engine
        // holds was returned to it by a constructor or an operation, never borrowed.
        GEOSGeom_destroy_r(context.handle, raw)
    }

    /// The GEOS type id (GEOS_POLYGON, GEOS_MULTIPOLYGON, ...).
    var typeID: Int32 { GEOSGeomTypeId_r(context.handle, raw) }
}

extension GEOSContext {
    /// Builds a Polygon or MultiPolygon from flat rings.
    ///
    /// - Parameters:
    ///   - coords: x, y interleaved, every ring closed.
    ///   - rings: per ring, the number of positions and whether it starts a new polygon (its
    ///     exterior); the rings after an exterior, up to the next exterior, are its holes.
    /// - Returns: the geometry, or nil when GEOS refuses (its message is in `lastMessage`).
    /// - Complexity: O(n) in the number of positions; one copy into GEOS's coordinate sequences.
    func makePolygonal(coords: UnsafeBufferPointer<Double>, rings: [(count: Int, isExterior: Bool)]) -> GEOSGeometry? {
        var polygons: [OpaquePointer] = []
        var offset = 0
        var index = 0
        var ok = true
        resetMessage()
        while index < rings.count && ok {
            // One polygon: its exterior and the holes that follow it.
            var ringGeoms: [OpaquePointer] = []
            var r = index
            repeat {
                let n = rings[r].count
                let base = coords.baseAddress! + 2 * offset
                // GEOSCoordSeq_copyFromBuffer_r copies the doubles; the buffer stays ours.
                if let seq = GEOSCoordSeq_copyFromBuffer_r(handle, base, UInt32(n), 0, 0),
                    let ring = GEOSGeom_createLinearRing_r(handle, seq)  // takes ownership of seq
                {
                    ringGeoms.append(ring)
                } else {
                    ok = false
                }
                offset += n
                r += 1
            } while r < rings.count && !rings[r].isExterior && ok
            index = r
            guard ok, let shell = ringGeoms.first else {
                for g in ringGeoms { GEOSGeom_destroy_r(handle, g) }
                ok = false
                break
            }
            var holes = Array(ringGeoms.dropFirst()).map { Optional($0) }
            // "The caller retains ownership of the containing array, but the ownership of the
            // pointed-to objects is transferred to the returned GEOSGeometry."
            let polygon = holes.withUnsafeMutableBufferPointer { buf in
                GEOSGeom_createPolygon_r(handle, shell, buf.baseAddress, UInt32(buf.count))
            }
            if let polygon { polygons.append(polygon) } else { ok = false }
        }
        guard ok else {
            for p in polygons { GEOSGeom_destroy_r(handle, p) }
            return nil
        }
        if polygons.count == 1 { return GEOSGeometry(owning: polygons[0], in: self) }
        var parts = polygons.map { Optional($0) }
        // createCollection takes ownership of the members, not of the array.
        let multi = parts.withUnsafeMutableBufferPointer { buf in
            GEOSGeom_createCollection_r(handle, Int32(GEOS_MULTIPOLYGON.rawValue), buf.baseAddress, UInt32(buf.count))
        }
        guard let multi else {
            for p in polygons { GEOSGeom_destroy_r(handle, p) }
            return nil
        }
        return GEOSGeometry(owning: multi, in: self)
    }

    /// A point geometry.
    func makePoint(x: Double, y: Double) -> GEOSGeometry? {
        GEOSGeom_createPointFromXY_r(handle, x, y).map { GEOSGeometry(owning: $0, in: self) }
    }

    /// GEOS's validity verdict: nil when valid, else GEOS's reason with its location, e.g.
    /// "Self-intersection at (10, 5)". Uses `GEOSisValidDetail_r`.
    /// - Complexity: O(n log n) in the number of vertices.
    func invalidityReason(_ geometry: GEOSGeometry) -> String? {
        var reason: UnsafeMutablePointer<CChar>?
        var location: OpaquePointer?
        resetMessage()
        let valid = GEOSisValidDetail_r(handle, geometry.raw, 0, &reason, &location)
        defer {
            // "reason: ... Caller must free with GEOSFree()"; "location: ... Caller must free
            // with GEOSGeom_destroy()".
            if let reason { GEOSFree_r(handle, reason) }
            if let location { GEOSGeom_destroy_r(handle, location) }
        }
        switch valid {
        case 1: return nil
        case 0:
            var text = reason.map { String(cString: $0) } ?? "invalid geometry"
            if let location {
                var x = 0.0
                var y = 0.0
                if GEOSGeomGetX_r(handle, location, &x) == 1, GEOSGeomGetY_r(handle, location, &y) == 1 {
                    text += " at (\(x), \(y))"
                }
            }
            return text
        default:
            return "GEOS could not check validity: \(lastMessage ?? "no message")"
        }
    }

    /// Repairs with `GEOSMakeValidWithParams_r` (method STRUCTURE, collapsed parts dropped), so
    /// the result is polygonal or empty.
    func makeValid(_ geometry: GEOSGeometry) -> GEOSGeometry? {
        guard let params = GEOSMakeValidParams_create_r(handle) else { return nil }
        defer { GEOSMakeValidParams_destroy_r(handle, params) }
        _ = GEOSMakeValidParams_setMethod_r(handle, params, GEOS_MAKE_VALID_STRUCTURE)
        _ = GEOSMakeValidParams_setKeepCollapsed_r(handle, params, 0)
        resetMessage()
        return GEOSMakeValidWithParams_r(handle, geometry.raw, params).map { GEOSGeometry(owning: $0, in: self) }
    }

    /// The polygons of a Polygon, MultiPolygon or collection, as values (other members skipped).
    /// - Complexity: O(n); one copy out of GEOS per ring via `GEOSCoordSeq_copyToBuffer_r`.
    func polygons(of geometry: GEOSGeometry) -> [Polygon] {
        var out: [Polygon] = []
        collectPolygons(geometry.raw, into: &out)
        return out
    }

    private func collectPolygons(_ g: OpaquePointer, into out: inout [Polygon]) {
        let type = GEOSGeomTypeId_r(handle, g)
        switch type {
        case Int32(GEOS_POLYGON.rawValue):
            if GEOSisEmpty_r(handle, g) == 1 { return }
            // Rings returned by GetExteriorRing / GetInteriorRingN are borrowed: "Returned object
            // is a pointer to internal storage: it must NOT be destroyed directly."
            guard let shell = GEOSGetExteriorRing_r(handle, g) else { return }
            var polygon = Polygon(exterior: ringPositions(shell))
            let holeCount = GEOSGetNumInteriorRings_r(handle, g)
            if holeCount > 0 {
                for i in 0..<holeCount {
                    if let hole = GEOSGetInteriorRingN_r(handle, g, i) { polygon.holes.append(ringPositions(hole)) }
                }
            }
            out.append(polygon)
        case Int32(GEOS_MULTIPOLYGON.rawValue), Int32(GEOS_GEOMETRYCOLLECTION.rawValue):
            let n = GEOSGetNumGeometries_r(handle, g)
            if n > 0 {
                for i in 0..<n {
                    if let part = GEOSGetGeometryN_r(handle, g, i) { collectPolygons(part, into: &out) }
                }
            }
        default:
            return
        }
    }

    private func ringPositions(_ ring: OpaquePointer) -> [LonLat] {
        // The sequence is borrowed from the ring ("must not be destroyed").
        guard let seq = GEOSGeom_getCoordSeq_r(handle, ring) else { return [] }
        var size: UInt32 = 0
        guard GEOSCoordSeq_getSize_r(handle, seq, &size) == 1, size > 0 else { return [] }
        var buffer = [Double](repeating: 0, count: Int(size) * 2)
        let ok = buffer.withUnsafeMutableBufferPointer { buf in
            GEOSCoordSeq_copyToBuffer_r(handle, seq, buf.baseAddress, 0, 0)
        }
        guard ok == 1 else { return [] }
        return (0..<Int(size)).map { LonLat(lon: buffer[2 * $0], lat: buffer[2 * $0 + 1]) }
    }
}

extension GEOSContext {
    /// A two-point LineString (for segment tests).
    func makeSegment(_ a: LonLat, _ b: LonLat) -> GEOSGeometry? {
        var coords = [a.lon, a.lat, b.lon, b.lat]
        return coords.withUnsafeMutableBufferPointer { buf -> GEOSGeometry? in
            // The sequence is copied from our buffer; the LineString takes ownership of it.
            guard let seq = GEOSCoordSeq_copyFromBuffer_r(handle, buf.baseAddress, 2, 0, 0),
                let line = GEOSGeom_createLineString_r(handle, seq)
            else { return nil }
            return GEOSGeometry(owning: line, in: self)
        }
    }
}
