@testable import FenceEngine
import SeededRandom
import XCTest

/// `expireAsOfWatermark` (a review's test of 172e44e) walks only the partitions `PairCounts`
/// names and the devices whose key bits meet the expired fences' keys. Compared with the full pass it
/// replaced (5650b3d), over random engines and adds of fences whose expiry the clock passed
/// (new ones, replacements of held fences with the same shape, another shape, another mask,
/// several at once), with hysteresis, exit delay and idle eviction; and the whole `add`
/// against a restore of the snapshot before it.
final class ExpiryWalkTests: XCTestCase {
    static func square(_ id: String, lon: Double, lat: Double = 0, size: Double = 1, group: String? = nil) -> Fence {
        let ring = [(0.0, 0.0), (1, 0), (1, 1), (0, 1), (0, 0)].map { LonLat(lon: lon + $0.0 * size, lat: lat + $0.1 * size) }
        var f = Fence.polygon(id: id, exterior: ring)
        f.group = group
        return f
    }

    func testTheWalkExpiresWhatTheFullPassExpired() throws {
        var compared = 0
        var expiredEvents = 0
        for seed in UInt64(1)...12 {
            var rng = SplitMix64(seed: seed &* 0x9E37_79B9_7F4A_7C15)
            var settings = EventSettings()
            settings.dwell = 200
            settings.exitDelay = seed % 2 == 0 ? 120 : 0
            settings.hysteresisMargin = seed % 3 == 0 ? 3_000 : 0
            settings.idleEviction = seed % 5 == 1 ? 600 : 0
            var engine = try EventEngine(settings: settings)
            let count = 70 + Int(seed % 4) * 10  // past 64 keys: key bits shared
            var fences: [Fence] = (0..<count).map { k in
                var f = Self.square("f\(k)", lon: rng.uniform(-0.5, 5), lat: rng.uniform(-0.5, 0.5), size: rng.uniform(0.3, 1.5), group: "g\(k % 5)")
                if rng.chance(0.1) { f.expires = rng.uniform(100, 3_000).rounded() }
                return f
            }
            XCTAssertTrue(engine.add(fences).results.allSatisfy { $0.error == nil })
            var t = 0.0
            for step in 0..<14 {
                let ctx = "seed \(seed) step \(step)"
                var batch: [Position] = []
                for d in 0..<300 where rng.chance(0.6) && (d < 200 || step < 6) {
                    batch.append(
                        Position(
                            device: "d\(d)", time: t + rng.uniform(0, 59).rounded(), lon: rng.uniform(-0.5, 6), lat: rng.uniform(-0.6, 1.6),
                            accuracy: rng.chance(0.3) ? 40 : nil))
                }
                t += 60
                _ = engine.evaluate(batch, threads: 1 + Int(seed % 3))
                // An add of fences the clock passed: replacements of held fences and new ones.
                var edit: [Fence] = []
                var ids = Set<String>()
                for _ in 0..<rng.int(1...6) {
                    let k = rng.int(0...(count + 10))
                    let id = "f\(k)"
                    guard ids.insert(id).inserted else { continue }
                    var f = k < count ? fences[k] : Self.square(id, lon: rng.uniform(0, 5), lat: 0)
                    switch rng.int(0...3) {
                    case 0: f = Self.square(id, lon: rng.uniform(0, 5), lat: rng.uniform(-0.5, 0.5), group: f.group)
                    case 1: f.actions = rng.chance(0.5) ? [.exit] : [.enter, .dwell]
                    default: break
                    }
                    f.expires = rng.chance(0.75) ? (engine.watermark - rng.uniform(0, 500)).rounded() : t + rng.uniform(0, 900).rounded()
                    edit.append(f)
                }
                // The changed function alone, against the full pass it replaced.
                var walk = engine
                var full = engine
                _ = walk.store.add(edit)
                _ = full.store.add(edit)
                let a = summary(EventEngine.sorted(walk.expireAsOfWatermark()))
                let b = summary(EventEngine.sorted(full.fullPassExpireAsOfWatermark()))
                XCTAssertEqual(a, b, "\(ctx): events")
                XCTAssertEqual(walk.snapshot(), full.snapshot(), "\(ctx): state")
                XCTAssertEqual(walk.store.count, full.store.count, "\(ctx): fences")
                XCTAssertEqual(walk.latestExpiredRemoval, full.latestExpiredRemoval, "\(ctx)")
                XCTAssertTrue(walk.pairCountsAreExact && walk.heldKeysAreExact, "\(ctx)")
                expiredEvents += a.count
                compared += 1

                // The whole add, against a restore of the snapshot before it.
                let before = engine.snapshot()
                var storeAfter = engine.store
                _ = storeAfter.add(edit)
                let live = engine.add(edit).events
                var restored = try EventEngine(store: storeAfter, settings: settings)
                let (_, restoredEvents) = try restored.restoreReportingChanges(before)
                XCTAssertEqual(summary(live), summary(restoredEvents), "\(ctx): add against restore")
                XCTAssertEqual(engine.snapshot(), restored.snapshot(), "\(ctx): state after add against restore")
                XCTAssertTrue(engine.pairCountsAreExact && engine.heldKeysAreExact, "\(ctx)")
                for f in edit where engine.store.slotByID[f.id] == nil {
                    XCTAssertEqual(engine.devices(insideOf: f.id), [], ctx)
                }
                for (k, f) in fences.enumerated() {
                    if let e = edit.first(where: { $0.id == f.id }) { fences[k] = e }
                }
            }
        }
        XCTAssertGreaterThan(compared, 150)
        XCTAssertGreaterThan(expiredEvents, 20)
        print("expiry walk: \(compared) adds compared, \(expiredEvents) expiry exits")
    }
}

extension EventEngine {
    /// `expireAsOfWatermark` as 5650b3d had it: every device holding a pair.
    mutating func fullPassExpireAsOfWatermark() -> [FenceEvent] {
        guard store.mayHaveExpired(asOf: watermark), watermark.isFinite else { return [] }
        var events: [FenceEvent] = []
        var held = partitions
        partitions = []
        var log = PairLog()
        for p in held.indices {
            for d in held[p].states.indices where !held[p].states[d].pairs.isEmpty {
                expirePairs(upTo: watermark, state: &held[p].states[d], events: &events, log: &log)
            }
        }
        partitions = held
        pairCounts.apply(log)
        latestExpiredRemoval = max(latestExpiredRemoval, store.removeExpiredFences(asOf: watermark).latest)
        return events
    }
}
