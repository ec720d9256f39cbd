import FenceEngine
import Foundation
import SeededRandom

/// A generated fleet and its fences over a `size`° square at (0, 0): circles (200-1000 m, in
/// proportion to the square) and octagons, in groups; vehicles on random walks (5-30 m/s)
/// and a fifth of them slow (0.2-2 m/s, so they stay long enough to dwell), one fix every
/// `interval` seconds each.
/// Coordinates are whole micro-degrees, so a CSV round trip is exact.
struct Fleet {
    var devices: Int
    var steps: Int
    var interval: Double = 10
    var seed: UInt64 = 1
    var fenceCount = 2000
    /// Side of the square, degrees.
    var size = 1.0
    static let t0 = 1_700_000_000.0

    /// The fences as a GeoJSON FeatureCollection.
    func fencesGeoJSON(idPrefix: String = "", count: Int? = nil, seed fenceSeed: UInt64? = nil) -> String {
        var rng = SplitMix64(seed: fenceSeed ?? seed &+ 99)
        var features: [String] = []
        for i in 0..<(count ?? fenceCount) {
            let lon = rng.uniform(0, size)
            let lat = rng.uniform(0, size)
            let group = "g\(i % 7)"
            if i % 5 == 0 {
                let r = rng.uniform(0.002, 0.01) * min(1, size * 4)
                var ring: [String] = []
                for k in 0...8 {
                    let a = 2 * Double.pi * Double(k % 8) / 8
                    ring.append("[\(micro(lon + r * cos(a))),\(micro(lat + r * sin(a)))]")
                }
                features.append(
                    "{\"type\":\"Feature\",\"properties\":{\"id\":\"\(idPrefix)p\(i)\",\"group\":\"\(group)\"},"
                        + "\"geometry\":{\"type\":\"Polygon\",\"coordinates\":[[\(ring.joined(separator: ","))]]}}")
            } else {
                let radius = Int(rng.uniform(200, 1000) * min(1, size * 4))
                features.append(
                    "{\"type\":\"Feature\",\"properties\":{\"id\":\"\(idPrefix)c\(i)\",\"group\":\"\(group)\",\"radius\":\(radius)},"
                        + "\"geometry\":{\"type\":\"Point\",\"coordinates\":[\(micro(lon)),\(micro(lat))]}}")
            }
        }
        return "{\"type\":\"FeatureCollection\",\"features\":[\n" + features.joined(separator: ",\n") + "\n]}\n"
    }

    /// Calls `body` with every fix in time order (step by step; within a step devices stagger
    /// by up to 9 s), each device's fixes in time order.
    func forEachFix(_ body: (_ device: Int, _ time: Double, _ lonMicro: Int, _ latMicro: Int) -> Void) {
        var rng = SplitMix64(seed: seed)
        var lon = [Double](), lat = [Double](), heading = [Double](), speed = [Double]()
        for d in 0..<devices {
            lon.append(rng.uniform(0, size))
            lat.append(rng.uniform(0, size))
            heading.append(rng.uniform(0, 2 * .pi))
            speed.append(d % 5 == 0 ? rng.uniform(0.2, 2) : rng.uniform(5, 30))
        }
        for t in 0..<steps {
            for d in 0..<devices {
                heading[d] += rng.uniform(-0.3, 0.3)
                let stepDeg = speed[d] * interval / 111_000 * min(1, size * 4)
                lon[d] = min(size, max(0, lon[d] + stepDeg * cos(heading[d])))
                lat[d] = min(size, max(0, lat[d] + stepDeg * sin(heading[d])))
                body(d, Self.t0 + Double(t) * interval + Double(d % 10) * interval / 10, Int((lon[d] * 1e6).rounded()),
                    Int((lat[d] * 1e6).rounded()))
            }
        }
    }

    /// Device `d`'s id: `v<d>`, except devices 1 and 2, two spellings of one text (NFC "é"
    /// and NFD "e" + U+0301) that Swift's `String ==` calls equal: two devices everywhere, so a
    /// table keyed by `String` that joins them changes the events.
    static func deviceName(_ d: Int) -> String {
        switch d {
        case 1: "v-caf\u{E9}"
        case 2: "v-cafe\u{301}"
        default: "v\(d)"
        }
    }

    /// Every fix as a `Position`.
    func positions() -> [Position] {
        var out: [Position] = []
        out.reserveCapacity(devices * steps)
        forEachFix { d, t, x, y in out.append(Position(device: Self.deviceName(d), time: t, lon: Double(x) / 1e6, lat: Double(y) / 1e6)) }
        return out
    }

    /// Writes the fixes as CSV (`device,time,lon,lat`).
    func writeCSV(to path: String) throws {
        var out: [UInt8] = Array("device,time,lon,lat\n".utf8)
        out.reserveCapacity(devices * steps * 36)
        forEachFix { d, t, x, y in
            out += Self.deviceName(d).utf8
            out.append(44)
            let tenths = Int((t * 10).rounded())
            out += String(tenths / 10).utf8
            if tenths % 10 != 0 {
                out.append(46)
                out += String(tenths % 10).utf8
            }
            out.append(44)
            out += Self.microText(x).utf8
            out.append(44)
            out += Self.microText(y).utf8
            out.append(10)
        }
        try Data(out).write(to: URL(fileURLWithPath: path))
    }

    func micro(_ v: Double) -> String { Self.microText(Int((v * 1e6).rounded())) }

    /// Whole micro-degrees as a decimal number, e.g. 123456 -> "0.123456".
    static func microText(_ v: Int) -> String {
        let sign = v < 0 ? "-" : ""
        let a = abs(v)
        let frac = String(a % 1_000_000)
        return sign + String(a / 1_000_000) + "." + String(repeating: "0", count: 6 - frac.count) + frac
    }
}
