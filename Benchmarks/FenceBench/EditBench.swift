import FenceEngine
import Foundation
import SeededRandom

/// Single-fence edits on an engine that holds a fleet's state: what a pipeline pays to remove,
/// add or reshape one fence between batches (a delivery zone opened, closed or redrawn).
enum EditBench {
    /// Times `edits` random fences each moved by half its width (a reshape: devices inside
    /// whose last fix it no longer covers get `fence-replaced` exits), then removed, then
    /// added back as they were: one call per fence and step. Returns the JSON line's fields:
    /// per step, calls a second over all of them, and the median and slowest call. The
    /// slowest includes a one-time cost: the first edits after a bulk load grow the store's
    /// per-fence arrays and id table past their loaded size (a copy of each; the records
    /// grow in place, `GeometryRecords`). Then `copies(of:)`.
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
        var line: [String: Any] = ["case": "edits", "edits": picked.count]
        func time(_ step: String, _ body: (Fence) -> Int) {
            var seconds: [Double] = []
            for f in picked {
                let t0 = Measure.now()
                events += body(f)
                seconds.append(Measure.now() - t0)
            }
            let sorted = seconds.sorted()
            line["\(step)_per_s"] = Int(Double(seconds.count) / seconds.reduce(0, +))
            line["\(step)_median_us"] = round3(sorted[sorted.count / 2] * 1e6)
            line["\(step)_max_us"] = round3(sorted[sorted.count - 1] * 1e6)
        }
        time("reshapes") { engine.add([moved($0)], threads: threads).events.count }
        time("removes") { engine.remove(id: $0.id).count }
        time("adds") { engine.add([$0], threads: threads).events.count }
        line["events"] = events
        line.merge(copies(of: engine, picked: picked, threads: threads)) { a, _ in a }
        return line
    }

    /// Copies of the engine, as a NATS worker's partitions are of its base fences, each
    /// making one edit (a reshape) while all are alive: the milliseconds of the slowest first
    /// edit, and the resident bytes each copy added, per fence. A copy shares the store's
    /// records (`GeometryRecords`), and copies its per-fence arrays and index on its first
    /// edit.
    static func copies(of engine: EventEngine, picked: [Fence], threads: Int, count: Int = 4) -> [String: Any] {
        guard let fence = picked.first, engine.store.count > 0 else { return [:] }
        let before = Measure.residentBytes()
        var copies = [EventEngine](repeating: engine, count: count)
        var slowest = 0.0
        for k in copies.indices {
            let t0 = Measure.now()
            _ = copies[k].add([moved(fence)], threads: threads)
            slowest = max(slowest, Measure.now() - t0)
        }
        let added = Measure.residentBytes() - before
        withExtendedLifetime(copies) {}
        return [
            "copy_edit_max_ms": round3(slowest * 1e3),
            "copy_rss_bytes_per_fence": added / count / engine.store.count,
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
