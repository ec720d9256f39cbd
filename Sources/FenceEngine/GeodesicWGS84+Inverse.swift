import Foundation

extension GeodesicWGS84 {
    // Karney 2013, sections 4-5: the distance between two points, by Newton on the first
    // azimuth inside a bracket.

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
}
