import FenceEngine
import SeededRandom
import XCTest

@testable import FenceNATS

/// `FixWaves`, the publisher's grouping, against the property workers rely on: for fixes
/// read in time order, no message carries a fix more than one window older than a fix in a
/// message stored before it, so a worker whose lateness is the window drops none.
final class FixWavesTests: XCTestCase {
    /// The messages `fixes` become, in the order they are stored.
    func messages(_ fixes: [Position], window: Double, max: Int = 1000) -> [(device: String, fixes: [Position])] {
        var waves = FixWaves(window: window, maxFixesPerMessage: max)
        var out: [(device: String, fixes: [Position])] = []
        for f in fixes {
            if waves.closesWave(before: f) { out += waves.take() }
            if waves.append(f) { out += waves.take() }
        }
        return out + waves.take()
    }

    /// The largest number of seconds a fix comes after a later fix stored before it,
    /// over the messages of devices other than `skipping`.
    func worstLateness(_ messages: [(device: String, fixes: [Position])], skipping: String? = nil) -> Double {
        var latest = -Double.infinity
        var worst = 0.0
        for m in messages where m.device != skipping {
            for f in m.fixes { worst = Swift.max(worst, latest - f.time) }
            for f in m.fixes { latest = Swift.max(latest, f.time) }
        }
        return worst
    }

    /// A fleet reporting in time order, with one device's clock a day ahead for one fix:
    /// every other device's fixes still go out one window to a message, none later than the
    /// window. (Before, the far window became the latest, no wave closed until a device had
    /// 1,000 fixes buffered, and a partition's messages spanned hours.)
    func testAFixDatedFarAheadHoldsBackNoOtherDevice() {
        for seed in UInt64(1)...8 {
            var rng = SplitMix64(seed: seed)
            let window = 60.0
            var fixes: [Position] = []
            for step in 0..<720 {
                for d in 0..<50 where rng.next() % 3 != 0 {
                    let t = Double(step) * 5 + Double(rng.next() % 5)
                    fixes.append(Position(device: "d\(d)", time: t, lon: 0, lat: 0))
                }
            }
            fixes.sort { $0.time < $1.time }
            let at = Int(rng.next() % UInt64(fixes.count / 2))
            let base = fixes[at].time
            fixes.insert(Position(device: "skewed", time: base + 86_400, lon: 0, lat: 0), at: at)
            fixes.insert(Position(device: "skewed", time: base + 1, lon: 0, lat: 0), at: at + 2)

            let out = messages(fixes, window: window)
            XCTAssertEqual(out.map(\.fixes.count).reduce(0, +), fixes.count, "seed \(seed)")
            XCTAssertLessThan(worstLateness(out, skipping: "skewed"), window, "seed \(seed)")
            for m in out where m.device != "skewed" {
                let windows = Set(m.fixes.map { ($0.time / window).rounded(.down) })
                XCTAssertEqual(windows.count, 1, "seed \(seed): \(m.device) has a message over windows \(windows.sorted())")
            }
            // Each device's fixes keep their input order across its messages.
            var perDevice: [String: [Double]] = [:]
            for m in out { perDevice[m.device, default: []] += m.fixes.map(\.time) }
            for (d, times) in perDevice {
                XCTAssertEqual(times, fixes.filter { $0.device == d }.map(\.time), "seed \(seed) \(d)")
            }
        }
    }

    /// Time-ordered input without outliers: one wave per window, and the message-size cap and
    /// window 0 (one fix per message) still hold.
    func testOrderedInputMakesOneWavePerWindowAndHonoursTheCap() {
        var fixes: [Position] = []
        for t in 0..<600 { for d in 0..<4 { fixes.append(Position(device: "d\(d)", time: Double(t), lon: 0, lat: 0)) } }
        let out = messages(fixes, window: 60)
        XCTAssertEqual(out.count, 40)
        XCTAssertEqual(Set(out.map(\.fixes.count)), [60])
        XCTAssertEqual(worstLateness(out), 59)
        let capped = messages(fixes, window: 60, max: 25)
        XCTAssertEqual(capped.map(\.fixes.count).max(), 25)
        XCTAssertEqual(capped.flatMap(\.fixes).count, fixes.count)
        XCTAssertLessThan(worstLateness(capped), 60)
        let single = messages(fixes, window: 0)
        XCTAssertEqual(single.count, fixes.count)
        XCTAssertEqual(single.flatMap(\.fixes).map(\.time), fixes.map(\.time))
    }
}
