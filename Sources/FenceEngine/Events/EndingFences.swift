/// The fences a batch's end removes (their `expires` at or before it), and where the devices
/// whose visits they end may be: a batch's end visits only those, instead of every device
/// holding a pair (an audit of a 500k-device fleet with fences expiring throughout: 5.5 times
/// the CPU of the same run without expiries, most of it that pass).
///
/// Read by every worker during the apply phase; made before it.
struct EndingFences: Sendable {
    /// The fences' keys (`FenceStore.slotKey`).
    let keys: [Int32]
    /// Their `DeviceState.keyBit`s: a device whose `heldKeys` miss them all holds no pair of
    /// them.
    let bits: UInt64
    /// The partitions that held a device with a pair of one of them when the batch began
    /// (`PairCounts.partitions`, a superset).
    let partitions: UInt64

    init(keys: [Int32], counts: PairCounts) {
        self.keys = keys
        bits = DeviceState.keyBits(keys)
        partitions = counts.partitions(keys: keys)
    }

    /// Whether partition `p` may hold a device with a pair of one of these fences at the
    /// batch's end: one did when the batch began, or the partition made a pair with one of
    /// them since (`madeThisBatch`, its log for this batch, by key bit).
    /// - Complexity: O(1), or O(entries of the log) when the partition held none at the start.
    func mayBeHeld(inPartition p: Int, madeThisBatch log: PairLog) -> Bool {
        guard bits != 0 else { return false }
        if partitions & (1 << UInt64(p)) != 0 { return true }
        return log.entries.contains { $0 > 0 && bits & DeviceState.keyBit($0 - 1) != 0 }
    }
}
