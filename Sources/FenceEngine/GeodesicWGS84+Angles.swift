import Foundation

// Angles in degrees, reduced exactly, after GeographicLib's Math: what keeps the inverse and
// direct problems accurate at quadrant boundaries and across the antimeridian.
extension GeodesicWGS84 {
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
}
