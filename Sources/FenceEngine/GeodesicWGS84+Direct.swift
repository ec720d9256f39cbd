import Foundation

extension GeodesicWGS84 {
    // Karney 2013, section 3: the point at a distance and azimuth.

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
