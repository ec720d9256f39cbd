import FenceEngine
import Foundation
import SeededRandom

/// Single-fence edits on an engine that holds a fleet's state: what a pipeline pays to remove,
/// add or reshape one fence between batches (a delivery zone opened, closed or redrawn).
enum EditBench {
    /// Times `edits` random fences each moved by half its width (a reshape: devices inside
    /// whose last fix it no longer covers get `fence-replaced` exits), then removed, then
    /// added back as they were: one call per fence and step. Returns the JSON line's fields.
    static func run(engine: inout EventEngine, edits: Int, seed: UInt64, threads: Int) -> [String: Any] {
        var rng = SplitMix64(seed: seed)
        let handles = engine.store.allHandles()
        guard !handles.isEmpty else { return ["case": "edits", "edits": 0] }
        var picked: [Fence] = []
        var ids = Set<String>()
        while picked.count < min(edits + 1, handles.count) {
            let h = handles[rng.int(0...(handles.count - 1))]
            let fence = engine.store.fence(h)
            if ids.insert(fence.id).inserted { picked.append(fence) }
        }
        // Untimed: the first change copies the store when the caller still holds it too.
        let first = picked.removeFirst()
        var events = engine.remove(id: first.id).count + engine.add([first], threads: threads).events.count
        let t0 = Measure.now()
        for f in picked { events += engine.add([moved(f)], threads: threads).events.count }
        let t1 = Measure.now()
        for f in picked { events += engine.remove(id: f.id).count }
        let t2 = Measure.now()
        for f in picked { events += engine.add([f], threads: threads).events.count }
        let t3 = Measure.now()
        let n = Double(picked.count)
        return [
            "case": "edits", "edits": picked.count, "events": events,
            "reshapes_per_s": Int(n / (t1 - t0)), "removes_per_s": Int(n / (t2 - t1)), "adds_per_s": Int(n / (t3 - t2)),
        ]
    }

    /// The fence moved east by half its width: a circle by half its radius, a polygon by half
    /// its longitude span (a translation keeps a valid ring valid).
    static func moved(_ fence: Fence) -> Fence {
        var f = fence
        switch fence.shape {
        case .circle(let c, let r):
            f.shape = .circle(center: LonLat(lon: c.lon + r / 111_195 / 2, lat: c.lat), radius: r)
        case .polygons(let polygons):
            f.shape = .polygons(
                polygons.map { p in
                    let lons = p.exterior.map(\.lon)
                    let dx = ((lons.max() ?? 0) - (lons.min() ?? 0)) / 2
                    func shift(_ ring: [LonLat]) -> [LonLat] { ring.map { LonLat(lon: $0.lon + dx, lat: $0.lat) } }
                    return Polygon(exterior: shift(p.exterior), holes: p.holes.map(shift))
                })
        }
        return f
    }
}
