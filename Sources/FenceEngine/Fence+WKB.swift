/// Builds fence shapes from Well-Known Binary with GEOS's WKB reader (`GEOSWKBReader_read_r`):
/// geometry arrives from GDAL/OGR, PostGIS or any other source as bytes, never as text.
///
/// Holds one GEOS context and one WKB reader for many geometries, so it is a class and, like
/// a GEOS context, used by one thread at a time.
public final class WKBShapeReader {
    private let context = GEOSContext()
    private let reader: GEOSWKBReader
    /// Checked before GEOS reads anything (see `shape(_:radius:)`).
    public var limits: FenceLimits

    public init(limits: FenceLimits = FenceLimits()) {
        self.limits = limits
        // GEOSWKBReader_create_r fails only when it cannot allocate a few bytes.
        guard let reader = GEOSWKBReader(context) else { fatalError("GEOSWKBReader_create_r failed: out of memory") }
        self.reader = reader
    }

    /// The shape a WKB geometry describes: a Polygon or MultiPolygon as `.polygons`, a Point with
    /// a `radius` (metres) as `.circle`.
    ///
    /// Coordinates are taken as they are (x as longitude, y as latitude; Z and M dropped);
    /// reproject before. The bytes are first walked header by header (O(rings), nothing
    /// allocated): the type must be Point, Polygon or MultiPolygon, every count must fit in
    /// the buffer, `limits` must hold, and every ring must have at least 4 positions and be
    /// closed; the errors name the ring and carry the same kinds and texts as the engine's own
    /// checks (`ring-too-short`, `ring-not-closed`, `limit-exceeded`). Only then does GEOS read
    /// the bytes. Validity (self-intersection) is judged when the fence is added to a store.
    /// - Parameters:
    ///   - wkb: ISO WKB or PostGIS extended WKB, either byte order.
    ///   - radius: for a Point, the circle's radius in metres; ignored for polygons.
    /// - Throws: `FenceError` without a fence name (the caller knows it).
    /// - Complexity: O(n) in the number of positions: one copy into GEOS and one out.
    public func shape(_ wkb: UnsafeRawBufferPointer, radius: Double?) throws(FenceError) -> FenceShape {
        let layout = try WKBLayout.read(wkb, limits: limits).get()
        if layout.isEmpty { throw FenceError(.emptyGeometry, reason: "the geometry is empty") }
        if layout.kind == .point && radius == nil {
            throw FenceError(.invalidRadius, reason: "a Point fence needs a radius in metres")
        }
        guard let geometry = reader.read(wkb) else {
            throw FenceError(.malformedInput, reason: "GEOS could not read the WKB: \(context.lastMessage ?? "no message")")
        }
        switch layout.kind {
        case .point:
            guard let center = context.pointPosition(geometry), let radius else {
                throw FenceError(.emptyGeometry, reason: "the geometry is empty")
            }
            return .circle(center: center, radius: radius)
        case .polygon, .multiPolygon:
            let polygons = context.polygons(of: geometry)
            if polygons.isEmpty { throw FenceError(.emptyGeometry, reason: "the geometry is empty") }
            return .polygons(polygons)
        }
    }

    /// `shape(_:radius:)` over an array of bytes.
    public func shape(_ wkb: [UInt8], radius: Double?) throws(FenceError) -> FenceShape {
        try wkb.withUnsafeBytes { raw in Result { () throws(FenceError) in try shape(raw, radius: radius) } }.get()
    }
}

extension FenceShape {
    /// A shape from WKB; see `WKBShapeReader.shape(_:radius:)`. Makes a GEOS context for the
    /// one call: to read many geometries, keep a `WKBShapeReader`.
    public init(wkb: [UInt8], radius: Double? = nil, limits: FenceLimits = FenceLimits()) throws(FenceError) {
        self = try WKBShapeReader(limits: limits).shape(wkb, radius: radius)
    }
}
