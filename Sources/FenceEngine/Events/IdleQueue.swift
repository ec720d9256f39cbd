/// A partition's devices by the time of their last fix, earliest first, so that idle eviction
/// (`EventEngine.evictIdle`) reads only the devices that may be idle instead of scanning every
/// device at every batch's end (an audit: 100,000 devices fed 100 fixes a batch spent 1.1 of
/// 2.6 s on that scan).
///
/// A binary min-heap of (time, device) entries, kept lazily: each live device below `covered`
/// has exactly one entry, whose time is at most its last fix's (fixes only move a device's
/// last fix later). An entry found old enough to be idle is checked against the device's own
/// state: evicted, or pushed again with its current time. A device reporting more often than
/// the eviction time is thus read about once an eviction time, not once a batch.
///
/// Devices at `covered` and above (added since the queue last caught up) have none yet; a
/// dormant device has none (its entry went when it was evicted) until it is revived, which
/// pushes one at -infinity. A rebuilt partition (`dropDormant`) starts a new queue.
///
/// Memory: 16 bytes a device held, only once eviction has run on the partition.
struct IdleQueue: Sendable {
    private(set) var heap = TimeHeap()
    /// Devices below this index have their entry (unless dormant).
    private(set) var covered = 0

    var count: Int { heap.count }
    /// Entries removed so far (`removeFirst`): what eviction has read, for the tests.
    private(set) var popped = 0

    /// The entry with the earliest time (`id` is the device), if any.
    /// - Complexity: O(1).
    var first: TimeHeap.Entry? { heap.first }

    /// Pushes an entry for every device from `covered` up to `states.count`, at its last fix.
    /// - Complexity: O(k log n) for k new devices.
    mutating func catchUp(_ states: ContiguousArray<DeviceState>) {
        guard covered < states.count else { return }
        for d in covered..<states.count { heap.push(time: states[d].lastTime, id: Int32(d)) }
        covered = states.count
    }

    /// Gives a revived (dormant until now) device an entry, when the queue covers it. Out of
    /// line: it is called from `DevicePartition.intern`, which is inlined into every fix's apply.
    /// - Complexity: O(log n).
    @inline(never)
    mutating func revive(_ d: Int32) {
        if Int(d) < covered { heap.push(time: -.infinity, id: d) }
    }

    /// - Complexity: O(log n).
    mutating func push(time: Double, device: Int32) { heap.push(time: time, id: device) }

    /// Removes the entry with the earliest time.
    /// - Complexity: O(log n).
    mutating func removeFirst() {
        popped &+= 1
        heap.removeFirst()
    }
}
