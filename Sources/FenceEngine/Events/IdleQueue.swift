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
    struct Entry: Sendable {
        var time: Double
        var device: Int32
    }

    private(set) var heap: ContiguousArray<Entry> = []
    /// Devices below this index have their entry (unless dormant).
    private(set) var covered = 0

    var count: Int { heap.count }
    /// Entries removed so far (`removeFirst`): what eviction has read, for the tests.
    private(set) var popped = 0

    /// The entry with the earliest time, if any.
    /// - Complexity: O(1).
    var first: Entry? { heap.first }

    /// Pushes an entry for every device from `covered` up to `states.count`, at its last fix.
    /// - Complexity: O(k log n) for k new devices.
    mutating func catchUp(_ states: ContiguousArray<DeviceState>) {
        guard covered < states.count else { return }
        for d in covered..<states.count { push(time: states[d].lastTime, device: Int32(d)) }
        covered = states.count
    }

    /// Gives a revived (dormant until now) device an entry, when the queue covers it.
    /// - Complexity: O(log n).
    mutating func revive(_ d: Int32) {
        if Int(d) < covered { push(time: -.infinity, device: d) }
    }

    /// - Complexity: O(log n).
    mutating func push(time: Double, device: Int32) {
        heap.append(Entry(time: time, device: device))
        heap.withUnsafeMutableBufferPointer { h in
            var i = h.count - 1
            let e = h[i]
            while i > 0 {
                let parent = (i - 1) / 2
                guard e.time < h[parent].time else { break }
                h[i] = h[parent]
                i = parent
            }
            h[i] = e
        }
    }

    /// Removes the entry with the earliest time.
    /// - Complexity: O(log n).
    mutating func removeFirst() {
        popped &+= 1
        guard let last = heap.popLast() else { return }
        guard !heap.isEmpty else { return }
        heap.withUnsafeMutableBufferPointer { h in
            let n = h.count
            var i = 0
            while true {
                var child = 2 * i + 1
                if child >= n { break }
                if child + 1 < n && h[child + 1].time < h[child].time { child += 1 }
                guard h[child].time < last.time else { break }
                h[i] = h[child]
                i = child
            }
            h[i] = last
        }
    }
}
