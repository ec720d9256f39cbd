import CGDAL
import FenceEngine

/// Reprojection of a layer's geometries to WGS84 longitude/latitude with OSR/OCT.
///
/// The target is EPSG:4326 with `OAMS_TRADITIONAL_GIS_ORDER`, so x comes out as longitude
/// whatever the authority's axis order (EPSG:4326 is latitude first). The source keeps the
/// layer's own data-axis mapping: the driver set it to describe how the layer stores
/// coordinates. Geometries go through `OGR_GeomTransformer_Transform` with `WRAPDATELINE=YES`,
/// so a polygon that crosses the antimeridian arrives cut into a MultiPolygon, as RFC 7946
/// and the engine want it. Every coordinate is checked on the way (`apply`, with
/// `OGRReprojection+Check.swift`): one the CRS cannot hold is refused, never wrapped onto
/// some other longitude.
///
/// One instance serves one layer on one thread: it keeps scratch buffers between features.
final class OGRReprojection {
    private let source: OGRSpatialReferenceH
    private let target: OGRSpatialReferenceH
    let transform: OGRCoordinateTransformationH
    /// `transform` backwards (WGS84 to the source), for the round-trip check.
    let inverse: OGRCoordinateTransformationH
    private let transformer: OGRGeomTransformerH
    /// The source CRS's name, for messages.
    let sourceName: String
    /// How far, in the source CRS's units, a coordinate may come back from the round trip
    /// (`roundTripTolerance`).
    let tolerance: Double
    /// For a geographic source, the largest longitude and latitude it may hold, in its own
    /// angular units: 180° and 90°, plus the 1e-9° of noise every reader takes as the bound
    /// (`geographicLimits`); nil for a projected source.
    let geographicLimits: (lon: Double, lat: Double)?
    /// Scratch for the checks: source coordinates (`xs`, `ys`), transformed ones (`us`, `vs`)
    /// and OCTTransformEx's per-point success flags.
    var xs: [Double] = [], ys: [Double] = [], us: [Double] = [], vs: [Double] = []
    var succeeded: [Int32] = []

    /// Throws unless `definition`, a CRS a file declares, is an authority name (`EPSG:n`,
    /// `urn:ogc:def:crs:...`, `http://www.opengis.net/def/crs/...`) that OSR knows. Only such
    /// names: OSR's user input also opens files and URLs, which a file's own text must not
    /// make it do, and GDAL's GeoJSON driver reads nothing else either.
    static func checkKnown(_ definition: String, declaredBy source: String) throws(FenceError) {
        let lower = definition.lowercased()
        let authority = ["epsg:", "urn:ogc:def:crs:", "http://www.opengis.net/def/crs/", "https://www.opengis.net/def/crs/"]
        guard authority.contains(where: { lower.hasPrefix($0) }) else {
            throw FenceError(
                .malformedInput,
                reason: "\(source) declares the CRS \(definition), which is not an authority name (EPSG:n, urn:ogc:def:crs:...)")
        }
        try GDALErrorState.collecting { () throws(FenceError) in
            guard let made = OSRNewSpatialReference(nil) else { throw FenceError(.malformedInput, reason: "cannot make a CRS") }
            defer { OSRRelease(made) }
            GDALErrorState.reset()
            guard OSRSetFromUserInput(made, definition) == OGRERR_NONE else {
                throw FenceError(
                    .malformedInput,
                    reason: "\(source) declares the CRS \(definition), which GDAL does not know: \(GDALErrorState.message ?? "OSR cannot read it")")
            }
        }
    }

    /// Refuses a `--fence-crs` definition GDAL cannot read, before any layer is opened: a typo
    /// was otherwise noticed only if some layer lacked a CRS of its own, and then only there.
    /// The user's own text may be anything OSR takes (EPSG:n, WKT, PROJ, a file).
    static func checkAssumed(_ definition: String) throws(FenceError) {
        try GDALErrorState.collecting { () throws(FenceError) in
            guard let made = OSRNewSpatialReference(nil) else { throw FenceError(.malformedInput, reason: "cannot make a CRS") }
            defer { OSRRelease(made) }
            GDALErrorState.reset()
            guard OSRSetFromUserInput(made, definition) == OGRERR_NONE else {
                // A setting, as an --open-option GDAL does not take is (the data is not at fault).
                throw FenceError(.invalidSetting, reason: "unknown CRS \(definition): \(GDALErrorState.message ?? "OSR cannot read it")")
            }
        }
    }

    /// The reprojection a layer needs, or nil when its coordinates already are WGS84
    /// longitude/latitude (or it declares no CRS and none is assumed).
    /// - Parameters:
    ///   - layerCRS: the layer's CRS, borrowed.
    ///   - assumed: a definition for layers without one (`EPSG:32632`, WKT, PROJ).
    static func forLayer(_ layerCRS: OGRSpatialReferenceH?, assumed: String?) throws(FenceError) -> OGRReprojection? {
        let source: OGRSpatialReferenceH
        if let layerCRS {
            // "OSRClone: ... Returns a new spatial reference": ours, released in deinit.
            guard let copy = OSRClone(layerCRS) else { throw FenceError(.malformedInput, reason: "cannot copy the layer's CRS") }
            source = copy
        } else if let assumed {
            guard let made = OSRNewSpatialReference(nil) else { throw FenceError(.malformedInput, reason: "cannot make a CRS") }
            GDALErrorState.reset()
            guard OSRSetFromUserInput(made, assumed) == OGRERR_NONE else {
                OSRRelease(made)
                throw FenceError(.invalidSetting, reason: "unknown CRS \(assumed): \(GDALErrorState.message ?? "OSR cannot read it")")
            }
            // A CRS the user names describes data written x = easting/longitude, as GIS files do.
            OSRSetAxisMappingStrategy(made, OAMS_TRADITIONAL_GIS_ORDER)
            source = made
        } else {
            return nil
        }
        guard let target = OSRNewSpatialReference(nil) else {
            OSRRelease(source)
            throw FenceError(.malformedInput, reason: "cannot make the WGS84 CRS")
        }
        guard OSRImportFromEPSG(target, 4326) == OGRERR_NONE else {
            OSRRelease(source)
            OSRRelease(target)
            throw FenceError(.malformedInput, reason: "cannot load EPSG:4326 (is PROJ's proj.db installed?): \(GDALErrorState.message ?? "")")
        }
        OSRSetAxisMappingStrategy(target, OAMS_TRADITIONAL_GIS_ORDER)
        // Same CRS and same data-axis mapping (OSRIsSame compares both by default): nothing to do.
        if OSRIsSame(source, target) != 0 {
            OSRRelease(source)
            OSRRelease(target)
            return nil
        }
        GDALErrorState.reset()
        guard let transform = OCTNewCoordinateTransformation(source, target) else {
            let name = Self.name(source)
            OSRRelease(source)
            OSRRelease(target)
            throw FenceError(.malformedInput, reason: "no transformation from \(name) to WGS84: \(GDALErrorState.message ?? "PROJ found none")")
        }
        GDALErrorState.reset()
        guard let inverse = CGDAL_inverseTransformation(transform, source, target) else {
            let name = Self.name(source)
            OCTDestroyCoordinateTransformation(transform)
            OSRRelease(source)
            OSRRelease(target)
            throw FenceError(.malformedInput, reason: "no transformation from WGS84 back to \(name): \(GDALErrorState.message ?? "PROJ found none")")
        }
        guard let transformer = CGDAL_geomTransformerWrappingDateline(transform) else {
            OCTDestroyCoordinateTransformation(inverse)
            OCTDestroyCoordinateTransformation(transform)
            OSRRelease(source)
            OSRRelease(target)
            throw FenceError(.malformedInput, reason: "cannot make a geometry transformer: \(GDALErrorState.message ?? "")")
        }
        return OGRReprojection(source: source, target: target, transform: transform, inverse: inverse, transformer: transformer)
    }

    private init(
        source: OGRSpatialReferenceH, target: OGRSpatialReferenceH, transform: OGRCoordinateTransformationH,
        inverse: OGRCoordinateTransformationH, transformer: OGRGeomTransformerH
    ) {
        self.source = source
        self.target = target
        self.transform = transform
        self.inverse = inverse
        self.transformer = transformer
        sourceName = Self.name(source)
        tolerance = Self.roundTripTolerance(source)
        geographicLimits = Self.geographicLimits(source)
    }

    deinit {
        // The transformer refers to the transformation, which refers to both CRSs: free in
        // that order. CRSs are reference counted ("OSRRelease: decrements the reference
        // count by one, and destroy if zero").
        OGR_GeomTransformer_Destroy(transformer)
        OCTDestroyCoordinateTransformation(inverse)
        OCTDestroyCoordinateTransformation(transform)
        OSRRelease(source)
        OSRRelease(target)
    }

    /// `EPSG:32632 (WGS 84 / UTM zone 32N)`, or the CRS's name alone.
    static func name(_ crs: OGRSpatialReferenceH) -> String {
        let title = OSRGetName(crs).map { String(cString: $0) } ?? "unnamed CRS"
        if let authority = OSRGetAuthorityName(crs, nil), let code = OSRGetAuthorityCode(crs, nil) {
            return "\(String(cString: authority)):\(String(cString: code)) (\(title))"
        }
        return title
    }

    /// A reprojected copy of `g`, cut at the antimeridian where it crosses it.
    ///
    /// The coordinates are checked (`OGRReprojection+Check.swift`): their magnitudes before
    /// GDAL sees them, then the copy is mapped back to them; only when that does not match
    /// (a cut, a folded longitude, a wrap) does the full check transform them there and back
    /// to decide.
    /// - Throws: `coordinateOutOfRange` naming the first coordinate refused (not finite,
    ///   beyond `coordinateBound`, not transformable, or not mapping back), or with GDAL's
    ///   message when the transformer fails.
    /// - Complexity: O(n) in the positions: the transformer's transformation and one more
    ///   back for each. Loading 100,000 reprojected fences (1.4 million positions, release
    ///   build, median of 5) took 11-19% more CPU than without the checks: EPSG:3857
    ///   GeoPackage 1.67 -> 1.99 s, UTM FlatGeobuf 2.24 -> 2.48 s (README "Limits").
    func apply(_ g: OGRGeometryH) throws(FenceError) -> OGROwnedGeometry {
        try checkMagnitudes(g)
        GDALErrorState.reset()
        // "Returns a new geometry (or NULL) to destroy with OGR_G_DestroyGeometry()".
        guard let raw = OGR_GeomTransformer_Transform(transformer, g) else {
            let message = GDALErrorState.message
            try checkCoordinates(g)
            throw FenceError(.coordinateOutOfRange, reason: "cannot reproject from \(sourceName) to WGS84: \(message ?? "a coordinate is out of the CRS's area")")
        }
        let transformed = OGROwnedGeometry(owning: raw)
        if !mapsBack(g, transformed.raw) { try checkCoordinates(g) }
        removeCutSpikes(transformed.raw)
        return transformed
    }
}
