import CGDAL
import FenceEngine

/// The checks around `OGRReprojection.apply`: a coordinate the source CRS cannot hold is
/// refused with its value, never wrapped onto some other longitude (found by an independent
/// audit: x = 1e18 in EPSG:3857 hung GDAL, and x = 1e12 loaded as a fence at a longitude
/// nobody wrote).
extension OGRReprojection {
    /// The largest coordinate magnitude accepted, in any CRS's units: 1e10.
    ///
    /// No CRS places a point on Earth past about 1e8 of its units: the Earth's circumference
    /// is 4.0e7 m (1.3e8 US survey feet, 2.0e8 Gunter's links), and the largest coordinates in
    /// use are zone-prefixed Gauss-Krüger eastings (CGCS2000 3-degree zone 45: 45,500,000 m)
    /// and State Plane feet. 1e10 leaves a hundredfold margin. Beyond it GDAL 3.6 is not
    /// safe to call: its transformation takes time linear in a coordinate's size (measured for
    /// EPSG:3857 to WGS84: 5 µs at 1e10, 0.6 s at 1e16, 5 s at 1e17; 1e18 ran for minutes).
    static let coordinateBound = 1e10

    /// A longitude past ±540° after the transformation has gone around the Earth more than
    /// once. A safety net: a geographic source's longitudes are refused past ±180 before
    /// (`geographicLimits`), and PROJ brings a projected CRS's into ±180, where the round trip
    /// catches a wrap.
    static let longitudeBound = 540.0

    /// 180° and 90° (plus 1e-9°, the noise every reader takes as the bound) in a geographic
    /// CRS's angular units; nil for a projected CRS.
    ///
    /// A geographic layer holds longitudes in ±180 and latitudes in ±90, as WGS84 input must:
    /// x = 190 is refused, not folded to -170 by `WRAPDATELINE`. Before, only an EPSG:4326
    /// layer (which is not reprojected) refused it, while EPSG:4269, EPSG:4258 or EPSG:4979 (a
    /// GeoJSON file with a Z coordinate, read through OGR) folded it: one input, two outcomes
    /// (independent audit).
    static func geographicLimits(_ crs: OGRSpatialReferenceH) -> (lon: Double, lat: Double)? {
        guard OSRIsGeographic(crs) != 0 else { return nil }
        let radians = OSRGetAngularUnits(crs, nil)
        let degreesPerUnit = radians > 0 ? radians * 180 / .pi : 1
        let noise = FenceValidation.rangeTolerance
        return ((180 + noise) / degreesPerUnit, (90 + noise) / degreesPerUnit)
    }

    /// How far a coordinate may come back from the round trip source -> WGS84 -> source: 1 m
    /// on the ground in the source's units, 1e-5 degrees (1.1 m at the equator) for a
    /// geographic source.
    ///
    /// PROJ's round trip inside a CRS's domain is exact to far less (measured: 1e-10 m in
    /// EPSG:3857, 2e-4 m for UTM 80° from its central meridian, 2e-9° for NAD27), and a fence
    /// is not drawn finer than a metre. A wrapped coordinate comes back a whole turn away
    /// (40,075 km in EPSG:3857); a point past a projection's edge lands anywhere.
    static func roundTripTolerance(_ crs: OGRSpatialReferenceH) -> Double {
        if OSRIsGeographic(crs) != 0 {
            // "OSRGetAngularUnits: ... Returns the value to multiply by angular distances to
            // transform them to radians."
            let radians = OSRGetAngularUnits(crs, nil)
            return radians > 0 ? 1e-5 * .pi / 180 / radians : 1e-5
        }
        // "OSRGetLinearUnits: ... Returns the value to multiply by linear distances to
        // transform them to meters."
        let metres = OSRGetLinearUnits(crs, nil)
        return metres > 0 ? 1 / metres : 1
    }

    /// Refuses a coordinate that is not finite or lies beyond `coordinateBound`: what must
    /// never reach GDAL; and, in a geographic source, one past ±180 / ±90 (`geographicLimits`).
    /// - Complexity: O(n) in the positions: one copy (`OGR_G_GetPoints`) and a comparison each.
    func checkMagnitudes(_ g: OGRGeometryH) throws(FenceError) {
        try OGRGeometry.forEachPointSequence(g) { (sequence) throws(FenceError) in
            let n = OGRGeometry.copyXY(sequence, xs: &xs, ys: &ys)
            let bound = Self.coordinateBound
            for i in 0..<n {
                let x = xs[i], y = ys[i]
                guard x.isFinite, y.isFinite else {
                    throw FenceError(.coordinateOutOfRange, reason: "coordinate (\(x), \(y)) is not a finite number")
                }
                guard abs(x) <= bound, abs(y) <= bound else {
                    throw FenceError(
                        .coordinateOutOfRange,
                        reason: "coordinate (\(x), \(y)) is beyond ±1e10, where no coordinate system places a point on Earth; "
                            + "not reprojected from \(sourceName)")
                }
                if let limits = geographicLimits, abs(x) > limits.lon || abs(y) > limits.lat {
                    throw FenceError(
                        .coordinateOutOfRange,
                        reason: "coordinate (\(x), \(y)) of \(sourceName) is past longitude ±180 or latitude ±90; "
                            + "not folded onto another longitude")
                }
            }
        }
    }

    /// Whether `output`, the transformer's copy of `source`, has the same structure and every
    /// position of it maps back (`inverse`) to its source position within `tolerance`. Then
    /// nothing was wrapped, and no forward transformation is needed for the check.
    ///
    /// False is no verdict: the transformer cut a polygon at the antimeridian (other
    /// structure) or folded a geographic longitude (190° came out as -170°), or a coordinate
    /// wrapped. `checkCoordinates` then decides, and words the refusal.
    /// - Complexity: O(n) in the positions, one transformation each.
    func mapsBack(_ source: OGRGeometryH, _ output: OGRGeometryH) -> Bool {
        let parts = OGR_G_GetGeometryCount(source)
        guard parts == OGR_G_GetGeometryCount(output), OGRGeometry.flatType(source) == OGRGeometry.flatType(output) else { return false }
        if parts == 0 {
            let n = OGRGeometry.copyXY(source, xs: &xs, ys: &ys)
            guard OGRGeometry.copyXY(output, xs: &us, ys: &vs) == n else { return false }
            guard n > 0 else { return true }
            run(inverse, n)
            return matches(0..<n)
        }
        for p in 0..<parts {
            guard let s = OGR_G_GetGeometryRef(source, p), let o = OGR_G_GetGeometryRef(output, p), mapsBack(s, o) else { return false }
        }
        return true
    }

    /// Refuses `g` unless every coordinate transforms to WGS84 (within `longitudeBound`) and
    /// maps back to itself within `tolerance`; `checkMagnitudes` must have passed.
    ///
    /// The round trip is what catches a coordinate past the CRS's domain: PROJ brings the
    /// longitude of x = 3e7 m in EPSG:3857 into ±180 (-90.5°), which maps back to
    /// x = -10,075,017 m. It also refuses an EPSG:3857 polygon drawn across the antimeridian
    /// past x = ±20,037,508 m, which used to load turned inside out (170°E to 170°W the long
    /// way round).
    /// - Throws: `coordinateOutOfRange`, naming the first coordinate refused and why.
    /// - Complexity: O(n) in the positions, two transformations each (`OCTTransformEx`, one
    ///   call per point sequence), in buffers reused from feature to feature.
    func checkCoordinates(_ g: OGRGeometryH) throws(FenceError) {
        try OGRGeometry.forEachPointSequence(g) { (sequence) throws(FenceError) in
            let n = OGRGeometry.copyXY(sequence, xs: &xs, ys: &ys)
            guard n > 0 else { return }
            reserveTransformed(n)
            for i in 0..<n {
                us[i] = xs[i]
                vs[i] = ys[i]
            }
            GDALErrorState.reset()
            run(transform, n)
            for i in 0..<n {
                guard succeeded[i] != 0 else {
                    throw FenceError(
                        .coordinateOutOfRange,
                        reason: "cannot reproject (\(xs[i]), \(ys[i])) from \(sourceName) to WGS84: \(GDALErrorState.message ?? "PROJ cannot transform it")")
                }
                guard abs(us[i]) <= Self.longitudeBound else {
                    throw FenceError(
                        .coordinateOutOfRange,
                        reason: "coordinate (\(xs[i]), \(ys[i])) of \(sourceName) is longitude \(us[i]), more than one turn past the antimeridian")
                }
            }
            run(inverse, n)
            for i in 0..<n where !matches(i..<i + 1) {
                throw notMappingBack(x: xs[i], y: ys[i], back: succeeded[i] != 0 ? (us[i], vs[i]) : nil)
            }
        }
    }

    /// Whether the positions `range` of the way back (`us`, `vs`) all succeeded and lie
    /// within `tolerance` of the source (`xs`, `ys`).
    private func matches(_ range: Range<Int>) -> Bool {
        let tolerance = self.tolerance
        for i in range where succeeded[i] == 0 || !(abs(us[i] - xs[i]) <= tolerance && abs(vs[i] - ys[i]) <= tolerance) {
            return false
        }
        return true
    }

    private func reserveTransformed(_ n: Int) {
        if us.count < n {
            us = [Double](repeating: 0, count: max(n, xs.count))
            vs = us
        }
    }

    /// `OCTTransformEx` over the first `n` of `us` and `vs`, in place, with `succeeded` set
    /// per point. No Z: both directions take it as 0, so the round trip is consistent.
    private func run(_ transformation: OGRCoordinateTransformationH, _ n: Int) {
        if succeeded.count < n { succeeded = [Int32](repeating: 0, count: max(n, 2 * succeeded.count)) }
        us.withUnsafeMutableBufferPointer { u in
            vs.withUnsafeMutableBufferPointer { v in
                succeeded.withUnsafeMutableBufferPointer { ok in
                    _ = OCTTransformEx(transformation, Int32(n), u.baseAddress, v.baseAddress, nil, ok.baseAddress)
                }
            }
        }
    }

    /// The refusal of (x, y), with where it went (transformed again: the buffers hold the
    /// way back by now) and where it came back to.
    private func notMappingBack(x: Double, y: Double, back: (Double, Double)?) -> FenceError {
        var lon = x, lat = y
        let there = OCTTransform(transform, 1, &lon, &lat, nil) != 0
        let via = there ? "it becomes longitude \(lon), latitude \(lat), " : ""
        let returned = back.map { "which maps back to (\($0.0), \($0.1)), not to itself" } ?? "which does not map back"
        return FenceError(
            .coordinateOutOfRange,
            reason: "coordinate (\(x), \(y)) is outside what \(sourceName) can represent: \(via)\(returned) "
                + "(a longitude wrapped around the Earth, or a point past the projection's edge)")
    }
}
