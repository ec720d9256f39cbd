import FenceEngine
import Foundation
import SeededRandom

/// A seeded synthetic workload: star-shaped polygons and circles scattered over a region sized
/// so that a random position falls in about `hits` fences.
struct Scenario {
    var fenceCount: Int
    var vertices: Int
    /// Share of circles among the fences (0 polygons only, 1 circles only).
    var circleShare: Double
    var hits: Double
    var seed: UInt64
    /// Fence and device ids as UUIDs (36 bytes, as most fleet systems name both) instead of
    /// "p12" / "dev-12": Swift keeps strings of up to 15 bytes inline, so short ids never
    /// touch reference counts or separate storage, and long ones do (each fix then carries
    /// its own copy of its device's id, as one read from input does).
    var longIDs = false
    /// Polygons as straight corridors this many degrees long (4 vertices, at a random angle,
    /// their width making the area `hits` asks for); 0: stars of `vertices`. Each corridor's
    /// box is mostly empty: the case for index pieces (`FenceValidation.polygonBoxes`).
    var corridorLength = 0.0

    /// The id of fence or device `index`: `prefix` and the index, or a UUID drawn from them.
    func id(_ prefix: String, _ index: Int) -> String {
        guard longIDs else { return "\(prefix)\(index)" }
        var rng = SplitMix64(seed: UInt64(index) &* 2 &+ (prefix == "dev-" ? 1 : 0))
        func hex(_ digits: Int) -> String {
            let s = String(rng.next() & ((1 << (4 * UInt64(digits))) - 1), radix: 16)
            return String(repeating: "0", count: digits - s.count) + s
        }
        return "\(hex(8))-\(hex(4))-\(hex(4))-\(hex(4))-\(hex(12))"
    }

    /// The region: 20 x 20 degrees around (5 E, 45 N), a mid-latitude area like most fleets'.
    static let region = (minLon: -5.0, maxLon: 15.0, minLat: 35.0, maxLat: 55.0)

    /// Mean fence radius in degrees of latitude so that the fences' total area is `hits` times
    /// the region's. A star polygon's area is about 0.73 of its circumscribed circle's (radii
    /// alternate between 1 and 0.5..1 of the outer radius), and radii vary by ±30% (mean square
    /// 1.03); the measured hits are reported beside the target.
    var meanRadiusDegrees: Double {
        let r = Scenario.region
        let regionArea = (r.maxLon - r.minLon) * (r.maxLat - r.minLat)
        let perFence = hits * regionArea / Double(fenceCount)
        let shapeFactor = 1.03 * (circleShare + (1 - circleShare) * 0.73)
        // Degrees of longitude are shorter by cos(45°), so a round fence spans 1/cos in lon.
        return (perFence / (Double.pi * shapeFactor / cos(45 * Double.pi / 180))).squareRoot()
    }

    func fences() -> [Fence] {
        var rng = SplitMix64(seed: seed)
        let r = Scenario.region
        let mean = meanRadiusDegrees
        var out: [Fence] = []
        out.reserveCapacity(fenceCount)
        for i in 0..<fenceCount {
            let lon = rng.uniform(r.minLon, r.maxLon)
            let lat = rng.uniform(r.minLat, r.maxLat)
            let radius = mean * rng.uniform(0.7, 1.3)
            if rng.uniform(0, 1) < circleShare {
                out.append(.circle(id: id("c", i), lon: lon, lat: lat, radius: radius * 111_195))
                continue
            }
            let lonScale = 1 / cos(lat * Double.pi / 180)
            if corridorLength > 0 {
                // As much area as the star: pi x 0.73 x radius^2, as a length x width strip.
                let width = Double.pi * 0.73 * radius * radius / corridorLength
                let angle = rng.uniform(0, Double.pi)
                let (c, s) = (cos(angle), sin(angle))
                let (l, w) = (corridorLength / 2, width / 2)
                let ring = [(-l, -w), (l, -w), (l, w), (-l, w), (-l, -w)].map {
                    LonLat(lon: lon + ($0.0 * c - $0.1 * s) * lonScale, lat: lat + $0.0 * s + $0.1 * c)
                }
                out.append(.polygon(id: id("p", i), exterior: ring))
                continue
            }
            var ring: [LonLat] = []
            ring.reserveCapacity(vertices + 1)
            let phase = rng.uniform(0, 2 * Double.pi)
            for k in 0..<vertices {
                let angle = phase + 2 * Double.pi * Double(k) / Double(vertices)
                let rr = k % 2 == 0 ? radius : radius * rng.uniform(0.5, 1.0)
                ring.append(LonLat(lon: lon + rr * cos(angle) * lonScale, lat: lat + rr * sin(angle)))
            }
            ring.append(ring[0])
            out.append(.polygon(id: id("p", i), exterior: ring))
        }
        return out
    }

    func positions(count: Int, seed: UInt64) -> [LonLat] {
        var rng = SplitMix64(seed: seed)
        let r = Scenario.region
        return (0..<count).map { _ in LonLat(lon: rng.uniform(r.minLon, r.maxLon), lat: rng.uniform(r.minLat, r.maxLat)) }
    }
}

extension Scenario {
    /// Fleet telemetry: `devices` vehicles on random walks through the region (5-30 m/s,
    /// each device reporting every 1-30 s, heading drifting), `fixes` fixes in all, in time
    /// order across devices as a live feed delivers them.
    func fleet(devices: Int, fixes: Int, seed: UInt64) -> [Position] {
        var rng = SplitMix64(seed: seed)
        let r = Scenario.region
        let steps = max(1, fixes / devices)
        var out: [Position] = []
        out.reserveCapacity(devices * steps)
        var state: [(id: String, lon: Double, lat: Double, heading: Double, speed: Double, interval: Double, t: Double)] = []
        for d in 0..<devices {
            state.append(
                (id("dev-", d), rng.uniform(r.minLon, r.maxLon), rng.uniform(r.minLat, r.maxLat), rng.uniform(0, 2 * .pi),
                 rng.uniform(5, 30), rng.uniform(1, 30), rng.uniform(0, 30)))
        }
        for _ in 0..<steps {
            for d in 0..<devices {
                var s = state[d]
                // Each fix its own copy of the id, as a reader of a file or a stream makes it:
                // with long ids, equal ids are then separate objects, as in `fence eval`.
                let id = longIDs ? String(decoding: Array(s.id.utf8), as: UTF8.self) : s.id
                out.append(Position(device: id, time: s.t, lon: s.lon, lat: s.lat))
                s.heading += rng.uniform(-0.3, 0.3)
                let metres = s.speed * s.interval
                s.lat = min(r.maxLat, max(r.minLat, s.lat + metres * cos(s.heading) / 111_132))
                s.lon = min(r.maxLon, max(r.minLon, s.lon + metres * sin(s.heading) / (111_320 * cos(s.lat * .pi / 180))))
                s.t += s.interval
                state[d] = s
            }
        }
        out.sort { $0.time < $1.time }
        return out
    }
}
