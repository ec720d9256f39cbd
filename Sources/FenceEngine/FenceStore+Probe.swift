import SpatialIndex

/// What the index alone finds for a batch: the ceiling of the containment design.
public struct ProbeResult: Sendable {
    /// Index entries whose box holds a position, summed over the batch.
    public var candidates: Int
}

extension FenceStore {
    /// Runs only the R-tree probe of `covering` over a batch: the same spatial ordering, the
    /// same chunks and workers, the same walk into the same candidate slab (`findCandidates`),
    /// but no exact test, no prefetch of records, no result lists and no state. The time this
    /// takes is the limit the full pipeline can approach.
    /// - Complexity: O(m log n) for m positions, spread over `threads` workers.
    public func probe(_ positions: UnsafeBufferPointer<LonLat>, threads: Int = FenceStore.defaultThreads) -> ProbeResult {
        let m = positions.count
        let (_, sorted) = SpatialOrder.sorted(positions, threads: threads)
        let chunkSize = 4096
        let chunks = (m + chunkSize - 1) / chunkSize
        var perChunk = [Int](repeating: 0, count: chunks)
        perChunk.withUnsafeMutableBufferPointer { buffer in
            nonisolated(unsafe) let perChunk = buffer
            Parallel.forEachChunk(count: m, chunkSize: chunkSize, threads: threads, makeState: { () }) { _, c, range in
                var found = 0
                tree.withPointQuerier { querier in
                    var slab = CandidateSlab()
                    defer { slab.deallocate() }
                    for k in range {
                        _ = findCandidates(sorted[k], coord: .wgs84, querier: querier, into: &slab)
                        found &+= slab.count
                    }
                }
                perChunk[c] = found
            }
        }
        return ProbeResult(candidates: perChunk.reduce(0, +))
    }

    /// Mean index nodes a candidate query enters over a sample, on one thread (from the cell
    /// grid's listed nodes when the index has its grid).
    public func meanNodesVisited(_ positions: [LonLat]) -> Double {
        guard !positions.isEmpty else { return 0 }
        let total = tree.withPointQuerier { q in positions.reduce(0) { $0 + q.nodesEntered(x: $1.lon, y: $1.lat) } }
        return Double(total) / Double(positions.count)
    }

    /// Gives the index back its cell grid (which point queries start from) when edits since the
    /// last bulk load dropped it and the queries since then pay for it: at least a quarter as
    /// many positions as indexed boxes, counted over every call since the grid went (this
    /// batch's `positions` included). So a stream of small batches with an edit now and then
    /// gets the grid back after a quarter of the store's size in positions, instead of
    /// querying from the root until a single batch that large comes. The grid then stays
    /// until the next edit. Queries are correct with or without it.
    /// - Complexity: O(n) for n fences when it builds (about 25 ms per million), else O(1).
    public mutating func prepareIndex(forQueries positions: Int) {
        guard !tree.hasCellIndex else {
            queriesWithoutGrid = 0
            return
        }
        queriesWithoutGrid += max(0, positions)
        guard queriesWithoutGrid >= count / 4 else { return }  // fences, not index entries
        tree.buildCellIndex()
        queriesWithoutGrid = 0
    }

    /// Whether point queries start from the index's cell grid.
    public var indexHasCellGrid: Bool { tree.hasCellIndex }
}
