extension EventEngine {
    /// Events in output order. A list already in time order (a live feed's is, but for the
    /// events of one fix, which come in fence-key order) only has its runs of equal times
    /// sorted, in place. Times are taken as written (`FenceEvent.outputMillisecond`).
    /// Otherwise small (time, index) keys are sorted and the records gathered once: several
    /// times faster than sorting the records themselves, which moves about 100 bytes and
    /// retains three strings per step. Ties in time fall back to the full order.
    /// - Complexity: O(e) plus the ties' sorts when in time order, O(e log e) otherwise.
    ///
    /// The list is taken, not copied: pass it with `consume` (or as a temporary) and a list
    /// in time order is sorted in its own storage.
    static func sorted(_ events: consuming [FenceEvent]) -> [FenceEvent] {
        var out = consume events
        let timeOrdered = out.withUnsafeBufferPointer { e -> Bool in
            var k = 1
            while k < e.count {
                if FenceEvent.outputMillisecond(e[k].time) < FenceEvent.outputMillisecond(e[k - 1].time) { return false }
                k += 1
            }
            return true
        }
        if timeOrdered {
            out.withUnsafeMutableBufferPointer { e in
                var lo = 0
                while lo < e.count {
                    var hi = lo + 1
                    let ms = FenceEvent.outputMillisecond(e[lo].time)
                    while hi < e.count && FenceEvent.outputMillisecond(e[hi].time) == ms { hi += 1 }
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
        var keys = events.indices.map { (FenceEvent.outputMillisecond(events[$0].time), Int32($0)) }
        keys.sort { a, b in
            if a.0 != b.0 { return a.0 < b.0 }
            return events[Int(a.1)] < events[Int(b.1)]
        }
        return keys.map { events[Int($0.1)] }
    }

    /// All events in output order from per-partition lists, each already sorted. Small keys
    /// (time as written, list, index) are made on the workers, each list's at its offset, and sorted. Ties
    /// in time fall back to the full order. Lists already sorted make runs the standard
    /// library's merge sort only interleaves: O(e log k) for k lists instead of O(e log e).
    ///
    /// With two or more workers and enough events, the keys are sorted in two halves, one a
    /// worker (otherwise as one run, an empty second half). The merged order is then found in
    /// one part a worker: each part starts where a merge of the halves would be after that many
    /// events, found by binary search. Last, each event is moved into its final place, again in
    /// one part a worker, so nothing runs on one thread.
    ///
    /// The events are moved, not copied, out of the lists, which are left empty: a copy retains
    /// each record's device and fence ids and freeing the lists releases them again, each a
    /// cache miss on the id's storage when ids are longer than 15 bytes (UUIDs, most real fleet
    /// and fence ids).
    static func mergeSorted(_ lists: inout [[FenceEvent]], threads: Int) -> [FenceEvent] {
        // (time as written, the device id's first 8 bytes, list << 32 | index). Times tie
        // within a millisecond (several fixes a millisecond in a large fleet), and a tie that
        // reads both records costs two cache misses; the device prefix settles most of them
        // (events of one millisecond in different lists are of different devices).
        typealias Key = (time: Double, prefix: UInt64, ref: UInt64)
        var starts = [Int](repeating: 0, count: lists.count + 1)
        for (l, list) in lists.enumerated() { starts[l + 1] = starts[l] + list.count }
        let total = starts[lists.count]
        // Each list's storage, made unique first (a list may share it with a copy the caller
        // keeps): read through for the keys and ties, and moved from below. Its address is
        // kept past the closure that gives it, which the standard library does not promise
        // to honour in general; it holds here because nothing touches `lists` between this
        // line and freeing them, and a unique array's storage moves only when it is changed.
        var sources = [UnsafeMutablePointer<FenceEvent>?](repeating: nil, count: lists.count)
        for l in lists.indices { sources[l] = lists[l].withUnsafeMutableBufferPointer { $0.baseAddress } }
        nonisolated(unsafe) let records = sources
        @inline(__always) func record(_ ref: UInt64) -> UnsafeMutablePointer<FenceEvent> {
            records[Int(ref >> 32)]! + Int(ref & 0xFFFF_FFFF)
        }
        // Only times and device ids are read: iterating the events themselves would copy each record.
        var keys = [Key](unsafeUninitializedCapacity: total) { buffer, initialized in
            nonisolated(unsafe) let keys = buffer
            Parallel.forEachChunk(count: lists.count, chunkSize: 1, threads: threads, makeState: { () }) { _, l, _ in
                for i in 0..<(starts[l + 1] - starts[l]) {
                    let ref = UInt64(l) << 32 | UInt64(i)
                    let e = record(ref)
                    keys[starts[l] + i] = (FenceEvent.outputMillisecond(e.pointee.time), UTF8Order.prefix(e.pointee.device), ref)
                }
            }
            initialized = total
        }
        func less(_ a: Key, _ b: Key) -> Bool {
            if a.time != b.time { return a.time < b.time }
            if a.prefix != b.prefix { return a.prefix < b.prefix }
            return record(a.ref).pointee < record(b.ref).pointee
        }
        let halves = threads > 1 && total > 65_536
        let half = halves ? total / 2 : total
        keys.withUnsafeMutableBufferPointer { buffer in
            nonisolated(unsafe) let keys = buffer
            Parallel.forEachChunk(count: 2, chunkSize: 1, threads: halves ? 2 : 1, makeState: { () }) { _, c, _ in
                var part = UnsafeMutableBufferPointer(rebasing: keys[c == 0 ? 0..<half : half..<total])
                part.sort(by: less)
            }
        }
        // The merged order first, on the workers: each part merges its share of the output.
        // Ties compare the records themselves, so nothing is moved until every part is done.
        var order = [UInt64](unsafeUninitializedCapacity: total) { buffer, initialized in
            nonisolated(unsafe) let order = buffer.baseAddress!
            keys.withUnsafeBufferPointer { buffer in
                nonisolated(unsafe) let keys = buffer
                // The merge takes the first half's key on ties (as a stable merge does). How
                // many of the first half's keys are among the first `d` merged: the least `i`
                // whose next key does not go before the other half's last one taken.
                func split(_ d: Int) -> Int {
                    var lo = max(0, d - (total - half))
                    var hi = min(d, half)
                    while lo < hi {
                        let i = (lo + hi) / 2
                        let j = d - i
                        if j > 0 && i < half && !less(keys[half + j - 1], keys[i]) { lo = i + 1 } else { hi = i }
                    }
                    return lo
                }
                let parts = max(1, threads)
                Parallel.forEachChunk(count: parts, chunkSize: 1, threads: threads, makeState: { () }) { _, c, _ in
                    let first = c * total / parts
                    let end = (c + 1) * total / parts
                    var i = split(first)
                    var j = half + first - i
                    for d in first..<end {
                        let key: Key
                        if j < total && (i == half || less(keys[j], keys[i])) {
                            key = keys[j]
                            j += 1
                        } else {
                            key = keys[i]
                            i += 1
                        }
                        order[d] = key.ref
                    }
                }
            }
            initialized = total
        }
        keys = []
        // Then each event moved once, into its final place, on the workers. Where it was, a
        // placeholder whose ids are small strings (nothing to release) is left, until the
        // lists are freed below.
        let placeholder = FenceEvent(time: 0, device: "", fence: "", kind: .enter, lon: 0, lat: 0)
        let merged = [FenceEvent](unsafeUninitializedCapacity: total) { buffer, initialized in
            nonisolated(unsafe) let out = buffer.baseAddress!
            nonisolated(unsafe) let sources = sources
            order.withUnsafeBufferPointer { buffer in
                nonisolated(unsafe) let order = buffer
                let parts = max(1, threads)
                Parallel.forEachChunk(count: parts, chunkSize: 1, threads: threads, makeState: { () }) { _, c, _ in
                    for d in (c * total / parts)..<((c + 1) * total / parts) {
                        let source = sources[Int(order[d] >> 32)]! + Int(order[d] & 0xFFFF_FFFF)
                        (out + d).moveInitialize(from: source, count: 1)
                        source.initialize(to: placeholder)
                    }
                }
            }
            initialized = total
        }
        order = []
        // Freed on the workers, not one list after another on this thread.
        lists.withUnsafeMutableBufferPointer { buffer in
            nonisolated(unsafe) let lists = buffer
            Parallel.forEachChunk(count: lists.count, chunkSize: 1, threads: threads, makeState: { () }) { _, l, _ in lists[l] = [] }
        }
        return merged
    }
}
