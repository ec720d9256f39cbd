/// A binary min-heap of (time, id) entries: the earliest time first. Serves the engine's
/// clocks that must find what a time has passed without a scan: devices by last fix
/// (`IdleQueue`) and fences by expiry (`FenceStore.expiryQueue`). Both keep entries lazily
/// (an entry may be stale; its reader checks it against what it stands for).
///
/// Memory: 16 bytes an entry.
struct TimeHeap: Sendable {
    struct Entry: Sendable {
        var time: Double
        var id: Int32
    }

    private(set) var entries: ContiguousArray<Entry> = []

    var count: Int { entries.count }

    /// The entry with the earliest time, if any.
    /// - Complexity: O(1).
    var first: Entry? { entries.first }

    /// - Complexity: O(log n).
    mutating func push(time: Double, id: Int32) {
        entries.append(Entry(time: time, id: id))
        entries.withUnsafeMutableBufferPointer { h in
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
        guard let last = entries.popLast() else { return }
        guard !entries.isEmpty else { return }
        entries.withUnsafeMutableBufferPointer { Self.siftDown($0, last, from: 0) }
    }

    /// Puts `entry` at `i` or below, moving earlier children up, in a heap whose subtrees
    /// below `i` are heaps.
    /// - Complexity: O(log n).
    private static func siftDown(_ h: UnsafeMutableBufferPointer<Entry>, _ entry: Entry, from start: Int) {
        let n = h.count
        var i = start
        while true {
            var child = 2 * i + 1
            if child >= n { break }
            if child + 1 < n && h[child + 1].time < h[child].time { child += 1 }
            guard h[child].time < entry.time else { break }
            h[i] = h[child]
            i = child
        }
        h[i] = entry
    }

    /// Calls `body` with every entry whose time is at or before `time`, in no particular
    /// order, and returns the earliest time of the others (+infinity for none).
    /// - Complexity: O(k) for the k entries visited: those at or before `time` and their
    ///   children (a subtree whose root is later holds nothing earlier).
    func forEach(atOrBefore time: Double, _ body: (Entry) -> Void) -> Double {
        var later = Double.infinity
        guard !entries.isEmpty else { return later }
        var stack: [Int] = [0]
        while let i = stack.popLast() {
            let e = entries[i]
            guard e.time <= time else {
                later = min(later, e.time)
                continue
            }
            body(e)
            if 2 * i + 1 < entries.count { stack.append(2 * i + 1) }
            if 2 * i + 2 < entries.count { stack.append(2 * i + 2) }
        }
        return later
    }

    /// Replaces the entries with these, in O(n) (Floyd's heap construction).
    mutating func rebuild(_ new: ContiguousArray<Entry>) {
        entries = new
        entries.withUnsafeMutableBufferPointer { h in
            guard h.count > 1 else { return }
            for start in stride(from: h.count / 2 - 1, through: 0, by: -1) { Self.siftDown(h, h[start], from: start) }
        }
    }
}
