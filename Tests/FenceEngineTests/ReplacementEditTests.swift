@testable import FenceEngine
import SeededRandom
import XCTest

/// Fence replacements under devices, from a review of session 37's change: a reshape covering
/// the last fix cancels a pending exit (and leaves dwell to the next fix); the expiry of an
/// already expired replacement is worded with the replacement, whenever the clock passes it;
/// the live `add` against a restore of the snapshot before it, events compared in full.
final class ReplacementEditTests: XCTestCase {
    static let square = [(0.0, 0.0), (1, 0), (1, 1), (0, 1), (0, 0)].map { LonLat(lon: $0.0, lat: $0.1) }

    static func fence(
        _ id: String = "sq", dx: Double = 0, size: Double = 1, group: String? = nil, expires: Double? = nil, actions: FenceActions? = nil
    ) -> Fence {
        var f = Fence.polygon(id: id, exterior: square.map { LonLat(lon: $0.lon * size + dx, lat: $0.lat * size) })
        f.group = group
        f.expires = expires
        f.actions = actions
        return f
    }

    func line(_ e: FenceEvent) -> String {
        var s = "\(e.time) \(e.device) \(e.fence) g=\(e.group ?? "-") \(e.kind)"
        if let r = e.reason { s += " \(r.rawValue)" }
        if let i = e.insideSeconds { s += " \(i)s" }
        return s
    }

    // MARK: the wording of an expiry at add does not depend on other devices' fixes (the clock)

    /// v is inside "sq" (group old, mask enter+exit) since 10. The same replacement (same shape,
    /// group "new", expires 50) is added in two engines that differ only in whether another
    /// device w has a fix at 200 (the clock). v's next fix (300, far outside) is the same.
    /// With the clock at 200 the add expires the fence at once; with the clock at 10 the
    /// replacement stands and v's own next fix expires it (at 50). Both are worded with the
    /// replacement (group "new"; with a mask without exit, no exit): worded with the old fence
    /// at the add (08145b8, withdrawn), v's events depended on whether another device's fix
    /// pushed the clock, which in NATS is the partitioning (`ChangeClockTests`).
    func testExpiryWordingDoesNotDependOnTheClock() throws {
        func run(otherDevice: Bool, _ replacement: Fence) throws -> [String] {
            var e = EventEngine()
            _ = e.add([Self.fence(group: "old", actions: [.enter, .exit])])
            var fixes = [Position(device: "v", time: 10, lon: 0.5, lat: 0.5)]
            if otherDevice { fixes.append(Position(device: "w", time: 200, lon: 5, lat: 5)) }
            var events = e.evaluate(fixes).events
            events += e.add([replacement]).events
            events += e.evaluate([Position(device: "v", time: 300, lon: 9, lat: 9)]).events
            return events.filter { $0.device == "v" }.map(line)
        }
        // Group-only change.
        let regrouped = Self.fence(group: "new", expires: 50, actions: [.enter, .exit])
        XCTAssertEqual(try run(otherDevice: true, regrouped), try run(otherDevice: false, regrouped), "group of v's expiry exit")
        XCTAssertEqual(try run(otherDevice: true, regrouped), ["10.0 v sq g=old enter", "50.0 v sq g=new exit fence-expired 40.0s"])
        // Mask-only change: the new mask has no exit.
        let remasked = Self.fence(group: "old", expires: 50, actions: [.enter])
        XCTAssertEqual(try run(otherDevice: true, remasked), try run(otherDevice: false, remasked), "whether v's expiry exit is reported")
        XCTAssertEqual(try run(otherDevice: true, remasked), ["10.0 v sq g=old enter"])
    }

    // MARK: live add against a restore of the snapshot before it, events compared in full

    /// `ExpiryWalkTests` compares `summary` lines, which leave the group out, so the wording
    /// this change is about is not compared there. Here: whole `FenceEvent`s (group included),
    /// replacements that change group, mask (own or engine's), shape, expiry, several at once,
    /// with hysteresis, exit delay and dwell.
    func testLiveAddEqualsRestoreWithGroupsCompared() throws {
        var compared = 0
        var expiredExits = 0
        var cancelled = 0
        for seed in UInt64(1)...16 {
            var rng = SplitMix64(seed: seed &* 0x9E37_79B9_7F4A_7C15 &+ 3)
            var settings = EventSettings()
            settings.dwell = 150
            settings.exitDelay = seed % 2 == 0 ? 0 : 120
            settings.hysteresisMargin = seed % 3 == 0 ? 2_000 : 0
            var engine = try EventEngine(settings: settings)
            let count = 30
            var fences: [Fence] = (0..<count).map { k in
                Self.fence("f\(k)", dx: rng.uniform(-0.5, 4), size: rng.uniform(0.3, 1.5), group: rng.chance(0.7) ? "g\(k % 4)" : nil,
                    actions: rng.chance(0.4) ? [.enter, .exit, .dwell] : nil)
            }
            _ = engine.add(fences)
            var t = 0.0
            for step in 0..<12 {
                let ctx = "seed \(seed) step \(step)"
                var batch: [Position] = []
                for d in 0..<60 where rng.chance(0.7) {
                    batch.append(Position(device: "d\(d)", time: t + rng.uniform(0, 59).rounded(), lon: rng.uniform(-0.5, 5), lat: rng.uniform(-0.3, 1.3)))
                }
                t += 60
                _ = engine.evaluate(batch, threads: 1)
                var edit: [Fence] = []
                var ids = Set<String>()
                for _ in 0..<rng.int(1...6) {
                    let k = rng.int(0...(count - 1))
                    guard ids.insert("f\(k)").inserted else { continue }
                    var f = fences[k]
                    if rng.chance(0.5) { f = Self.fence(f.id, dx: rng.uniform(-0.5, 4), size: rng.uniform(0.3, 1.5), group: f.group, actions: f.actions) }
                    if rng.chance(0.4) { f.group = rng.chance(0.5) ? "h\(k % 3)" : nil }
                    if rng.chance(0.4) { f.actions = [[.exit], [.enter], [.enter, .dwell], [.enter, .exit, .dwell]][rng.int(0...3)] }
                    if rng.chance(0.2) { f.actions = nil }
                    f.expires = rng.chance(0.4) ? (engine.watermark - rng.uniform(0, 300)).rounded() : nil
                    edit.append(f)
                }
                let before = engine.snapshot()
                let pendingBefore = before.devices.reduce(0) { $0 + $1.pairs.filter(\.exitPending).count }
                var storeAfter = engine.store
                _ = storeAfter.add(edit)
                let live = engine.add(edit).events
                let pendingAfter = engine.snapshot().devices.reduce(0) { $0 + $1.pairs.filter(\.exitPending).count }
                cancelled += max(0, pendingBefore - pendingAfter)
                var restored = try EventEngine(store: storeAfter, settings: settings)
                let (_, restoredEvents) = try restored.restoreReportingChanges(before)
                XCTAssertEqual(live.map(line), restoredEvents.map(line), "\(ctx): add against restore")
                XCTAssertEqual(engine.snapshot(), restored.snapshot(), "\(ctx): state")
                expiredExits += live.filter { $0.reason == .fenceExpired }.count
                compared += 1
                for (k, f) in fences.enumerated() {
                    if let e = edit.first(where: { ExactID.sameBytes($0.id, f.id) }) { fences[k] = e }
                }
                // An expired replacement is gone; put a fresh copy back so later steps have it.
                for (k, f) in fences.enumerated() where engine.store.slotByID[f.id] == nil {
                    var g = f
                    g.expires = nil
                    fences[k] = g
                    _ = engine.add([g])
                }
            }
        }
        print("replacements, live against restore: \(compared) adds, \(expiredExits) expiry exits, \(cancelled) pending exits gone")
        XCTAssertGreaterThan(expiredExits, 10)
    }

    // MARK: a covering reshape cancels the pending exit, and leaves dwell to the next fix

    /// dwell 60 s, exit delay 100 s. v enters at 0, is outside at 80 (exit pending since 80).
    /// The fence is reshaped to cover that fix: the pending exit is cancelled, "that fix is
    /// inside the fence as it now is" (README). No edit fires `dwell` of itself (as a
    /// replacement with a shorter dwell does not): the next fix still inside does. If the
    /// device's next fixes are outside the new shape, the delay starts again at the first of
    /// them (200) and the visit ends at 400 (200 + 100 passed), with no dwell at all.
    func testACoveringReshapeCancelsThePendingExitAndLeavesDwellToTheNextFix() throws {
        var settings = EventSettings()
        settings.dwell = 60
        settings.exitDelay = 100
        var e = try EventEngine(settings: settings)
        _ = e.add([Self.fence()])
        var events = e.evaluate([Position(device: "v", time: 0, lon: 0.5, lat: 0.5), Position(device: "v", time: 80, lon: 1.5, lat: 0.5)]).events
        XCTAssertEqual(e.snapshot().devices.first?.pairs.first?.exitPending, true)
        events += e.add([Self.fence(size: 2)]).events
        XCTAssertEqual(e.snapshot().devices.first?.pairs.first?.exitPending, false, "cancelled by the covering reshape")
        events += e.evaluate([Position(device: "v", time: 200, lon: 5, lat: 5), Position(device: "v", time: 400, lon: 5, lat: 5)]).events
        XCTAssertEqual(events.map(line), ["0.0 v sq g=- enter", "400.0 v sq g=- exit 400.0s"])
        // The same, but the next fix is inside the new shape: dwell there.
        var f = try EventEngine(settings: settings)
        _ = f.add([Self.fence()])
        var g = f.evaluate([Position(device: "v", time: 0, lon: 0.5, lat: 0.5), Position(device: "v", time: 80, lon: 1.5, lat: 0.5)]).events
        g += f.add([Self.fence(size: 2)]).events
        g += f.evaluate([Position(device: "v", time: 90, lon: 1.6, lat: 0.5), Position(device: "v", time: 300, lon: 5, lat: 5)]).events
        XCTAssertEqual(g.map(line), ["0.0 v sq g=- enter", "90.0 v sq g=- dwell 90.0s"])
        XCTAssertEqual(f.status(device: "v", fence: "sq"), .stayed, "exit pending since 300, not yet due")
    }

    // MARK: fences named by their bytes

    /// Two fences whose ids are canonically equivalent but byte-different (NFC and NFD "é"),
    /// v inside both; the NFD one is replaced by an expired one with another group. Only it
    /// expires, worded with the replacement; the NFC fence is untouched; a restore agrees.
    func testAnExpiredReplacementEndsOnlyTheFenceOfItsBytes() throws {
        let nfc = "caf\u{E9}", nfd = "cafe\u{301}"
        XCTAssertEqual(nfc, nfd)
        var e = EventEngine()
        _ = e.add([Self.fence(nfc, group: "A"), Self.fence(nfd, group: "B")])
        _ = e.evaluate([Position(device: "v", time: 10, lon: 0.5, lat: 0.5), Position(device: "w", time: 200, lon: 5, lat: 5)])
        let snapshot = e.snapshot()
        var replaced = Self.fence(nfd, group: "C", expires: 50)
        replaced.actions = [.enter, .exit]
        let live = e.add([replaced]).events
        XCTAssertEqual(live.count, 1)
        XCTAssertTrue(live.first.map { ExactID.sameBytes($0.fence, nfd) && $0.group == "C" && $0.reason == .fenceExpired } ?? false)
        XCTAssertNotNil(e.store.slotByID[nfc])
        XCTAssertNil(e.store.slotByID[nfd])
        var store = FenceStore()
        store.add([Self.fence(nfc, group: "A"), replaced])
        var restored = try EventEngine(store: store, settings: EventSettings())
        XCTAssertEqual(try restored.restoreReportingChanges(snapshot).events, live)
    }
}
