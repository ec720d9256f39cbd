import Foundation

/// Distances and destinations on the WGS84 ellipsoid, in metres and degrees.
///
/// ``distance(lon1:lat1:lon2:lat2:)`` and ``destination(lon:lat:azimuth:distance:)`` implement
/// C. F. F. Karney's algorithms (“Algorithms for geodesics”, J. Geodesy 87, 43–55, 2013,
/// doi:10.1007/s00190-012-0578-z), the method of GeographicLib: series in the third flattening
/// `n` to order 6 for the integrals, and for the inverse problem Newton's method on the azimuth
/// at the first point, started from the spherical or the astroid solution and kept inside a
/// bracket. Unlike Vincenty's inverse it converges for every pair, nearly antipodal ones
/// included. This is our own Swift code, specialised to WGS84 with no allocation; the published
/// error of the method in double precision is about 15 nm, and the test suite holds it to 1e-8 m
/// (10 nm) against GeographicLib's published test cases.
///
/// Inputs are degrees: latitude in [-90, 90] (anything outside, or NaN, gives NaN), longitude
/// any finite value (taken modulo 360, so pairs across the antimeridian need no special care).
public enum Geodesic {
    /// WGS84 semi-major axis in metres.
    public static let wgs84A = 6378137.0
    /// WGS84 flattening.
    public static let wgs84F = 1 / 298.257223563

    /// Bound on how far the spherical distance (mean radius 6,371,008.8 m) strays from the
    /// ellipsoidal one, for every pair of points:
    ///
    ///     |distance - sphericalDistance| <= sphericalRelativeBand * sphericalDistance + 1 m
    ///
    /// So a point whose spherical distance `s` from a circle's centre satisfies
    /// `s * (1 + band) + 1 < radius` is inside, `s * (1 - band) - 1 > radius` outside, and only
    /// the points in between need ``distance(lon1:lat1:lon2:lat2:)``.
    ///
    /// The value is 0.0056 (0.56 %). Why: locally the ellipsoid's length element over the
    /// sphere's lies between `M/R` and `N/R` (meridional and prime-vertical radii of curvature
    /// over the mean radius), whose extremes are a north-south step on the equator,
    /// `a(1 - e²)/R = 0.994417` (-0.5583 %), and any step at a pole,
    /// `a/sqrt(1 - e²)/R = 1.004487` (+0.4487 %). A long line averages these; nearly antipodal
    /// pairs, where the two shortest routes differ most in shape, stay within about 0.12 %. The
    /// tests check the claim on 100,000 seeded random pairs and on short meridional steps at the
    /// equator, the worst case (measured 0.5582 %).
    public static let sphericalRelativeBand: Double = 0.0056

    /// Distance in metres on the WGS84 ellipsoid between two points given in degrees.
    ///
    /// Karney's inverse method (see the type's notes): exact to about 15 nm in double precision
    /// for every pair, including coincident points (0), points on the poles, pairs across the
    /// antimeridian and nearly antipodal pairs, where Vincenty's method fails to converge. The
    /// Newton iteration is bounded (at most 84 evaluations; typically 2 or 3) and brackets the
    /// root, so it cannot loop forever.
    ///
    /// - Parameters:
    ///   - lon1: longitude of the first point in degrees (any finite value).
    ///   - lat1: latitude of the first point in degrees, in [-90, 90].
    ///   - lon2: longitude of the second point in degrees.
    ///   - lat2: latitude of the second point in degrees, in [-90, 90].
    /// - Returns: the geodesic distance in metres, at most about 20,003,931 m (half a meridian);
    ///   NaN if an input is NaN or infinite or a latitude is outside [-90, 90].
    /// - Complexity: O(1); no allocation. One to three evaluations of the longitude equation
    ///   (one below about 100 m, two at 1-100 km, three across continents). Measured on the
    ///   project's x86 machine, release build: 0.30 µs for 10 m lines, 0.43 µs at 10 km,
    ///   0.6 µs for random pairs, against 0.045 µs for
    ///   ``sphericalDistance(lon1:lat1:lon2:lat2:radius:)``: filter with that first (see
    ///   ``sphericalRelativeBand``).
    public static func distance(lon1: Double, lat1: Double, lon2: Double, lat2: Double) -> Double {
        GeodesicWGS84.inverseDistance(lat1: lat1, lon1: lon1, lat2: lat2, lon2: lon2)
    }

    /// Great-circle distance in metres on a sphere (haversine), a cheap filter for
    /// ``distance(lon1:lat1:lon2:lat2:)``; see ``sphericalRelativeBand`` for how far apart the two
    /// can be.
    ///
    /// Uses the haversine with `atan2`, accurate for short and nearly antipodal distances alike.
    ///
    /// - Parameters:
    ///   - radius: sphere radius in metres; defaults to the IUGG mean earth radius 6,371,008.8 m.
    /// - Returns: the distance in metres, in [0, pi * radius]; NaN for NaN input.
    /// - Complexity: O(1): 5 trigonometric calls and 2 square roots.
    public static func sphericalDistance(
        lon1: Double, lat1: Double, lon2: Double, lat2: Double, radius: Double = 6371008.8
    ) -> Double {
        let degree = Double.pi / 180
        let phi1 = lat1 * degree
        let phi2 = lat2 * degree
        let sinHalfDLat = sin((phi2 - phi1) / 2)
        let sinHalfDLon = sin((lon2 - lon1) * degree / 2)
        var h = sinHalfDLat * sinHalfDLat + cos(phi1) * cos(phi2) * sinHalfDLon * sinHalfDLon
        h = min(max(h, 0), 1)
        return 2 * radius * atan2(h.squareRoot(), (1 - h).squareRoot())
    }

    /// Direct problem: the point reached from a start point by going `distance` metres along the
    /// geodesic that leaves it at `azimuth` degrees clockwise from north, on the WGS84 ellipsoid.
    ///
    /// Karney's direct method (series to order 6); error about 15 nm. Any distance is allowed:
    /// a negative one goes backwards, one longer than half the earth goes round.
    ///
    /// - Parameters:
    ///   - lon: longitude of the start in degrees (any finite value).
    ///   - lat: latitude of the start in degrees, in [-90, 90]. At a pole the azimuth is taken
    ///     as the limit approaching the pole along the meridian `lon`, as in GeographicLib.
    ///   - azimuth: degrees clockwise from north (any finite value).
    ///   - distance: metres along the geodesic.
    /// - Returns: the destination, longitude in [-180, 180]; NaN for NaN or infinite input or
    ///   a latitude outside [-90, 90].
    /// - Complexity: O(1); no allocation.
    public static func destination(lon: Double, lat: Double, azimuth: Double, distance: Double) -> (
        lon: Double, lat: Double
    ) {
        GeodesicWGS84.direct(lat1: lat, lon1: lon, azi1: azimuth, s12: distance)
    }
}

// MARK: - Implementation

/// Six Fourier coefficients `c1...c6` of a series `sum c_l sin(2 l sigma)`, on the stack.
struct GeodesicSeries {
    var c1, c2, c3, c4, c5, c6: Double

    init(_ c1: Double, _ c2: Double, _ c3: Double, _ c4: Double, _ c5: Double, _ c6: Double) {
        (self.c1, self.c2, self.c3, self.c4, self.c5, self.c6) = (c1, c2, c3, c4, c5, c6)
    }

    /// `sum_{l=1}^{6} c_l sin(2 l x)` given `sin x` and `cos x`, by Clenshaw summation.
    func sinSum(_ sinx: Double, _ cosx: Double) -> Double {
        let ar = 2 * (cosx - sinx) * (cosx + sinx)  // 2 cos 2x
        var y1 = c6
        var y0 = ar * y1 + c5
        y1 = ar * y0 - y1 + c4
        y0 = ar * y1 - y0 + c3
        y1 = ar * y0 - y1 + c2
        y0 = ar * y1 - y0 + c1
        return 2 * sinx * cosx * y0
    }
}

/// Karney's geodesic algorithms for the WGS84 ellipsoid (flattening `f > 0`), written for one
/// ellipsoid so the coefficient polynomials in `n` are constants and nothing is allocated.
/// Names follow the paper: `bet` reduced latitude, `alp` azimuth, `sig` arc length on the
/// auxiliary sphere, `omg` longitude on the auxiliary sphere, `lam` longitude, `eps` the
/// expansion parameter; a leading `s`/`c` is a sine/cosine.
enum GeodesicWGS84 {
    // Constants are computed properties rather than stored `static let`s: their bodies are
    // constant expressions the optimiser folds, where a stored global is read through a
    // lazy-initialisation check on every access in the hot loop.
    static var a: Double { 6378137.0 }
    static var f: Double { 1 / 298.257223563 }
    static var f1: Double { 1 - f }
    static var e2: Double { f * (2 - f) }
    static var ep2: Double { e2 / (f1 * f1) }
    static var n: Double { f / (2 - f) }
    static var b: Double { a * f1 }

    static var degree: Double { Double.pi / 180 }
    static var tol0: Double { Double.ulpOfOne }
    // Newton's method uses tol1 to test for the strip near the cut, tol2 = sqrt(eps) scales
    // the short-line test, tolb stops the bisection.
    static var tol1: Double { 200 * tol0 }
    static var tol2: Double { tol0.squareRoot() }
    static var tolb: Double { tol0 }
    static var xthresh: Double { 1000 * tol2 }
    /// Smallest positive value whose square is normal; stands in for cos(latitude) at the poles.
    static var tiny: Double { Double.leastNormalMagnitude.squareRoot() }
    static var maxit1: Int { 20 }
    static var maxit2: Int { maxit1 + Double.significandBitCount + 1 + 10 }
    /// Below this spherical arc (radians, about 0.23 m on the earth) the auxiliary-sphere
    /// solution with the mid-latitude scale is exact to rounding (Karney 2013, section 4).
    static var etol2: Double {
        0.1 * tol2 / (max(0.001, abs(f)) * min(1, 1 - f / 2) / 2).squareRoot()
    }

    // A3(eps) = sum a3_j eps^j, coefficients as polynomials in n (Karney 2013, eq. 24).
    static var a3x5: Double { -3.0 / 128 }
    static var a3x4: Double { (-2 * n - 3) / 64 }
    static var a3x3: Double { ((-n - 3) * n - 1) / 16 }
    static var a3x2: Double { ((3 * n - 1) * n - 2) / 8 }
    static var a3x1: Double { (n - 1) / 2 }

    // C3_l(eps), l = 1...5 (eq. 25): c3lj is the coefficient of eps^j in C3_l.
    static var c315: Double { 3.0 / 128 }
    static var c314: Double { (2 * n + 5) / 128 }
    static var c313: Double { ((3 - n) * n + 3) / 64 }
    static var c312: Double { (1 - n * n) / 8 }
    static var c311: Double { (1 - n) / 4 }
    static var c325: Double { 5.0 / 256 }
    static var c324: Double { (n + 3) / 128 }
    static var c323: Double { ((-3 * n - 2) * n + 3) / 64 }
    static var c322: Double { ((n - 3) * n + 2) / 32 }
    static var c335: Double { 7.0 / 512 }
    static var c334: Double { (9 - 10 * n) / 384 }
    static var c333: Double { ((5 * n - 9) * n + 5) / 192 }
    static var c345: Double { 7.0 / 512 }
    static var c344: Double { (7 - 14 * n) / 512 }
    static var c355: Double { 21.0 / 2560 }

    // MARK: Series (Karney 2013, eqs. 17, 18, 20–25, 42–43; order 6)

    /// A3(eps), the mean of the longitude integrand.
    static func a3f(_ eps: Double) -> Double {
        ((((a3x5 * eps + a3x4) * eps + a3x3) * eps + a3x2) * eps + a3x1) * eps + 1
    }

    /// C3_l(eps), l = 1...5.
    static func c3f(_ eps: Double) -> GeodesicSeries {
        let eps2 = eps * eps
        let eps3 = eps2 * eps
        let eps4 = eps2 * eps2
        let eps5 = eps4 * eps
        return GeodesicSeries(
            eps * ((((c315 * eps + c314) * eps + c313) * eps + c312) * eps + c311),
            eps2 * (((c325 * eps + c324) * eps + c323) * eps + c322),
            eps3 * ((c335 * eps + c334) * eps + c333),
            eps4 * (c345 * eps + c344),
            eps5 * c355,
            0)
    }

    /// A1(eps) - 1, the mean of the distance integrand minus one.
    static func a1m1f(_ eps: Double) -> Double {
        let eps2 = eps * eps
        let t = ((eps2 + 4) * eps2 + 64) * eps2 / 256
        return (t + eps) / (1 - eps)
    }

    /// C1_l(eps), l = 1...6, for the distance integral.
    static func c1f(_ eps: Double) -> GeodesicSeries {
        let eps2 = eps * eps
        var d = eps
        let c1 = d * ((-eps2 + 6) * eps2 - 16) / 32
        d *= eps
        let c2 = d * ((-9 * eps2 + 64) * eps2 - 128) / 2048
        d *= eps
        let c3 = d * (9 * eps2 - 16) / 768
        d *= eps
        let c4 = d * (3 * eps2 - 5) / 512
        d *= eps
        let c5 = d * -7 / 1280
        d *= eps
        let c6 = d * -7 / 2048
        return GeodesicSeries(c1, c2, c3, c4, c5, c6)
    }

    /// C1'_l(eps), l = 1...6, the reverted distance series (for the direct problem).
    static func c1pf(_ eps: Double) -> GeodesicSeries {
        let eps2 = eps * eps
        var d = eps
        let c1 = d * ((205 * eps2 - 432) * eps2 + 768) / 1536
        d *= eps
        let c2 = d * ((4005 * eps2 - 4736) * eps2 + 3840) / 12288
        d *= eps
        let c3 = d * (116 - 225 * eps2) / 384
        d *= eps
        let c4 = d * (2695 - 7173 * eps2) / 7680
        d *= eps
        let c5 = d * 3467 / 7680
        d *= eps
        let c6 = d * 38081 / 61440
        return GeodesicSeries(c1, c2, c3, c4, c5, c6)
    }

    /// A2(eps) - 1, for the reduced length.
    static func a2m1f(_ eps: Double) -> Double {
        let eps2 = eps * eps
        let t = ((-11 * eps2 - 28) * eps2 - 192) * eps2 / 256
        return (t - eps) / (1 + eps)
    }

    /// C2_l(eps), l = 1...6, for the reduced length.
    static func c2f(_ eps: Double) -> GeodesicSeries {
        let eps2 = eps * eps
        var d = eps
        let c1 = d * ((eps2 + 2) * eps2 + 16) / 32
        d *= eps
        let c2 = d * ((35 * eps2 + 64) * eps2 + 384) / 2048
        d *= eps
        let c3 = d * (15 * eps2 + 80) / 768
        d *= eps
        let c4 = d * (7 * eps2 + 35) / 512
        d *= eps
        let c5 = d * 63 / 1280
        d *= eps
        let c6 = d * 77 / 2048
        return GeodesicSeries(c1, c2, c3, c4, c5, c6)
    }

    // MARK: Angles in degrees, exactly reduced (GeographicLib's Math)

    static func sq(_ x: Double) -> Double { x * x }

    /// Normalises `(s, c)` to unit length.
    static func norm(_ s: inout Double, _ c: inout Double) {
        // sqrt(x^2 + y^2) rather than hypot: faster, and these are bounded by about 1.
        let r = (s * s + c * c).squareRoot()
        s /= r
        c /= r
    }

    /// Rounds angles within 1/16 degree of zero to a multiple of 2^-57 so tiny values do not
    /// reach near-singular code (0.7 pm on the earth).
    static func angRound(_ x: Double) -> Double {
        let z = 1.0 / 16
        var y = abs(x)
        if y < z { y = z - (z - y) }
        return Double(signOf: x, magnitudeOf: y)
    }

    /// `x` reduced to [-180, 180]; ±180 keeps the sign of `x`.
    static func angNormalize(_ x: Double) -> Double {
        let y = x.remainder(dividingBy: 360)
        return abs(y) == 180 ? Double(signOf: x, magnitudeOf: 180) : y
    }

    /// Latitude, or NaN if outside [-90, 90].
    static func latFix(_ x: Double) -> Double { abs(x) > 90 ? .nan : x }

    /// Error-free sum: `u + v = s + t` exactly.
    static func twoSum(_ u: Double, _ v: Double) -> (s: Double, t: Double) {
        let s = u + v
        var up = s - v
        var vpp = s - up
        up -= u
        vpp -= v
        let t = s != 0 ? 0 - (up + vpp) : s
        return (s, t)
    }

    /// `y - x` reduced to [-180, 180] exactly, as `d + e` with `d` the rounded value.
    static func angDiff(_ x: Double, _ y: Double) -> (d: Double, e: Double) {
        var r = twoSum((-x).remainder(dividingBy: 360), y.remainder(dividingBy: 360))
        r = twoSum(r.s.remainder(dividingBy: 360), r.t)
        var d = r.s
        let e = r.t
        if d == 0 || abs(d) == 180 {
            d = Double(signOf: e == 0 ? y - x : -e, magnitudeOf: d)
        }
        return (d, e)
    }

    /// Sine and cosine of `x` degrees, reducing `x` exactly to [-45, 45] first.
    static func sincosd(_ x: Double) -> (s: Double, c: Double) {
        sincosd(x, plus: 0, round: false)
    }

    /// Sine and cosine of `x + t` degrees, `t` a small correction, the reduced sum rounded with
    /// ``angRound(_:)``.
    static func sincosde(_ x: Double, _ t: Double) -> (s: Double, c: Double) {
        sincosd(x, plus: t, round: true)
    }

    static func sincosd(_ x: Double, plus t: Double, round: Bool) -> (s: Double, c: Double) {
        var d = x.truncatingRemainder(dividingBy: 360)
        let q = (d / 90).rounded()
        d -= 90 * q
        if round { d = angRound(d + t) }
        let r = d * degree
        var s = sin(r)
        var c = cos(r)
        if abs(d) == 45 {
            c = 0.5.squareRoot()
            s = Double(signOf: r, magnitudeOf: c)
        } else if abs(d) == 30 {
            c = 0.75.squareRoot()
            s = Double(signOf: r, magnitudeOf: 0.5)
        }
        // q is NaN only when x is, and then s and c are NaN already.
        let quadrant = q.isFinite ? Int(q) & 3 : 0
        var sinx: Double
        var cosx: Double
        switch quadrant {
        case 0: (sinx, cosx) = (s, c)
        case 1: (sinx, cosx) = (c, -s)
        case 2: (sinx, cosx) = (-s, -c)
        default: (sinx, cosx) = (-c, s)
        }
        cosx += 0
        if sinx == 0 { sinx = Double(signOf: x, magnitudeOf: sinx) }
        return (sinx, cosx)
    }

    /// atan2 in degrees, reduced to [-45, 45] before converting to limit rounding.
    static func atan2d(_ y: Double, _ x: Double) -> Double {
        var y = y
        var x = x
        var q = 0
        if abs(y) > abs(x) {
            swap(&x, &y)
            q = 2
        }
        if x.sign == .minus {
            x = -x
            q += 1
        }
        let ang = atan2(y, x) / degree
        switch q {
        case 1: return Double(signOf: y, magnitudeOf: 180) - ang
        case 2: return 90 - ang
        case 3: return -90 + ang
        default: return ang
        }
    }

    // MARK: Inverse problem

    /// Distance and reduced length over `b` for the arc `sig1...sig2` (Karney 2013, eqs. 38-39).
    static func lengths(
        eps: Double, sig12: Double,
        ssig1: Double, csig1: Double, dn1: Double,
        ssig2: Double, csig2: Double, dn2: Double,
        reduced: Bool
    ) -> (s12b: Double, m12b: Double) {
        let a1m1 = a1m1f(eps)
        let c1 = c1f(eps)
        let a1 = 1 + a1m1
        let b1 = c1.sinSum(ssig2, csig2) - c1.sinSum(ssig1, csig1)
        let s12b = a1 * (sig12 + b1)
        guard reduced else { return (s12b, 0) }
        let a2m1 = a2m1f(eps)
        let c2 = c2f(eps)
        let a2 = 1 + a2m1
        let b2 = c2.sinSum(ssig2, csig2) - c2.sinSum(ssig1, csig1)
        let j12 = (a1m1 - a2m1) * sig12 + (a1 * b1 - a2 * b2)
        // Parentheses keep the cancellation exact for coincident points.
        let m12b = dn2 * (csig1 * ssig2) - dn1 * (ssig1 * csig2) - csig1 * csig2 * j12
        return (s12b, m12b)
    }

    /// Reduced length over `b` alone, combining the two series (the derivative for Newton).
    static func reducedLength(
        eps: Double, sig12: Double,
        ssig1: Double, csig1: Double, dn1: Double,
        ssig2: Double, csig2: Double, dn2: Double
    ) -> Double {
        let a1m1 = a1m1f(eps)
        let a2m1 = a2m1f(eps)
        let a1 = 1 + a1m1
        let a2 = 1 + a2m1
        let c1 = c1f(eps)
        let c2 = c2f(eps)
        let c = GeodesicSeries(
            a1 * c1.c1 - a2 * c2.c1, a1 * c1.c2 - a2 * c2.c2, a1 * c1.c3 - a2 * c2.c3,
            a1 * c1.c4 - a2 * c2.c4, a1 * c1.c5 - a2 * c2.c5, a1 * c1.c6 - a2 * c2.c6)
        let j12 = (a1m1 - a2m1) * sig12 + (c.sinSum(ssig2, csig2) - c.sinSum(ssig1, csig1))
        return dn2 * (csig1 * ssig2) - dn1 * (ssig1 * csig2) - csig1 * csig2 * j12
    }

    /// The state after solving the triangle for a trial `alp1`.
    struct Lambda12 {
        var lam12, salp2, calp2, sig12, ssig1, csig1, ssig2, csig2, eps: Double
    }

    /// Longitude difference reached with azimuth `alp1` minus the target `lam120`
    /// (Karney 2013, eqs. 5-9); the derivative is left to ``lambda12Derivative``.
    static func lambda12(
        sbet1: Double, cbet1: Double,
        sbet2: Double, cbet2: Double,
        salp1: Double, calp1 calp1In: Double,
        slam120: Double, clam120: Double
    ) -> Lambda12 {
        var calp1 = calp1In
        // Break the degeneracy of an equatorial line; that case is handled before.
        if sbet1 == 0 && calp1 == 0 { calp1 = -tiny }
        let salp0 = salp1 * cbet1  // sin(alp1) cos(bet1) = sin(alp0)
        let calp0 = (calp1 * calp1 + sq(salp1 * sbet1)).squareRoot()  // > 0
        // tan(bet1) = tan(sig1) cos(alp1); tan(omg1) = sin(alp0) tan(sig1)
        var ssig1 = sbet1
        let somg1 = salp0 * sbet1
        var csig1 = calp1 * cbet1
        let comg1 = csig1
        norm(&ssig1, &csig1)
        // Enforce the symmetry when |bet2| = -bet1, which could otherwise make Newton singular.
        let salp2 = cbet2 != cbet1 ? salp0 / cbet2 : salp1
        let calp2: Double
        if cbet2 != cbet1 || abs(sbet2) != -sbet1 {
            let t =
                cbet1 < -sbet1
                ? (cbet2 - cbet1) * (cbet1 + cbet2) : (sbet1 - sbet2) * (sbet1 + sbet2)
            calp2 = (sq(calp1 * cbet1) + t).squareRoot() / cbet2
        } else {
            calp2 = abs(calp1)
        }
        var ssig2 = sbet2
        let somg2 = salp0 * sbet2
        var csig2 = calp2 * cbet2
        let comg2 = csig2
        norm(&ssig2, &csig2)
        // sig12 = sig2 - sig1 and omg12 = omg2 - omg1, both limited to [0, pi]
        let sig12 = atan2(max(0, csig1 * ssig2 - ssig1 * csig2), csig1 * csig2 + ssig1 * ssig2)
        let somg12 = max(0, comg1 * somg2 - somg1 * comg2)
        let comg12 = comg1 * comg2 + somg1 * somg2
        // eta = omg12 - lam120
        let eta = atan2(somg12 * clam120 - comg12 * slam120, comg12 * clam120 + somg12 * slam120)
        let k2 = sq(calp0) * ep2
        let eps = k2 / (2 * (1 + (1 + k2).squareRoot()) + k2)
        let c3 = c3f(eps)
        let b312 = c3.sinSum(ssig2, csig2) - c3.sinSum(ssig1, csig1)
        let domg12 = -f * a3f(eps) * salp0 * (sig12 + b312)
        return Lambda12(
            lam12: eta + domg12, salp2: salp2, calp2: calp2, sig12: sig12, ssig1: ssig1,
            csig1: csig1, ssig2: ssig2, csig2: csig2, eps: eps)
    }

    /// d lambda12 / d alp1 at a state from ``lambda12`` (Karney 2013, eq. 46). Computed only
    /// when Newton takes a step, not on the evaluation that finds convergence.
    static func lambda12Derivative(
        _ state: Lambda12, sbet1: Double, cbet2: Double, dn1: Double, dn2: Double
    ) -> Double {
        if state.calp2 == 0 { return -2 * f1 * dn1 / sbet1 }
        let m12b = reducedLength(
            eps: state.eps, sig12: state.sig12, ssig1: state.ssig1, csig1: state.csig1, dn1: dn1,
            ssig2: state.ssig2, csig2: state.csig2, dn2: dn2)
        return m12b * f1 / (state.calp2 * cbet2)
    }

    /// Positive root `k` of `k^4 + 2k^3 - (x^2 + y^2 - 1)k^2 - 2y^2 k - y^2 = 0`
    /// (Karney 2013, eq. 55), for the starting azimuth of nearly antipodal lines.
    static func astroid(_ x: Double, _ y: Double) -> Double {
        let p = sq(x)
        let q = sq(y)
        let r = (p + q - 1) / 6
        if q == 0 && r <= 0 {
            // y = 0 with |x| <= 1: the root is 0.
            return 0
        }
        // Multiply the equations for s and t by r^3 and r to avoid dividing by r = 0.
        let s = p * q / 4  // r^3 s
        let r2 = sq(r)
        let r3 = r * r2
        // Discriminant of the quadratic for T3; zero on the evolute p^(1/3) + q^(1/3) = 1.
        let disc = s * (s + 2 * r3)
        var u = r
        if disc >= 0 {
            var t3 = s + r3
            // Pick the square root's sign to maximise |T3| and limit cancellation.
            t3 += t3 < 0 ? -disc.squareRoot() : disc.squareRoot()  // (r t)^3
            let t = cbrt(t3)  // r t
            u += t + (t != 0 ? r2 / t : 0)
        } else {
            // T is complex but u is real; choose the cube root that avoids cancellation.
            let ang = atan2((-disc).squareRoot(), -(s + r3))
            u += 2 * r * cos(ang / 3)
        }
        let v = (sq(u) + q).squareRoot()  // > 0
        let uv = u < 0 ? q / (v - u) : u + v  // u + v without cancellation, > 0
        let w = (uv - q) / (2 * v)
        return uv / ((uv + sq(w)).squareRoot() + w)
    }

    /// Distance in metres; see ``Geodesic/distance(lon1:lat1:lon2:lat2:)``.
    static func inverseDistance(lat1: Double, lon1: Double, lat2: Double, lon2: Double) -> Double {
        inverse(lat1: lat1, lon1: lon1, lat2: lat2, lon2: lon2).s12
    }

    /// Karney's inverse method (2013, section 4 and the addenda), WGS84, distance and the
    /// azimuths' sines and cosines (for the tests).
    static func inverse(lat1 lat1In: Double, lon1: Double, lat2 lat2In: Double, lon2: Double) -> (
        s12: Double, salp1: Double, calp1: Double, salp2: Double, calp2: Double
    ) {
        // Treat values within 2^-57 degree of the equator as on it.
        var lat1 = angRound(latFix(lat1In))
        var lat2 = angRound(latFix(lat2In))
        // Longitude difference in [0, 180] with its rounding error, exactly.
        var (lon12, lon12s) = angDiff(lon1, lon2)
        var lonsign: Double = lon12.sign == .minus ? -1 : 1
        lon12 *= lonsign
        lon12s *= lonsign
        let lam12 = lon12 * degree
        let (slam12, clam12) = sincosde(lon12, lon12s)
        lon12s = (180 - lon12) - lon12s  // the supplementary longitude difference

        // Make point 1 the one with the larger |latitude| (a NaN latitude becomes lat1), and
        // lat1 <= 0, so that 0 <= lon12 <= 180, -90 <= lat1 <= 0, lat1 <= lat2 <= -lat1.
        let swapp: Double = abs(lat1) < abs(lat2) || lat2.isNaN ? -1 : 1
        if swapp < 0 {
            lonsign *= -1
            swap(&lat1, &lat2)
        }
        let latsign: Double = lat1.sign == .minus ? 1 : -1
        lat1 *= latsign
        lat2 *= latsign

        var (sbet1, cbet1) = sincosd(lat1)
        sbet1 *= f1
        norm(&sbet1, &cbet1)
        cbet1 = max(tiny, cbet1)  // cbet1 = +epsilon at the poles
        var (sbet2, cbet2) = sincosd(lat2)
        sbet2 *= f1
        norm(&sbet2, &cbet2)
        cbet2 = max(tiny, cbet2)

        // If cbet1 < -sbet1, cbet2 - cbet1 is the sensitive measure of |bet1| - |bet2|,
        // otherwise |sbet2| + sbet1. Force bet2 = ±bet1 exactly when that measure vanishes.
        if cbet1 < -sbet1 {
            if cbet2 == cbet1 { sbet2 = Double(signOf: sbet2, magnitudeOf: sbet1) }
        } else {
            if abs(sbet2) == -sbet1 { cbet2 = cbet1 }
        }

        let dn1 = (1 + ep2 * sq(sbet1)).squareRoot()
        let dn2 = (1 + ep2 * sq(sbet2)).squareRoot()

        var s12x = Double.nan
        var salp1 = Double.nan
        var calp1 = Double.nan
        var salp2 = Double.nan
        var calp2 = Double.nan

        var meridian = lat1 == -90 || slam12 == 0
        if meridian {
            // Both ends on one full meridian: the geodesic may run along it.
            calp1 = clam12
            salp1 = slam12  // head to the target longitude
            calp2 = 1
            salp2 = 0  // at the target, heading north
            let ssig1 = sbet1
            let csig1 = calp1 * cbet1
            let ssig2 = sbet2
            let csig2 = calp2 * cbet2
            var sig12 = atan2(max(0, csig1 * ssig2 - ssig1 * csig2), csig1 * csig2 + ssig1 * ssig2)
            let len = lengths(
                eps: n, sig12: sig12, ssig1: ssig1, csig1: csig1, dn1: dn1,
                ssig2: ssig2, csig2: csig2, dn2: dn2, reduced: true)
            var s12b = len.s12b
            let m12b = len.m12b
            // A meridian with sig12 > pi/2 and m12 < 0 is not a shortest path (prolate only).
            if sig12 < 1 || m12b >= 0 {
                // Zero-length geodesics could give m12 < 0 or s12 < 0; make them exactly 0.
                if sig12 < 3 * tiny || (sig12 < tol0 && (s12b < 0 || m12b < 0)) {
                    sig12 = 0
                    s12b = 0
                }
                s12x = s12b * b
            } else {
                meridian = false
            }
        }

        if !meridian && sbet1 == 0 && lon12s >= f * 180 {
            // Along the equator (sbet2 = 0 too), up to the point where it stops being shortest.
            calp1 = 0
            calp2 = 0
            salp1 = 1
            salp2 = 1
            s12x = a * lam12
        } else if !meridian {
            // Neither meridional nor equatorial: start Newton's method on alp1.
            let start = inverseStart(
                sbet1: sbet1, cbet1: cbet1, sbet2: sbet2, cbet2: cbet2,
                lam12: lam12, slam12: slam12, clam12: clam12)
            salp1 = start.salp1
            calp1 = start.calp1
            if start.sig12 >= 0 {
                // Really short line: the auxiliary-sphere solution is exact.
                salp2 = start.salp2
                calp2 = start.calp2
                s12x = start.sig12 * b * start.dnm
            } else {
                // Solve lambda12(alp1) = lam12. lambda12 - lam12 has one root in (0, pi) with a
                // positive slope there; keep a bracket (alp1a, alp1b) and fall back to its
                // midpoint whenever a Newton step goes backwards or leaves (0, pi).
                var numit = 0
                var salp1a = tiny
                var calp1a = 1.0
                var salp1b = tiny
                var calp1b = -1.0
                var tripn = false
                var tripb = false
                var state: Lambda12
                while true {
                    state = lambda12(
                        sbet1: sbet1, cbet1: cbet1, sbet2: sbet2, cbet2: cbet2,
                        salp1: salp1, calp1: calp1, slam120: slam12, clam120: clam12)
                    let v = state.lam12
                    // Written so that NaN also stops the loop.
                    if tripb || !(abs(v) >= (tripn ? 8 : 1) * tol0) || numit == maxit2 { break }
                    if v > 0 && (numit < maxit1 || calp1 / salp1 > calp1b / salp1b) {
                        salp1b = salp1
                        calp1b = calp1
                    } else if v < 0 && (numit < maxit1 || calp1 / salp1 < calp1a / salp1a) {
                        salp1a = salp1
                        calp1a = calp1
                    }
                    var stepped = false
                    // GeographicLib evaluates the derivative with every trial; only needed here.
                    let dv =
                        numit < maxit1
                        ? lambda12Derivative(state, sbet1: sbet1, cbet2: cbet2, dn1: dn1, dn2: dn2)
                        : 0
                    if numit < maxit1 && dv > 0 {
                        let dalp1 = -v / dv
                        if abs(dalp1) < .pi {
                            let sdalp1 = sin(dalp1)
                            let cdalp1 = cos(dalp1)
                            let nsalp1 = salp1 * cdalp1 + calp1 * sdalp1
                            if nsalp1 > 0 {
                                calp1 = calp1 * cdalp1 - salp1 * sdalp1
                                salp1 = nsalp1
                                norm(&salp1, &calp1)
                                // Where the slope goes to zero convergence is not quadratic, so
                                // stop on epsilon rather than sqrt(epsilon).
                                tripn = abs(v) <= 16 * tol0
                                stepped = true
                            }
                        }
                    }
                    if !stepped {
                        salp1 = (salp1a + salp1b) / 2
                        calp1 = (calp1a + calp1b) / 2
                        norm(&salp1, &calp1)
                        tripn = false
                        tripb =
                            abs(salp1a - salp1) + (calp1a - calp1) < tolb
                            || abs(salp1 - salp1b) + (calp1 - calp1b) < tolb
                    }
                    numit += 1
                }
                salp2 = state.salp2
                calp2 = state.calp2
                let len = lengths(
                    eps: state.eps, sig12: state.sig12, ssig1: state.ssig1, csig1: state.csig1,
                    dn1: dn1, ssig2: state.ssig2, csig2: state.csig2, dn2: dn2, reduced: false)
                s12x = len.s12b * b
            }
        }

        // Undo the canonical transformation for the azimuths.
        if swapp < 0 {
            swap(&salp1, &salp2)
            swap(&calp1, &calp2)
        }
        salp1 *= swapp * lonsign
        calp1 *= swapp * latsign
        salp2 *= swapp * lonsign
        calp2 *= swapp * latsign
        return (0 + s12x, salp1, calp1, salp2, calp2)
    }

    /// Starting azimuth for Newton's method: the spherical solution, or for nearly antipodal
    /// lines the astroid solution (Karney 2013, sections 4-5). For really short lines it also
    /// returns the final answer (`sig12 >= 0`, with `alp2` and the scale `dnm`).
    static func inverseStart(
        sbet1: Double, cbet1: Double, sbet2: Double, cbet2: Double,
        lam12: Double, slam12: Double, clam12: Double
    ) -> (sig12: Double, salp1: Double, calp1: Double, salp2: Double, calp2: Double, dnm: Double) {
        var sig12 = -1.0
        var salp2 = 0.0
        var calp2 = 0.0
        var dnm = 1.0
        // bet12 = bet2 - bet1 in [0, pi); bet12a = bet2 + bet1 in (-pi, 0]
        let sbet12 = sbet2 * cbet1 - cbet2 * sbet1
        let cbet12 = cbet2 * cbet1 + sbet2 * sbet1
        let sbet12a = sbet2 * cbet1 + cbet2 * sbet1
        let shortline = cbet12 >= 0 && sbet12 < 0.5 && cbet2 * lam12 < 0.5
        var somg12: Double
        var comg12: Double
        if shortline {
            var sbetm2 = sq(sbet1 + sbet2)
            // sin((bet1 + bet2) / 2)^2
            sbetm2 /= sbetm2 + sq(cbet1 + cbet2)
            dnm = (1 + ep2 * sbetm2).squareRoot()
            let omg12 = lam12 / (f1 * dnm)
            somg12 = sin(omg12)
            comg12 = cos(omg12)
        } else {
            somg12 = slam12
            comg12 = clam12
        }

        var salp1 = cbet2 * somg12
        var calp1 =
            comg12 >= 0
            ? sbet12 + cbet2 * sbet1 * sq(somg12) / (1 + comg12)
            : sbet12a - cbet2 * sbet1 * sq(somg12) / (1 - comg12)

        let ssig12 = (salp1 * salp1 + calp1 * calp1).squareRoot()
        let csig12 = sbet1 * sbet2 + cbet1 * cbet2 * comg12

        if shortline && ssig12 < etol2 {
            // Really short line.
            salp2 = cbet1 * somg12
            calp2 = sbet12 - cbet1 * sbet2 * (comg12 >= 0 ? sq(somg12) / (1 + comg12) : 1 - comg12)
            norm(&salp2, &calp2)
            sig12 = atan2(ssig12, csig12)
        } else if csig12 >= 0 || ssig12 >= 6 * abs(n) * .pi * sq(cbet1) {
            // The zeroth-order spherical estimate is good enough.
        } else {
            // Nearly antipodal. Scale lam12 and bet2 to x, y where the antipodal point is the
            // origin and the singular point is (-1, 0).
            let lam12x = atan2(-slam12, -clam12)  // lam12 - pi
            let k2 = sq(sbet1) * ep2
            let eps = k2 / (2 * (1 + (1 + k2).squareRoot()) + k2)
            let lamscale = f * cbet1 * a3f(eps) * .pi
            let betscale = lamscale * cbet1
            let x = lam12x / lamscale
            let y = sbet12a / betscale
            if y > -tol1 && x > -1 - xthresh {
                // Strip near the cut.
                salp1 = min(1, -x)
                calp1 = -(1 - sq(salp1)).squareRoot()
            } else {
                // Estimate omg12 from the astroid and alp1 from the spherical formula.
                let k = astroid(x, y)
                let omg12a = lamscale * (-x * k / (1 + k))
                somg12 = sin(omg12a)
                comg12 = -cos(omg12a)
                salp1 = cbet2 * somg12
                calp1 = sbet12a - cbet2 * sbet1 * sq(somg12) / (1 - comg12)
            }
        }
        // Sanity check on the starting guess; written so that NaN goes through.
        if !(salp1 <= 0) {
            norm(&salp1, &calp1)
        } else {
            salp1 = 1
            calp1 = 0
        }
        return (sig12, salp1, calp1, salp2, calp2, dnm)
    }

    // MARK: Direct problem

    /// Karney's direct method (2013, section 3), WGS84; the longitude is not unrolled.
    static func direct(lat1 lat1In: Double, lon1: Double, azi1 azi1In: Double, s12: Double) -> (
        lon: Double, lat: Double
    ) {
        let lat1 = latFix(lat1In)
        let azi1 = angNormalize(azi1In)
        let (salp1, calp1) = sincosd(angRound(azi1))
        var (sbet1, cbet1) = sincosd(angRound(lat1))
        sbet1 *= f1
        norm(&sbet1, &cbet1)
        cbet1 = max(tiny, cbet1)  // cbet1 = +epsilon at the poles

        let salp0 = salp1 * cbet1  // alp0 in [0, pi/2 - |bet1|]
        let calp0 = (calp1 * calp1 + sq(salp1 * sbet1)).squareRoot()
        // sig1 from tan(bet1) = tan(sig1) cos(alp1), sig = 0 at the northward equator
        // crossing; omg1 from tan(omg1) = sin(alp0) tan(sig1).
        var ssig1 = sbet1
        let somg1 = salp0 * sbet1
        var csig1 = sbet1 != 0 || calp1 != 0 ? cbet1 * calp1 : 1
        let comg1 = csig1
        norm(&ssig1, &csig1)

        let k2 = sq(calp0) * ep2
        let eps = k2 / (2 * (1 + (1 + k2).squareRoot()) + k2)
        let a1m1 = a1m1f(eps)
        let c1 = c1f(eps)
        let b11 = c1.sinSum(ssig1, csig1)
        let sb11 = sin(b11)
        let cb11 = cos(b11)
        // tau1 = sig1 + B11
        let stau1 = ssig1 * cb11 + csig1 * sb11
        let ctau1 = csig1 * cb11 - ssig1 * sb11
        let c1p = c1pf(eps)
        let c3 = c3f(eps)
        let a3c = -f * salp0 * a3f(eps)
        let b31 = c3.sinSum(ssig1, csig1)

        // Distance to arc length with the reverted series (accurate for |f| < 0.01).
        let tau12 = s12 / (b * (1 + a1m1))
        let stau12 = sin(tau12)
        let ctau12 = cos(tau12)
        let b12 = -c1p.sinSum(stau1 * ctau12 + ctau1 * stau12, ctau1 * ctau12 - stau1 * stau12)
        let sig12 = tau12 - (b12 - b11)
        let ssig12 = sin(sig12)
        let csig12 = cos(sig12)

        // sig2 = sig1 + sig12
        let ssig2 = ssig1 * csig12 + csig1 * ssig12
        var csig2 = csig1 * csig12 - ssig1 * ssig12
        let sbet2 = calp0 * ssig2  // sin(bet2) = cos(alp0) sin(sig2)
        var cbet2 = (salp0 * salp0 + sq(calp0 * csig2)).squareRoot()
        if cbet2 == 0 {
            // salp0 = 0 and csig2 = 0: break the degeneracy.
            cbet2 = tiny
            csig2 = tiny
        }
        // tan(omg2) = sin(alp0) tan(sig2)
        let somg2 = salp0 * ssig2
        let comg2 = csig2
        let omg12 = atan2(somg2 * comg1 - comg2 * somg1, comg2 * comg1 + somg2 * somg1)
        let lam12 = omg12 + a3c * (sig12 + (c3.sinSum(ssig2, csig2) - b31))
        let lon12 = lam12 / degree
        let lon2 = angNormalize(angNormalize(lon1) + angNormalize(lon12))
        let lat2 = atan2d(sbet2, f1 * cbet2)
        return (lon2, lat2)
    }
}
