import FenceEngine

/// The fixes a partition holds until its horizon passes them, in buckets of event time, so
/// that releasing a step's worth reads that step's fixes and not every fix held.
///
/// A bucket holds the fixes whose time falls in one `width` of event time, in arrival order,
/// with their messages' stream sequences (non-decreasing: fixes arrive in stream order) and
/// their least and greatest time. `take(before:)` hands over whole buckets whose greatest time is due,
/// splits the one or two that straddle the limit (exactly, by each fix's time), and leaves the
/// rest untouched: O(buckets + fixes released + fixes in the split buckets), where one pass
/// over every held fix per release was O(held), about lateness / step times the fixes
/// released.
///
/// What is released comes bucket by bucket in time order, each in arrival order: a device's
/// fixes of equal time keep their arrival order (which decides which is the duplicate), and
/// `EventEngine.evaluate` orders each device's fixes by time itself.
struct HeldFixes: Sendable {
    struct Bucket: Sendable {
        var fixes: [Position] = []
        /// The stream sequence of each fix's message: non-decreasing (arrival order).
        var sequences: [UInt64] = []
        var minTime = Double.infinity
        var maxTime = -Double.infinity

        mutating func append(_ fix: Position, sequence: UInt64) {
            fixes.append(fix)
            sequences.append(sequence)
            minTime = min(minTime, fix.time)
            maxTime = max(maxTime, fix.time)
        }
    }

    private var buckets: [Int64: Bucket] = [:]
    /// Seconds of event time per bucket (> 0).
    let width: Double
    /// Fixes held.
    private(set) var count = 0

    /// Buckets of `width` seconds, at least 1 (a bucket per fix for a tiny step would cost more
    /// than the list it replaces; the split of a straddling bucket is exact at any width).
    init(width: Double) {
        self.width = width.isFinite ? max(1, width) : 1
    }

    /// The bucket of a time: monotonic in it (floor of a division by a positive width, clamped
    /// to what Int64 holds).
    @inline(__always)
    func bucket(_ t: Double) -> Int64 {
        let q = (t / width).rounded(.down)
        return Int64(min(9.0e18, max(-9.0e18, q)))
    }

    /// Holds a fix (finite time) that arrived in the message at `sequence`.
    /// - Complexity: O(1) amortised.
    mutating func append(_ fix: Position, sequence: UInt64) {
        count += 1
        // One lookup: the bucket is modified in place.
        buckets[bucket(fix.time), default: Bucket()].append(fix, sequence: sequence)
    }

    /// Removes and returns every held fix with time before `limit` (+infinity: all of them),
    /// bucket by bucket in time order, each bucket's in arrival order.
    mutating func take(before limit: Double) -> [Position] {
        let due = buckets.compactMap { $0.value.minTime < limit ? $0.key : nil }.sorted()
        var out: [Position] = []
        for b in due {
            let bucket = buckets.removeValue(forKey: b)!
            if bucket.maxTime < limit {
                out += bucket.fixes
                count -= bucket.fixes.count
                continue
            }
            // Straddles the limit: the due fixes go, the others stay in arrival order.
            var kept = Bucket()
            for (fix, sequence) in zip(bucket.fixes, bucket.sequences) {
                if fix.time < limit {
                    out.append(fix)
                    count -= 1
                } else {
                    kept.append(fix, sequence: sequence)
                }
            }
            buckets[b] = kept
        }
        return out
    }

    /// The stream sequence of the oldest message with a held fix; nil when none is held.
    var oldestSequence: UInt64? { buckets.values.compactMap(\.sequences.first).min() }
}
