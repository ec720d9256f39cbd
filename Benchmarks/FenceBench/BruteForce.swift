import FenceEngine

/// The benchmark's correctness gate: every fence checked for every position, no index.
enum BruteForce {
    static func covering(store: FenceStore, _ positions: [LonLat]) -> Coverage {
        var offsets = ContiguousArray<Int>([0])
        var handles = ContiguousArray<FenceHandle>()
        let all = store.allHandles()
        for p in positions {
            for h in all where store.fence(h, covers: p) { handles.append(h) }
            offsets.append(handles.count)
        }
        return Coverage(offsets: offsets, handles: handles)
    }
}
