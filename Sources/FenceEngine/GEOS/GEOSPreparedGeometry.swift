import CGEOS

/// A GEOS prepared geometry over an owned base geometry.
///
/// It keeps a strong reference to `base` so the prepared geometry, which points into it, is
/// destroyed first. GEOS builds its point locator lazily on the first predicate call, so a
/// prepared geometry is not safe to share between threads until it has been warmed by one call;
/// the engine never shares them: each worker prepares its own.
final class GEOSPreparedGeometry {
    let base: GEOSGeometry
    let raw: OpaquePointer

    init?(_ base: GEOSGeometry) {
        // "GEOSPrepare: ... Caller must free with GEOSPreparedGeom_destroy()". The prepared
        // geometry holds a reference to `base`, which must outlive it.
        guard let raw = GEOSPrepare_r(base.context.handle, base.raw) else { return nil }
        self.base = base
        self.raw = raw
    }

    deinit {
        GEOSPreparedGeom_destroy_r(base.context.handle, raw)
    }

    /// `covers` for one point (boundary inside), via `GEOSPreparedCovers_r`. Nil on a GEOS exception.
    func covers(x: Double, y: Double) -> Bool? {
        switch CGEOS_preparedCoversXY(base.context.handle, raw, x, y) {
        case 0: return false
        case 1: return true
        default: return nil
        }
    }

    /// `intersects` with another geometry (for segment crossing tests). Nil on a GEOS exception.
    func intersects(_ other: GEOSGeometry) -> Bool? {
        switch GEOSPreparedIntersects_r(base.context.handle, raw, other.raw) {
        case 0: return false
        case 1: return true
        default: return nil
        }
    }
}
