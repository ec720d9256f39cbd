/// How many devices hold a pair with each fence (inside, stayed, exit pending, or with
/// hysteresis undetermined), by fence key (`FenceStore.slotKey`), and in which of the
/// engine's 64 partitions they may be.
///
/// An edit of a fence no device holds (most of a large store at any moment) then touches no
/// device state, and one a few devices hold reads only their partitions: removing,
/// reshaping or re-masking one fence no longer passes over every device (5-13 ms an edit
/// at 100,000 devices).
///
/// The partition bits are a superset: a partition's bit is set when one of its devices
/// makes a pair, and all bits clear when the count falls to 0 (a bit can stay set for a
/// partition whose devices have all left while others elsewhere remain).
///
/// Exact at all times outside `evaluate`'s apply phase: the workers log their changes per
/// partition (`PairLog`) and the counts take the logs once every partition is done; edits,
/// which run on the caller's thread, log and apply at once. `EventEngine.pairCountsAreExact`
/// recounts from the states (debug builds check it after every batch and edit).
/// - Complexity: 12 bytes a fence key once any device has held a pair with it or a later one.
struct PairCounts: Sendable {
    private var counts: ContiguousArray<Int32> = []
    private var partitionBits: ContiguousArray<UInt64> = []
    /// False once a count went below 0, which only a change that was not logged can cause:
    /// the counts are then not to be used (`EventEngine.trustedPairCounts` recounts), so a
    /// lost log entry costs a pass over the devices, never an event. Debug builds stop at the
    /// next check (`EventEngine.pairCountsCheck`).
    private(set) var trusted = true

    /// Devices holding a pair with the fence of `key`; 0 for a key never counted.
    @inline(__always)
    subscript(key: Int32) -> Int32 { Int(key) < counts.count ? counts[Int(key)] : 0 }

    /// Bit p set when partition p may hold a device with a pair of the fence of `key`; 0 when
    /// no device does.
    @inline(__always)
    func partitions(key: Int32) -> UInt64 { Int(key) < partitionBits.count ? partitionBits[Int(key)] : 0 }

    /// The partitions that may hold a device with a pair of any of these fences.
    func partitions(keys: some Sequence<Int32>) -> UInt64 { keys.reduce(0) { $0 | partitions(key: $1) } }

    /// Applies a log's changes, made in `partition` (needed when the log makes any pair).
    /// - Complexity: O(entries), a random access each.
    mutating func apply(_ log: PairLog, partition: Int? = nil) {
        guard !log.entries.isEmpty else { return }
        var top = 0
        for e in log.entries { top = max(top, Int(e.magnitude)) }
        if top > counts.count {
            let n = max(top, 2 * counts.count)
            counts.append(contentsOf: repeatElement(0, count: n - counts.count))
            partitionBits.append(contentsOf: repeatElement(0, count: n - partitionBits.count))
        }
        let bit: UInt64 = partition.map { 1 << UInt64($0) } ?? 0
        counts.withUnsafeMutableBufferPointer { c in
            partitionBits.withUnsafeMutableBufferPointer { bits in
                for e in log.entries {
                    if e > 0 {
                        precondition(bit != 0, "a pair was made outside a partition's log")
                        c[Int(e) - 1] &+= 1
                        bits[Int(e) - 1] |= bit
                    } else {
                        let k = Int(-e) - 1
                        c[k] &-= 1
                        if c[k] == 0 { bits[k] = 0 }
                        if c[k] < 0 { trusted = false }
                    }
                }
            }
        }
    }

    /// The counts of these devices' pairs, with exact partition bits.
    /// - Complexity: O(devices + pairs).
    init(_ partitions: [DevicePartition]) {
        for (p, partition) in partitions.enumerated() {
            var log = PairLog()
            for state in partition.states { log.entered(state.pairs) }
            apply(log, partition: p)
        }
    }

    init() {}

    /// True when `self` has the counts of `exact` (a recount), and partition bits that hold
    /// its bits and none for a key no device holds.
    func agrees(with exact: PairCounts) -> Bool {
        guard trusted else { return false }
        let n = max(counts.count, exact.counts.count)
        return (0..<n).allSatisfy { k in
            let key = Int32(k)
            let bits = partitions(key: key)
            return self[key] == exact[key] && bits & exact.partitions(key: key) == exact.partitions(key: key)
                && (self[key] != 0 || bits == 0)
        }
    }
}

/// Changes to `PairCounts`, logged where the counts cannot be written (a worker applying one
/// partition) or where several change at once: +(key + 1) for a pair made, -(key + 1) for
/// one dropped.
struct PairLog: Sendable {
    var entries: ContiguousArray<Int32> = []

    @inline(__always)
    mutating func entered(_ key: Int32) { entries.append(key &+ 1) }

    @inline(__always)
    mutating func left(_ key: Int32) { entries.append(-(key &+ 1)) }

    mutating func entered(_ pairs: [PairState]) { for p in pairs { entered(p.fence) } }

    mutating func left(_ pairs: [PairState]) { for p in pairs { left(p.fence) } }

    /// The pairs made and dropped from `before` to `after`, both ascending by fence key
    /// (as `DeviceState.pairs` is), each key at most once.
    /// - Complexity: O(before + after).
    mutating func changed(from before: [PairState], to after: [PairState]) {
        var i = 0
        var j = 0
        while i < before.count || j < after.count {
            if j == after.count || (i < before.count && before[i].fence < after[j].fence) {
                left(before[i].fence)
                i += 1
            } else if i == before.count || after[j].fence < before[i].fence {
                entered(after[j].fence)
                j += 1
            } else {
                i += 1
                j += 1
            }
        }
    }
}
