import Foundation

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
}
