@testable import FenceEngine
import XCTest

/// What a single fence edit costs on an engine holding many devices (`PairCounts`): an edit
/// of a fence no device holds reads no device, one a few devices hold reads only their
/// partitions, and the counts stay what the device states say through every kind of change.
final class FenceEditCostTests: XCTestCase {
    /// A small square fence at (lon, 0).
    static func square(_ id: String, lon: Double, group: String? = nil) -> Fence {
        let ring = [(0.0, 0.0), (1, 0), (1, 1), (0, 1), (0, 0)].map { LonLat(lon: lon + $0.0, lat: $0.1) }
        var f = Fence.polygon(id: id, exterior: ring)
        f.group = group
        return f
    }

    /// 2,000 devices over every partition, all outside every fence but "a" (inside "f1") and
    /// "b" and "c" (inside "f2"), in partitions of their own.
    func fleet() -> (engine: EventEngine, partitionOf: [String: Int]) {
        var engine = EventEngine()
        let fences = (0..<50).map { Self.square("f\($0)", lon: Double(2 * $0), group: "g\($0 % 5)") }
        XCTAssertTrue(engine.add(fences).results.allSatisfy { $0.error == nil })
        var fixes = (0..<2000).map { Position(device: "d\($0)", time: 10, lon: -50, lat: -50) }
        fixes += [
            Position(device: "a", time: 10, lon: 2.5, lat: 0.5),
            Position(device: "b", time: 10, lon: 4.5, lat: 0.5),
            Position(device: "c", time: 10, lon: 4.25, lat: 0.25),
        ]
        let r = engine.evaluate(fixes, threads: 2)
        XCTAssertEqual(summary(r.events), ["10 a f1 enter initial", "10 b f2 enter initial", "10 c f2 enter initial"])
        var partitionOf: [String: Int] = [:]
        for id in ["a", "b", "c"] { partitionOf[id] = EventEngine.partition(of: id) }
        XCTAssertNotEqual(partitionOf["b"], partitionOf["c"], "the test wants b and c in two partitions")
        XCTAssertEqual(Set((0..<2000).map { EventEngine.partition(of: "d\($0)") }).count, EventEngine.partitionCount)
        return (engine, partitionOf)
    }

    func testAnEditOfAFenceNoDeviceHoldsReadsNoDevice() {
        var (engine, _) = fleet()
        XCTAssertEqual(engine.remove(id: "f7"), [])
        XCTAssertEqual(engine.add([Self.square("f8", lon: 100)]).events, [])
        var masked = Self.square("f9", lon: 18)
        masked.actions = [.exit]
        XCTAssertEqual(engine.add([masked]).events, [])
        XCTAssertEqual(engine.setActions([.enter], fence: "f10"), [])
        XCTAssertEqual(engine.remove(group: "g3"), [])
        XCTAssertEqual(engine.partitionsReadByEdits, 0)
        XCTAssertTrue(engine.pairCountsAreExact)
    }

    func testAnEditOfAFenceFewDevicesHoldReadsOnlyTheirPartitions() {
        var (engine, _) = fleet()
        // f2 (b and c, two partitions) moved away: both exit, two partitions read.
        let events = engine.add([Self.square("f2", lon: 150)]).events
        XCTAssertEqual(summary(events), ["10 b f2 exit fence-replaced 0s", "10 c f2 exit fence-replaced 0s"])
        XCTAssertEqual(engine.partitionsReadByEdits, 2)
        XCTAssertEqual(engine.fences(insideOf: "b"), [])
        // f1 (a) removed: one partition; f2 is now held by no one: none.
        XCTAssertEqual(summary(engine.remove(id: "f1", at: 20)), ["20 a f1 exit fence-removed 10s"])
        XCTAssertEqual(engine.remove(id: "f2"), [])
        XCTAssertEqual(engine.partitionsReadByEdits, 3)
        XCTAssertTrue(engine.pairCountsAreExact)
        // The next fixes enter other fences, and the counts follow.
        let r = engine.evaluate([Position(device: "a", time: 30, lon: 6.5, lat: 0.5), Position(device: "b", time: 30, lon: 6.25, lat: 0.5)])
        XCTAssertEqual(summary(r.events), ["30 a f3 enter", "30 b f3 enter"])
        XCTAssertEqual(engine.remove(id: "f3", at: 40).count, 2)
        XCTAssertEqual(engine.partitionsReadByEdits, 5)
        XCTAssertTrue(engine.pairCountsAreExact)
    }

    /// A replacement whose expiry the clock has passed expires at once (`add`), and reads, as
    /// any edit of the fence, only the partitions of the devices holding it: not every device
    /// holding a visit (the 2,000 others hold none here, "a" holds f1 in its own partition).
    func testAnAddExpiringAtOnceReadsOnlyItsHoldersPartitions() {
        var (engine, partitionOf) = fleet()
        var expired = Self.square("f2", lon: 4)
        expired.expires = 5
        let events = engine.add([expired]).events
        XCTAssertEqual(summary(events), ["10 b f2 exit fence-expired 0s", "10 c f2 exit fence-expired 0s"])
        XCTAssertEqual(engine.partitionsReadByEdits, 2)
        XCTAssertEqual(engine.pairListsReadByEdits, 2)
        XCTAssertEqual(engine.devices(insideOf: "f2"), [])
        XCTAssertEqual(engine.devices(insideOf: "f1"), ["a"])
        XCTAssertEqual(engine.store.count, 49)
        XCTAssertNotEqual(partitionOf["a"], partitionOf["b"])
        // A new fence expired at once: no device holds its (new) key, nothing is read.
        var gone = Self.square("new", lon: 2)
        gone.expires = 10
        XCTAssertEqual(engine.add([gone]).events, [])
        XCTAssertEqual(engine.partitionsReadByEdits, 2)
        XCTAssertEqual(engine.store.count, 49)
        XCTAssertTrue(engine.pairCountsAreExact)
    }

    /// Counts against a recount after every batch and edit, over seeds: hysteresis (undetermined
    /// pairs), exit delay (pending exits), expiry, idle eviction, removals, reshapes, masks
    /// and a state file round trip.
    func testCountsStayExactThroughEveryKindOfChange() throws {
        for seed in UInt64(1)...12 {
            var rng = TestRandom(mixing: seed)
            var settings = EventSettings()
            settings.hysteresisMargin = seed % 3 == 0 ? 2_000 : 0
            settings.exitDelay = seed % 2 == 0 ? 120 : 0
            settings.idleEviction = seed % 4 == 1 ? 900 : 0
            settings.dwell = 300
            var engine = try EventEngine(settings: settings)
            var fences = (0..<30).map { k -> Fence in
                var f = Self.square("f\(k)", lon: Double(k % 6) * 0.8, group: "g\(k % 4)")
                if k % 7 == 3 { f.expires = Double(600 * (k % 5 + 1)) }
                return f
            }
            XCTAssertTrue(engine.add(fences).results.allSatisfy { $0.error == nil })
            var t = 0.0
            for step in 0..<24 {
                let ctx = "seed \(seed) step \(step)"
                var batch: [Position] = []
                // Devices from 100 on go quiet after step 8 (idle eviction takes them).
                for d in 0..<150 where rng.next() % 3 != 0 && (d < 100 || step < 8) {
                    batch.append(
                        Position(
                            device: "d\(d)", time: t + Double(rng.next() % 60), lon: Double(rng.next() % 6000) / 1000 - 0.5,
                            lat: Double(rng.next() % 1400) / 1000 - 0.2, accuracy: rng.next() % 2 == 0 ? 50 : nil))
                }
                t += 60
                _ = engine.evaluate(batch, threads: 1 + Int(seed % 3))
                XCTAssertTrue(engine.pairCountsAreExact, "\(ctx): after a batch")
                XCTAssertTrue(engine.heldKeysAreExact, "\(ctx): key bits after a batch")
                switch rng.next() % 6 {
                case 0: _ = engine.remove(id: "f\(rng.next() % 30)")
                case 1: _ = engine.remove(group: "g\(rng.next() % 4)")
                case 2:
                    let k = Int(rng.next() % 30)
                    _ = engine.add([Self.square("f\(k)", lon: Double(rng.next() % 6) * 0.8 + 0.3, group: "g\(k % 4)")])
                case 3:
                    var f = fences[Int(rng.next() % 30)]
                    f.actions = rng.next() % 2 == 0 ? [.exit] : [.enter, .dwell]
                    _ = engine.add([f])
                case 4: _ = engine.setActions(rng.next() % 2 == 0 ? [.enter] : nil, fence: "f\(rng.next() % 30)")
                default:
                    let restored = try TrackerSnapshot(decoding: engine.snapshot().encoded())
                    var next = try EventEngine(store: engine.store, settings: settings)
                    _ = try next.restoreReportingChanges(restored)
                    engine = next
                }
                XCTAssertTrue(engine.pairCountsAreExact, "\(ctx): after an edit")
                XCTAssertTrue(engine.heldKeysAreExact, "\(ctx): key bits after an edit")
            }
            fences = []
        }
    }

    /// Within the partitions an edit reads, it reads the pairs only of devices whose key bits
    /// (`DeviceState.heldKeys`) meet the fence's: with 50 fences (50 distinct bits), removing,
    /// reshaping or re-masking one reads exactly the devices inside it, not every device inside
    /// some fence of those partitions.
    func testAnEditReadsThePairsOnlyOfDevicesWhoseKeyBitsMeetItsFence() {
        var engine = EventEngine()
        let fences = (0..<50).map { Self.square("f\($0)", lon: Double(2 * $0)) }
        XCTAssertTrue(engine.add(fences).results.allSatisfy { $0.error == nil })
        XCTAssertTrue((0..<50).allSatisfy { engine.store.key(ofSlot: engine.store.slotByID["f\($0)"]!) < 64 })
        // 3,000 devices, 60 inside each fence.
        let fixes = (0..<3000).map { d in Position(device: "d\(d)", time: 10, lon: Double(2 * (d % 50)) + 0.5, lat: 0.5) }
        XCTAssertEqual(engine.evaluate(fixes, threads: 2).events.count, 3000)
        XCTAssertEqual(engine.remove(id: "f7", at: 20).count, 60)
        XCTAssertEqual(engine.pairListsReadByEdits, 60)
        XCTAssertEqual(engine.add([Self.square("f8", lon: 120)]).events.count, 60)
        XCTAssertEqual(engine.pairListsReadByEdits, 120)
        XCTAssertEqual(engine.setActions([.exit], fence: "f9"), [])
        XCTAssertEqual(summary(engine.setActions(nil, fence: "f9")).count, 60)
        XCTAssertEqual(engine.remove(ids: ["f10", "f11"], at: 20).count, 120)
        XCTAssertEqual(engine.pairListsReadByEdits, 240)
        XCTAssertGreaterThan(engine.partitionsReadByEdits, 40, "the devices are spread over the partitions")
        XCTAssertTrue(engine.pairCountsAreExact)
        XCTAssertTrue(engine.heldKeysAreExact)
    }

    /// Keys that share a bit (150 fences: key k and k + 64 do) and devices holding several
    /// pairs: every edit still finds exactly the devices inside, against a scan of where each
    /// device is. Overlapping squares half a degree apart put each device in two fences.
    func testEditsFindEveryDeviceWhenKeysShareBits() {
        var engine = EventEngine()
        let fences = (0..<150).map { Self.square("f\($0)", lon: Double($0) * 0.5) }
        XCTAssertTrue(engine.add(fences).results.allSatisfy { $0.error == nil })
        var rng = TestRandom(mixing: 77)
        var where_: [String: Double] = [:]
        var fixes: [Position] = []
        for d in 0..<1500 {
            let lon = Double(rng.next() % 74_000) / 1000 + 0.25
            where_["d\(d)"] = lon
            fixes.append(Position(device: "d\(d)", time: 10, lon: lon, lat: 0.5))
        }
        _ = engine.evaluate(fixes, threads: 2)
        func inside(_ k: Int) -> Set<String> {
            Set(where_.filter { $0.value >= Double(k) * 0.5 && $0.value <= Double(k) * 0.5 + 1 }.keys)
        }
        let keyOf = { (k: Int) in engine.store.key(ofSlot: engine.store.slotByID["f\(k)"]!) }
        // Fences up to 140 hold devices (they are spread over 0.25-74.25).
        let shared = (0..<140).filter { k in (0..<150).contains { j in j != k && keyOf(j) & 63 == keyOf(k) & 63 } }
        XCTAssertGreaterThan(shared.count, 40, "the test wants keys sharing bits")
        for k in [shared[0], shared[1], shared[shared.count / 2], shared[shared.count - 1]] {
            // Re-masked: every device inside gets its enter again, no other.
            XCTAssertEqual(engine.setActions([.exit], fence: "f\(k)"), [])
            XCTAssertEqual(Set(engine.setActions(nil, fence: "f\(k)").map(\.device)), inside(k), "f\(k) re-triggered")
            // Reshaped far away: every device inside exits.
            let moved = engine.add([Self.square("f\(k)", lon: 170)]).events
            XCTAssertEqual(Set(moved.map(\.device)), inside(k), "f\(k) reshaped")
            XCTAssertFalse(inside(k).isEmpty)
        }
        for k in [shared[2], shared[3]] {
            XCTAssertEqual(Set(engine.remove(id: "f\(k)", at: 20).map(\.device)), inside(k), "f\(k) removed")
        }
        XCTAssertTrue(engine.pairCountsAreExact)
        XCTAssertTrue(engine.heldKeysAreExact)
    }

    /// Counts that went below 0 (a change that was not logged) are not used: the next edit
    /// recounts from the device states and still finds every device inside.
    func testCountsThatWentWrongAreRecountedBeforeAnEdit() {
        var (engine, _) = fleet()
        let key = engine.store.key(ofSlot: engine.store.slotByID["f2"]!)
        var log = PairLog()
        for _ in 0..<3 { log.left(key) }
        engine.pairCounts.apply(log)
        XCTAssertFalse(engine.pairCounts.trusted)
        XCTAssertFalse(engine.pairCountsAreExact)
        XCTAssertEqual(summary(engine.remove(id: "f2", at: 20)), ["20 b f2 exit fence-removed 10s", "20 c f2 exit fence-removed 10s"])
        XCTAssertTrue(engine.pairCounts.trusted)
        XCTAssertTrue(engine.pairCountsAreExact)
    }

    /// `remove(ids:)` gives what removing the fences one by one gives, events and states, from
    /// one pass; unknown and repeated ids are skipped.
    func testRemovingManyIdsAtOnceEqualsOneByOne() throws {
        for seed in UInt64(1)...6 {
            var rng = TestRandom(mixing: seed &+ 40)
            var settings = EventSettings()
            settings.hysteresisMargin = seed % 2 == 0 ? 3_000 : 0
            settings.exitDelay = seed % 3 == 0 ? 60 : 0
            var one = try EventEngine(settings: settings)
            let fences = (0..<40).map { Self.square("f\($0)", lon: Double($0 % 8) * 0.7, group: "g\($0 % 3)") }
            XCTAssertTrue(one.add(fences).results.allSatisfy { $0.error == nil })
            let fixes = (0..<400).map { d in
                Position(device: "d\(d)", time: Double(d % 7), lon: Double(rng.next() % 6000) / 1000, lat: Double(rng.next() % 1200) / 1000 - 0.1)
            }
            _ = one.evaluate(fixes, threads: 2)
            var many = one
            let ids = (0..<15).map { _ in "f\(rng.next() % 45)" } + ["f3", "nope"]
            let at: Double? = seed % 2 == 0 ? 100 : nil
            var expected: [FenceEvent] = []
            for id in ids { expected += one.remove(id: id, at: at) }
            let got = many.remove(ids: ids, at: at)
            XCTAssertEqual(got, expected.sorted(), "seed \(seed)")
            XCTAssertFalse(got.isEmpty, "seed \(seed): the test wants devices inside")
            XCTAssertEqual(many.snapshot().encoded(), one.snapshot().encoded(), "seed \(seed)")
            XCTAssertEqual(many.store.count, one.store.count)
            XCTAssertTrue(many.pairCountsAreExact)
            // Later adds reuse the freed slots and keys in the same order: the state files stay
            // equal byte for byte after more fences and fixes.
            let more = (40..<52).map { Self.square("f\($0)", lon: Double($0 % 8) * 0.7 + 0.2) }
            XCTAssertEqual(one.add(more).events, many.add(more).events)
            let later = fixes.map { Position(device: $0.device, time: $0.time + 100, lon: $0.lon + 0.1, lat: $0.lat) }
            XCTAssertEqual(one.evaluate(later, threads: 2).events, many.evaluate(later, threads: 2).events, "seed \(seed)")
            XCTAssertEqual(many.snapshot().encoded(), one.snapshot().encoded(), "seed \(seed) after more work")
        }
    }
}
