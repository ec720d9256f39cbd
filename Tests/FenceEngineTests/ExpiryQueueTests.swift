@testable import FenceEngine
import XCTest

/// The store finds expired fences through `expiryQueue` (fences by expiry, stale entries
/// checked when read) instead of reading every slot. The oracle: the fences the store holds,
/// each asked for its `expires`.
final class ExpiryQueueTests: XCTestCase {
    /// The ids an independent pass over the stored fences finds expired at `time`.
    func oracle(_ store: FenceStore, _ time: Double) -> [String] {
        UTF8Order.sorted(store.ids.filter { id in store.fence(id: id)!.expires.map { $0 <= time } ?? false })
    }

    /// Random adds (one by one and in bulk, into an empty store and a full one), replacements
    /// with a new, the same or no expiry, removals (by id and group), keys reused, and
    /// removals of expired fences at a clock moving forward: `expired(asOf:)` at several
    /// times equals the oracle after each step, what `removeExpired` removes equals it, and the
    /// queue stays within twice the expiring fences plus 1,025.
    func testExpiredFencesAreTheOraclesThroughAddsReplacementsAndRemovals() {
        for seed in 1...6 as ClosedRange<UInt64> {
            var rng = TestRandom(mixing: seed)
            var store = FenceStore()
            var clock = 0.0
            var next = 0
            func fence(_ id: String) -> Fence {
                var f = Fence.circle(id: id, lon: rng.uniform(0, 1), lat: rng.uniform(0, 1), radius: 500)
                if rng.chance(0.7) { f.expires = clock + rng.uniform(0, 500).rounded() }
                if rng.chance(0.2) { f.group = "g\(rng.int(0...3))" }
                return f
            }
            var removedTotal = 0
            for step in 0..<300 {
                let context = "seed \(seed), step \(step)"
                switch rng.int(0...9) {
                case 0...2:
                    // A batch of new fences: in bulk (over 64, more than half the store) or not.
                    let n = rng.chance(0.3) && store.count < 400 ? max(65, store.count / 2 + 1) : rng.int(1...20)
                    let batch = (0..<n).map { _ -> Fence in
                        next += 1
                        return fence("f\(next)")
                    }
                    XCTAssertTrue(store.add(batch, threads: 2).allSatisfy { $0.error == nil }, context)
                case 3...4:
                    // Replacements of stored fences: a new expiry, the same one, or none.
                    let ids = Array(store.ids).sorted().prefix(rng.int(1...10))
                    let batch = ids.map { id -> Fence in
                        var f = fence(id)
                        let old = store.fence(id: id)!.expires
                        switch rng.int(0...2) {
                        case 0: f.expires = old
                        case 1: f.expires = nil
                        default: break
                        }
                        return f
                    }
                    XCTAssertTrue(store.add(batch, threads: 1).allSatisfy { $0.error == nil }, context)
                case 5:
                    for id in Array(store.ids).sorted().prefix(rng.int(1...15)) { store.remove(id: id) }
                case 6:
                    store.remove(group: "g\(rng.int(0...3))")
                default:
                    clock += rng.uniform(0, 60).rounded()
                    let expected = oracle(store, clock)
                    let removed = store.removeExpired(asOf: clock)
                    XCTAssertEqual(removed, expected, context)
                    removedTotal += removed.count
                    XCTAssertEqual(oracle(store, clock), [], context)
                }
                for t in [clock, clock + 30, clock + 250, clock + 1_000] {
                    XCTAssertEqual(store.expired(asOf: t), oracle(store, t), "\(context), at \(t)")
                }
                XCTAssertLessThanOrEqual(store.expiryQueue.count, 2 * store.expiringCount + 1_025, context)
                XCTAssertLessThanOrEqual(store.earliestExpiry, store.ids.compactMap { store.fence(id: $0)!.expires }.min() ?? .infinity, context)
            }
            XCTAssertGreaterThan(removedTotal, 100, "seed \(seed): too few expiries to check")
        }
    }

    /// A fence replaced many times with a later expiry leaves stale entries; the queue is
    /// rebuilt before they pass twice the expiring fences plus 1,024, and finds only the
    /// current expiry.
    func testReplacementsDoNotGrowTheQueueWithoutBound() {
        var store = FenceStore()
        for k in 0..<10_000 {
            var f = Fence.circle(id: "renewed", lon: 0, lat: 0, radius: 100)
            f.expires = 1_000 + Double(k)
            XCTAssertNoThrow(try store.add(f))
            XCTAssertLessThanOrEqual(store.expiryQueue.count, 2 * store.expiringCount + 1_025)
        }
        XCTAssertEqual(store.expired(asOf: 10_998), [])
        XCTAssertEqual(store.expired(asOf: 10_999), ["renewed"])
        XCTAssertEqual(store.removeExpired(asOf: 10_999), ["renewed"])
        XCTAssertEqual(store.count, 0)
    }
}
