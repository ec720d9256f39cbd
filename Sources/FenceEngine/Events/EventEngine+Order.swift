extension EventEngine {
    /// Events in output order. A list already in time order (a live feed's is, but for the
    /// events of one fix, which come in fence-key order) only has its runs of equal times
    /// sorted, in place. Otherwise small (time, index) keys are sorted and the records
    /// gathered once: several times faster than sorting the records themselves, which moves
    /// about 100 bytes and retains three strings per step. Ties in time fall back to the full
    /// order.
    /// - Complexity: O(e) plus the ties' sorts when in time order, O(e log e) otherwise.
    ///
    /// The list is taken, not copied: pass it with `consume` (or as a temporary) and a list
    /// in time order is sorted in its own storage.
    static func sorted(_ events: consuming [FenceEvent]) -> [FenceEvent] {
        var out = consume events
        let timeOrdered = out.withUnsafeBufferPointer { e -> Bool in
            var k = 1
            while k < e.count {
                if e[k].time < e[k - 1].time { return false }
                k += 1
            }
            return true
        }
        if timeOrdered {
            out.withUnsafeMutableBufferPointer { e in
                var lo = 0
                while lo < e.count {
                    var hi = lo + 1
                    while hi < e.count && e[hi].time == e[lo].time { hi += 1 }
                    if hi - lo > 1 {
                        var run = UnsafeMutableBufferPointer(rebasing: e[lo..<hi])
                        run.sort()
                    }
                    lo = hi
                }
            }
            return out
        }
        let events = out
        var keys = events.indices.map { (events[$0].time, Int32($0)) }
        keys.sort { a, b in
            if a.0 != b.0 { return a.0 < b.0 }
            return events[Int(a.1)] < events[Int(b.1)]
        }
        return keys.map { events[Int($0.1)] }
    }

    /// All events in output order from per-partition lists. Small keys (time, list, index)
    /// are sorted, in two halves on two workers and then merged, and the events are copied
    /// once, into their final place; ties in time fall back to the full order. Lists already
    /// sorted make runs the standard library's merge sort only interleaves: O(e log k) for
    /// k lists instead of O(e log e).
    static func mergeSorted(_ lists: [[FenceEvent]], threads: Int) -> [FenceEvent] {
        typealias Key = (time: Double, list: UInt32, index: UInt32)
        var keys: [Key] = []
        keys.reserveCapacity(lists.reduce(0) { $0 + $1.count })
        for (l, list) in lists.enumerated() {
            // Only the time is read: iterating the events themselves would copy each record.
            list.withUnsafeBufferPointer { events in
                for i in events.indices { keys.append((events[i].time, UInt32(l), UInt32(i))) }
            }
        }
        func less(_ a: Key, _ b: Key) -> Bool {
            if a.time != b.time { return a.time < b.time }
            return lists[Int(a.list)][Int(a.index)] < lists[Int(b.list)][Int(b.index)]
        }
        if threads > 1 && keys.count > 65_536 {
            let half = keys.count / 2
            keys.withUnsafeMutableBufferPointer { buffer in
                nonisolated(unsafe) let keys = buffer
                Parallel.forEachChunk(count: 2, chunkSize: 1, threads: 2, makeState: { () }) { _, c, _ in
                    let range = c == 0 ? 0..<half : half..<keys.count
                    var part = UnsafeMutableBufferPointer(rebasing: keys[range])
                    part.sort(by: less)
                }
            }
            var merged: [Key] = []
            merged.reserveCapacity(keys.count)
            var i = 0
            var j = half
            while i < half && j < keys.count {
                if less(keys[j], keys[i]) {
                    merged.append(keys[j])
                    j += 1
                } else {
                    merged.append(keys[i])
                    i += 1
                }
            }
            merged.append(contentsOf: keys[i..<half])
            merged.append(contentsOf: keys[j...])
            keys = merged
        } else {
            keys.sort(by: less)
        }
        // Each event copied once, into its final place, on the workers.
        return [FenceEvent](unsafeUninitializedCapacity: keys.count) { buffer, initialized in
            nonisolated(unsafe) let out = buffer.baseAddress!
            keys.withUnsafeBufferPointer { keys in
                Parallel.forEachChunk(count: keys.count, chunkSize: 32_768, threads: threads, makeState: { () }) { _, _, range in
                    for k in range { (out + k).initialize(to: lists[Int(keys[k].list)][Int(keys[k].index)]) }
                }
            }
            initialized = keys.count
        }
    }
}
