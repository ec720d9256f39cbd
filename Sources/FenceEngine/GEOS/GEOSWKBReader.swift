import CGEOS

/// A GEOS WKB reader (`GEOSWKBReader`), tied to the context that made it.
///
/// It reads ISO WKB and PostGIS extended WKB in either byte order. One reader serves many
/// geometries; like its context it is never shared between threads.
final class GEOSWKBReader {
    let context: GEOSContext
    let raw: OpaquePointer

    init?(_ context: GEOSContext) {
        // "GEOSWKBReader_create_r: ... Caller must free with GEOSWKBReader_destroy_r()".
        guard let raw = GEOSWKBReader_create_r(context.handle) else { return nil }
        self.context = context
        self.raw = raw
    }

    deinit {
        GEOSWKBReader_destroy_r(context.handle, raw)
    }

    /// The geometry the bytes describe (`GEOSWKBReader_read_r`), or nil when GEOS refuses them;
    /// its reason is then in `context.lastMessage`.
    /// - Complexity: O(n) in the number of positions; GEOS copies them into its own sequences.
    func read(_ bytes: UnsafeRawBufferPointer) -> GEOSGeometry? {
        guard let base = bytes.baseAddress else { return nil }
        context.resetMessage()
        // "Caller is responsible for freeing the returned geometry with GEOSGeom_destroy_r()";
        // the input buffer stays ours and is only read.
        let geometry = GEOSWKBReader_read_r(
            context.handle, raw, base.assumingMemoryBound(to: UInt8.self), bytes.count)
        return geometry.map { GEOSGeometry(owning: $0, in: context) }
    }
}

extension GEOSContext {
    /// The coordinates of a Point, or nil for an empty point or another type.
    func pointPosition(_ geometry: GEOSGeometry) -> LonLat? {
        guard geometry.typeID == Int32(GEOS_POINT.rawValue), GEOSisEmpty_r(handle, geometry.raw) == 0 else { return nil }
        var x = 0.0
        var y = 0.0
        guard GEOSGeomGetX_r(handle, geometry.raw, &x) == 1, GEOSGeomGetY_r(handle, geometry.raw, &y) == 1 else { return nil }
        return LonLat(lon: x, lat: y)
    }
}
