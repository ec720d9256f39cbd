import FenceEngine

/// Bounds on hostile fence input, checked while reading so that no single feature can make the
/// reader allocate without bound or recurse without bound.
public struct FenceInputLimits: Sendable, Hashable {
    /// Positions per fence and polygons per MultiPolygon (the store's own limits, applied while
    /// reading: past them nothing more of the feature is kept and it is rejected with
    /// `limit-exceeded`).
    public var geometry = FenceLimits()
    /// Deepest nesting of JSON arrays and objects in a feature's properties (GeoJSON). Deeper
    /// values are skipped (one bit of memory per level, no recursion) and the feature is
    /// rejected.
    public var maxNesting = 64

    public init() {}
}

/// How to read a fence source.
public struct FenceInputOptions: Sendable {
    /// Which reader handles the source.
    public enum Reader: String, Sendable {
        /// `.geojson` / `.json` / `.geojsonl` / `.geojsons` files and standard input with the
        /// built-in GeoJSON reader
        /// (faster, see README), everything else through GDAL/OGR.
        case auto
        /// The built-in GeoJSON reader.
        case native
        /// GDAL/OGR, for any vector format it opens.
        case ogr
    }

    public var reader = Reader.auto
    public var fields = FenceFields()
    /// Coordinate system of fences without a coord field.
    public var coord = CoordinateSystem.wgs84
    /// OGR layers to read, by name; empty for every vector layer of the source.
    public var layers: [String] = []
    /// GDAL open options, `KEY=VALUE` (as `ogr2ogr -oo`), e.g. `GEOM_POSSIBLE_NAMES=geom` for CSV.
    public var openOptions: [String] = []
    /// CRS of layers that declare none (any definition OSR understands: `EPSG:32632`, WKT,
    /// PROJ); nil takes them as WGS84 longitude/latitude.
    public var assumedCRS: String?
    public var limits = FenceInputLimits()
    /// Workers for the built-in GeoJSON reader: a large `features` array is cut into parts
    /// read side by side, with the same result as one thread. OGR reads on one thread.
    public var threads = FenceStore.defaultThreads
    /// Below this many bytes after a `features` array's start the built-in reader stays on one
    /// thread: cutting the array costs a pass over its bytes and a join, which pays from a few
    /// thousand fences (tests and fuzzing set 0 to reach the parallel path on small documents).
    public var parallelMinimumBytes = 1 << 22

    public init() {}
}
