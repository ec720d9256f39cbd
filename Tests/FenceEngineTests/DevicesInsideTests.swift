@testable import FenceEngine
import XCTest

/// `devices(insideOf:)` (who is in a fence now) against the obvious answer: every device the
/// test has sent a fix, asked one by one through `status(device:fence:)`, after every batch,
/// fence edit, settings change and restore, over many seeds. Hysteresis leaves some pairs
/// `unknown`, an exit delay leaves some inside with their last fix outside, idle eviction
/// drops devices, and edits remove, reshape and re-add fences.
final class DevicesInsideTests: XCTestCase {
    static let lon0 = 8.0, lat0 = 47.0, span = 0.05

    static func fences(_ rng: inout TestRandom, count: Int) -> [Fence] {
        (0..<count).map { k in
            let lon = lon0 + rng.uniform(0, span), lat = lat0 + rng.uniform(0, span)
            var f =
                rng.uniform(0, 1) < 0.4
                ? Fence.circle(id: "f\(k)", lon: lon, lat: lat, radius: rng.uniform(150, 900))
                : Fence.polygon(id: "f\(k)", exterior: Shapes.star(&rng, lon: lon, lat: lat, radius: rng.uniform(0.002, 0.01), vertices: 12))
            f.group = "g\(k % 3)"
            return f
        }
    }

    /// The answer for every fence, from `status` over every device ever seen.
    func check(_ engine: EventEngine, devices: [String], fences: [String], _ context: String) -> Int {
        var inside = 0
        for fence in fences {
            let expected = UTF8Order.sorted(devices.filter {
                let s = engine.status(device: $0, fence: fence)
                return s == .inside || s == .stayed
            })
            XCTAssertEqual(engine.devices(insideOf: fence), expected, "\(context), fence \(fence)")
            inside += expected.count
        }
        return inside
    }

    func testDevicesInsideAgreeWithEachDevicesStatus() throws {
        var pairsSeen = 0, unknownSeen = 0, pendingSeen = 0
        for seed in UInt64(1)...30 {
            var rng = TestRandom(mixing: seed)
            var settings = EventSettings()
            if seed % 3 == 0 { settings.hysteresisMargin = 40 }
            if seed % 2 == 0 { settings.exitDelay = 60 }
            if seed % 5 == 0 { settings.idleEviction = 400 }
            var engine = try EventEngine(settings: settings)
            var fences = Self.fences(&rng, count: 12)
            _ = engine.add(fences)
            var ids = fences.map(\.id) + ["nowhere"]
            let devices = (0..<300).map { "dev-\(seed)-\($0)" }
            var walks = devices.map { _ in
                RandomWalk(
                    lon: Self.lon0 + rng.uniform(0, Self.span), lat: Self.lat0 + rng.uniform(0, Self.span),
                    heading: rng.uniform(0, 6.28), lon0: Self.lon0, lat0: Self.lat0, span: Self.span)
            }
            var time = 1_700_000_000.0
            for batch in 0..<8 {
                var fixes: [Position] = []
                for _ in 0..<600 {
                    let d = Int(rng.next() % UInt64(devices.count / (batch % 4 == 3 ? 3 : 1)))
                    walks[d].step(&rng, metres: 20...300)
                    time += 1
                    fixes.append(Position(device: devices[d], time: time, lon: walks[d].lon, lat: walks[d].lat, accuracy: rng.uniform(0, 20)))
                }
                _ = engine.evaluate(fixes.shuffled(using: &rng), threads: 1 + Int(seed % 2))
                let context = "seed \(seed) batch \(batch)"
                pairsSeen += check(engine, devices: devices, fences: ids, context)
                for p in engine.partitions {
                    for s in p.states {
                        unknownSeen += s.pairs.filter(\.isUndetermined).count
                        pendingSeen += s.pairs.filter(\.isExitPending).count
                    }
                }
                // An edit between batches: a removal, a reshape, a group removal or a re-add.
                switch batch % 4 {
                case 0:
                    _ = engine.remove(id: fences[batch].id, at: time)
                case 1:
                    var moved = Self.fences(&rng, count: 1)[0]
                    moved.id = fences[(batch + 3) % fences.count].id
                    _ = engine.add([moved])
                case 2:
                    _ = engine.remove(group: "g1", at: time)
                default:
                    fences = Self.fences(&rng, count: 12).map { var f = $0; f.id += "b\(batch)"; return f }
                    _ = engine.add(fences)
                    ids += fences.map(\.id)
                }
                _ = check(engine, devices: devices, fences: ids, context + " after its edit")
            }
            var restored = try EventEngine(store: engine.store, settings: settings)
            XCTAssertEqual(try restored.restore(TrackerSnapshot(decoding: engine.snapshot().encoded())), 0)
            _ = check(restored, devices: devices, fences: ids, "seed \(seed) restored")
        }
        XCTAssertGreaterThan(pairsSeen, 2000)
        XCTAssertGreaterThan(unknownSeen, 50, "pairs left unknown by hysteresis")
        XCTAssertGreaterThan(pendingSeen, 50, "pairs waiting out an exit delay")
    }

    func testUnknownAndEmptyFences() {
        var engine = EventEngine()
        _ = engine.add([.circle(id: "a", lon: 0, lat: 0, radius: 1000), .circle(id: "b", lon: 1, lat: 0, radius: 1000)])
        _ = engine.evaluate([Position(device: "x", time: 1, lon: 0, lat: 0), Position(device: "y", time: 1, lon: 0, lat: 0.001)])
        XCTAssertEqual(engine.devices(insideOf: "a"), ["x", "y"])
        XCTAssertEqual(engine.devices(insideOf: "b"), [])
        XCTAssertEqual(engine.devices(insideOf: "none"), [])
        _ = engine.evaluate([Position(device: "x", time: 2, lon: 1, lat: 0)])
        XCTAssertEqual(engine.devices(insideOf: "a"), ["y"])
        XCTAssertEqual(engine.devices(insideOf: "b"), ["x"])
    }
}
