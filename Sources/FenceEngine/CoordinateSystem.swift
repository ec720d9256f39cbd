import Foundation

/// The coordinate system a fence or a fix was written in. The engine stores everything as WGS84.
///
/// - `wgs84`: plain GPS longitude/latitude (EPSG:4326).
/// - `gcj02`: the published offset (GCJ-02, "Mars coordinates") used by Amap, Tencent and Google
///   China. Equal to WGS84 outside China's box (``CoordinateConversion/isOutsideChina(lon:lat:)``).
/// - `bd09ll`: Baidu's longitude/latitude, BD-09 on top of GCJ-02 (Baidu's geofence guide calls it
///   `bd09ll`). Equal to WGS84 outside China's box. Baidu's Mercator `bd09mc` is not accepted.
public enum CoordinateSystem: String, Sendable, Hashable, CaseIterable, Codable {
    case wgs84
    case gcj02
    case bd09ll

    /// Parses a coordinate system name as users write it.
    ///
    /// Case-insensitive; surrounding white space, `-` and `_` are ignored, so `"wgs84"`,
    /// `"WGS-84"`, `"gcj02"`, `"GCJ-02"`, `"bd09ll"`, `"bd-09ll"` and `"bd09"` (Baidu's own short
    /// name for its longitude/latitude) are all accepted.
    ///
    /// - Parameter name: the name to parse.
    /// - Returns: `nil` for anything else, including `"bd09mc"` (Baidu Mercator metres, a
    ///   projection rather than longitude/latitude) and the empty string.
    /// - Complexity: O(*n*) in the length of `name`.
    public init?(name: String) {
        var key = ""
        key.reserveCapacity(8)
        for scalar in name.unicodeScalars {
            switch scalar {
            case "-", "_", " ", "\t", "\n", "\r": continue
            default: key.unicodeScalars.append(scalar)
            }
        }
        switch key.lowercased() {
        case "wgs84": self = .wgs84
        case "gcj02": self = .gcj02
        case "bd09ll", "bd09": self = .bd09ll
        default: return nil
        }
    }
}

/// Conversions between WGS84, GCJ-02 and BD-09LL longitude/latitude, all in degrees.
///
/// The forward maps are the published formulas every Chinese map SDK clone uses (Krasovsky
/// ellipsoid constants with the `transformLat`/`transformLon` sine polynomials for GCJ-02; the
/// `x_pi` rotation for BD-09). The way back is the exact inverse found by iteration, not the
/// common one-step approximation that is off by 1-2 m: the answer's forward image is within
/// 1e-10 degrees (about 0.01 mm) of the input.
///
/// China's box and its edge: WGS84 points outside the box (see ``isOutsideChina(lon:lat:)``) are
/// not offset, and converted points outside the box come back unchanged. The forward map is
/// therefore discontinuous at the edge, and within the offset's size (up to about 730 m) either
/// side of it the inverse is not well defined: an offset point may land outside the box, and
/// some points inside it have no preimage at all. The inverse decides by the point it is given:
/// inside the box it solves the smooth offset formula, whose root is unique and which always
/// converges; outside it returns the point unchanged. It never loops forever and never turns a
/// finite input into NaN.
///
/// Non-finite input: NaN gives NaN, infinities are outside the box and come back unchanged.
public enum CoordinateConversion {
    /// Krasovsky 1940 semi-major axis used by the GCJ-02 formula.
    static var krasovskyA: Double { 6378245.0 }
    /// Krasovsky 1940 first eccentricity squared used by the GCJ-02 formula.
    static var krasovskyEE: Double { 0.00669342162296594323 }
    /// The BD-09 rotation constant `pi * 3000 / 180`.
    static var xPi: Double { Double.pi * 3000.0 / 180.0 }
    /// Largest fixed-point step count for the inverses; each step gains about three digits
    /// (the GCJ-02 offset's Jacobian is at most 0.011 in the box), so 4 steps reach the tolerance.
    static var maxIterations: Int { 30 }
    /// Convergence tolerance of the inverses, in degrees (about 0.01 mm).
    static var tolerance: Double { 1e-10 }

    /// Whether a point lies outside China's box (lon 72.004...137.8347, lat 0.8293...55.8271),
    /// where GCJ-02 and BD-09LL equal WGS84.
    ///
    /// The box edges themselves count as inside, as in the reference implementations. NaN in
    /// either coordinate counts as inside (so NaN propagates through the formulas).
    ///
    /// - Complexity: O(1).
    @inlinable
    public static func isOutsideChina(lon: Double, lat: Double) -> Bool {
        lon < 72.004 || lon > 137.8347 || lat < 0.8293 || lat > 55.8271
    }

    /// WGS84 to GCJ-02 by the published formula; points outside China's box are returned
    /// unchanged.
    ///
    /// - Complexity: O(1): 10 sines, a cosine and a square root.
    public static func wgs84ToGCJ02(lon: Double, lat: Double) -> (lon: Double, lat: Double) {
        if isOutsideChina(lon: lon, lat: lat) { return (lon, lat) }
        let d = gcjOffset(lon: lon, lat: lat)
        return (lon + d.lon, lat + d.lat)
    }

    /// GCJ-02 to WGS84, the exact inverse of ``wgs84ToGCJ02(lon:lat:)`` by fixed-point iteration.
    ///
    /// Starts from the one-step approximation `g - offset(g)` and repeats
    /// `w -= forward(w) - g`, which contracts by a factor of about 0.01 per step, until the forward
    /// image is within 1e-10 degrees of the input (3 or 4 steps; at most 30).
    ///
    /// - Returns: points outside China's box unchanged. Near the box edge see the type's notes:
    ///   the root of the offset formula, which may lie just outside the box.
    /// - Complexity: O(1), at most 30 evaluations of the offset.
    public static func gcj02ToWGS84(lon: Double, lat: Double) -> (lon: Double, lat: Double) {
        if isOutsideChina(lon: lon, lat: lat) { return (lon, lat) }
        return invertGCJOffset(lon: lon, lat: lat)
    }

    /// GCJ-02 to BD-09LL by the published formula (`z = hypot(x, y) + 2e-5 sin(y x_pi)`,
    /// `theta = atan2(y, x) + 3e-6 cos(x x_pi)`, then `+0.0065` / `+0.006`).
    ///
    /// Like the reference implementations this is applied wherever it is called; the rule that
    /// BD-09LL equals WGS84 outside China's box is applied by ``fromWGS84(lon:lat:to:)`` and
    /// ``toWGS84(lon:lat:from:)``.
    ///
    /// - Complexity: O(1).
    public static func gcj02ToBD09(lon: Double, lat: Double) -> (lon: Double, lat: Double) {
        let z = (lon * lon + lat * lat).squareRoot() + 0.00002 * sin(lat * xPi)
        let theta = atan2(lat, lon) + 0.000003 * cos(lon * xPi)
        return (z * cos(theta) + 0.0065, z * sin(theta) + 0.006)
    }

    /// BD-09LL to GCJ-02, the exact inverse of ``gcj02ToBD09(lon:lat:)`` by fixed-point iteration.
    ///
    /// Starts from the published one-step inverse (off by up to about 1e-6 degrees, 0.1 m) and
    /// repeats `g -= forward(g) - b` (contraction about 1e-3 per step) until the forward image is
    /// within 1e-10 degrees of the input; at most 30 steps.
    ///
    /// - Complexity: O(1).
    public static func bd09ToGCJ02(lon: Double, lat: Double) -> (lon: Double, lat: Double) {
        // Published one-step inverse as the starting point.
        let x = lon - 0.0065
        let y = lat - 0.006
        let z = (x * x + y * y).squareRoot() - 0.00002 * sin(y * xPi)
        let theta = atan2(y, x) - 0.000003 * cos(x * xPi)
        var g = (lon: z * cos(theta), lat: z * sin(theta))
        var best = g
        var bestResidual = Double.infinity
        for _ in 0..<maxIterations {
            let b = gcj02ToBD09(lon: g.lon, lat: g.lat)
            let rLon = b.lon - lon
            let rLat = b.lat - lat
            let residual = max(abs(rLon), abs(rLat))
            // `!(a < b)` also stops on NaN.
            if !(residual < bestResidual) { break }
            best = g
            bestResidual = residual
            if residual <= tolerance { break }
            g = (g.lon - rLon, g.lat - rLat)
        }
        return best
    }

    /// `toWGS84(lon:lat:from:)` for a point as a value: a WGS84 point is returned as it is,
    /// without a call. The one conversion of positions (`Position.wgs84`, the batch scatter of
    /// `EventEngine.evaluate`, candidate queries, `nearestBoundary`). Not checked: a NaN stays
    /// a NaN.
    @inline(__always)
    public static func toWGS84(_ p: LonLat, from: CoordinateSystem) -> LonLat {
        if from == .wgs84 { return p }
        let w = toWGS84(lon: p.lon, lat: p.lat, from: from)
        return LonLat(lon: w.lon, lat: w.lat)
    }

    /// Converts a point from `from` to WGS84.
    ///
    /// - Parameters:
    ///   - lon: longitude in degrees in the `from` system.
    ///   - lat: latitude in degrees in the `from` system.
    ///   - from: the system the point is written in.
    /// - Returns: WGS84 longitude/latitude. GCJ-02 and BD-09LL points outside China's box (tested
    ///   on the input point) come back unchanged.
    /// - Complexity: O(1), a handful of fixed-point steps for `gcj02` and `bd09ll`.
    public static func toWGS84(lon: Double, lat: Double, from: CoordinateSystem) -> (
        lon: Double, lat: Double
    ) {
        switch from {
        case .wgs84:
            return (lon, lat)
        case .gcj02:
            return gcj02ToWGS84(lon: lon, lat: lat)
        case .bd09ll:
            if isOutsideChina(lon: lon, lat: lat) { return (lon, lat) }
            let g = bd09ToGCJ02(lon: lon, lat: lat)
            // The box test was made on the BD-09 point; the GCJ-02 point in between may sit just
            // across the edge, so solve the offset formula without testing the box again.
            return invertGCJOffset(lon: g.lon, lat: g.lat)
        }
    }

    /// Converts a WGS84 point to `to`.
    ///
    /// - Returns: the point in `to`. WGS84 points outside China's box come back unchanged for
    ///   every system.
    /// - Complexity: O(1).
    public static func fromWGS84(lon: Double, lat: Double, to: CoordinateSystem) -> (
        lon: Double, lat: Double
    ) {
        switch to {
        case .wgs84:
            return (lon, lat)
        case .gcj02:
            return wgs84ToGCJ02(lon: lon, lat: lat)
        case .bd09ll:
            if isOutsideChina(lon: lon, lat: lat) { return (lon, lat) }
            let g = wgs84ToGCJ02(lon: lon, lat: lat)
            return gcj02ToBD09(lon: g.lon, lat: g.lat)
        }
    }

    // MARK: - The GCJ-02 offset

    /// The GCJ-02 offset in degrees at a WGS84 point, without the box test.
    @inline(__always)
    static func gcjOffset(lon: Double, lat: Double) -> (lon: Double, lat: Double) {
        let x = lon - 105.0
        let y = lat - 35.0
        let dLat = transformLat(x: x, y: y)
        let dLon = transformLon(x: x, y: y)
        let radLat = lat / 180.0 * Double.pi
        var magic = sin(radLat)
        magic = 1 - krasovskyEE * magic * magic
        let sqrtMagic = magic.squareRoot()
        let lat =
            (dLat * 180.0) / ((krasovskyA * (1 - krasovskyEE)) / (magic * sqrtMagic) * Double.pi)
        let lon = (dLon * 180.0) / (krasovskyA / sqrtMagic * cos(radLat) * Double.pi)
        return (lon, lat)
    }

    @inline(__always)
    static func transformLat(x: Double, y: Double) -> Double {
        var ret = -100.0 + 2.0 * x + 3.0 * y + 0.2 * y * y + 0.1 * x * y + 0.2 * abs(x).squareRoot()
        ret += (20.0 * sin(6.0 * x * Double.pi) + 20.0 * sin(2.0 * x * Double.pi)) * 2.0 / 3.0
        ret += (20.0 * sin(y * Double.pi) + 40.0 * sin(y / 3.0 * Double.pi)) * 2.0 / 3.0
        ret += (160.0 * sin(y / 12.0 * Double.pi) + 320.0 * sin(y * Double.pi / 30.0)) * 2.0 / 3.0
        return ret
    }

    @inline(__always)
    static func transformLon(x: Double, y: Double) -> Double {
        var ret = 300.0 + x + 2.0 * y + 0.1 * x * x + 0.1 * x * y + 0.1 * abs(x).squareRoot()
        ret += (20.0 * sin(6.0 * x * Double.pi) + 20.0 * sin(2.0 * x * Double.pi)) * 2.0 / 3.0
        ret += (20.0 * sin(x * Double.pi) + 40.0 * sin(x / 3.0 * Double.pi)) * 2.0 / 3.0
        ret += (150.0 * sin(x / 12.0 * Double.pi) + 300.0 * sin(x / 30.0 * Double.pi)) * 2.0 / 3.0
        return ret
    }

    /// Solves `w + offset(w) = g` for `w` (no box test), keeping the best iterate.
    ///
    /// The offset's Jacobian is at most about 0.011 in the box (measured), except within about
    /// 1e-13 degrees of lon 105 where the `sqrt(|x|)` terms have an unbounded slope but contribute
    /// under 1e-12 degrees; keeping the best iterate and stopping when the residual stops falling
    /// makes that harmless.
    static func invertGCJOffset(lon: Double, lat: Double) -> (lon: Double, lat: Double) {
        let d0 = gcjOffset(lon: lon, lat: lat)
        var w = (lon: lon - d0.lon, lat: lat - d0.lat)
        var best = w
        var bestResidual = Double.infinity
        for _ in 0..<maxIterations {
            let d = gcjOffset(lon: w.lon, lat: w.lat)
            let rLon = (w.lon + d.lon) - lon
            let rLat = (w.lat + d.lat) - lat
            let residual = max(abs(rLon), abs(rLat))
            if !(residual < bestResidual) { break }
            best = w
            bestResidual = residual
            if residual <= tolerance { break }
            w = (w.lon - rLon, w.lat - rLat)
        }
        return best
    }
}
