import CPrefetch
import SpatialIndex

/// Per-position fence lists for a batch, in compressed rows: the fences covering position `i`
/// are `handles[offsets[i] ..< offsets[i + 1]]`, ascending.
public struct Coverage: Sendable {
    public var offsets: ContiguousArray<Int>
    public var handles: ContiguousArray<FenceHandle>
    /// The fences' stable keys (`FenceStore.slotKey`), beside `handles`, when asked for
    /// (`covering(_:coord:threads:keys:)`); empty otherwise.
    var keys: ContiguousArray<Int32> = []

    /// Number of positions.
    public var count: Int { offsets.count - 1 }

    /// The fences covering position `i`, ascending by handle.
    public subscript(i: Int) -> ArraySlice<FenceHandle> { handles[offsets[i]..<offsets[i + 1]] }

    /// Total (position, fence) pairs.
    public var pairCount: Int { handles.count }

    public init(offsets: ContiguousArray<Int>, handles: ContiguousArray<FenceHandle>) {
        self.offsets = offsets
        self.handles = handles
    }
}

/// What the index hands the exact tests, measured over a sample of positions.
public struct ProbeStatistics: Sendable {
    /// Index entries whose box holds the position, per position.
    public var candidatesPerPosition: Double
    /// Fences that cover the position, per position.
    public var hitsPerPosition: Double
    /// Polygon tests the fast filter could not decide, which GEOS decided, per position.
    public var geosCallsPerPosition: Double
}

/// What one worker reuses from position to position: no allocation per position once warm.
struct ContainmentScratch {
    var candidates = ContiguousArray<Int32>()
    /// Made on first need: only positions the fast filters cannot decide reach GEOS.
    var geos: GEOSContext?
    /// Candidates examined (for the benchmark's candidates-per-position figure).
    var candidateCount = 0
    /// Times GEOS decided a polygon test.
    var geosCalls = 0

    /// The polygons GEOS was asked about, built and prepared in `geos`, by slot. A position
    /// the fast filters leave undecided lies within about 1e-15 of an edge, and its neighbours
    /// often do too (fixes snapped to a road that is a boundary, points along one edge): each
    /// polygon is then built and prepared once per worker, not once per position, which cost
    /// 2.6 ms a position on a 100,000-vertex polygon. A scratch serves one store value and is
    /// never kept across an edit (a slot may then hold another fence). At most `preparedLimit`
    /// polygons and `preparedPositionLimit` positions in all are kept; past either, polygons
    /// leave one at a time by the clock rule (second chance: the hand passes over a polygon
    /// used since its last pass, and drops the first one not used), so a working set a little
    /// larger than the limit (`cross` over 8,000 polygons against 4,096 kept) loses a few
    /// polygons a miss instead of all of them.
    private var prepared: [Int32: Int] = [:]
    /// The kept polygons in clock order; `prepared` maps a slot to its place here. A place
    /// whose geometry is nil is free.
    private var clock: [KeptPolygon] = []
    private var hand = 0
    private(set) var preparedPositions = 0
    /// Polygons built and prepared in GEOS so far (each slot once while it is kept).
    private(set) var preparations = 0
    var preparedCount: Int { prepared.count }
    var preparedLimit = 4096
    var preparedPositionLimit = 4_000_000

    private struct KeptPolygon {
        var slot: Int32
        var geometry: GEOSPreparedGeometry?
        var positions: Int
        var used: Bool
    }

    init() { candidates.reserveCapacity(64) }

    mutating func context() -> GEOSContext {
        if let geos { return geos }
        let made = GEOSContext()
        geos = made
        return made
    }

    /// The GEOS prepared geometry of the polygon fence in `slot` of `store`, made in this
    /// scratch's context on first need and kept (see `prepared`). Nil when GEOS cannot build it.
    /// - Complexity: O(1) when kept; otherwise O(v) to build it, and GEOS indexes it on first
    ///   use, plus amortized O(1) clock steps to make room.
    mutating func preparedGeometry(slot: Int32, in store: FenceStore) -> GEOSPreparedGeometry? {
        if let place = prepared[slot] {
            clock[place].used = true
            return clock[place].geometry
        }
        let context = context()
        guard let (made, positions) = store.preparedGeometry(slot: slot, context: context) else { return nil }
        // One polygon over the whole budget is used and not kept.
        if positions > preparedPositionLimit || preparedLimit <= 0 { return made }
        var place = -1
        if prepared.count < preparedLimit && preparedPositions + positions <= preparedPositionLimit && clock.count < preparedLimit {
            place = clock.count
            clock.append(KeptPolygon(slot: slot, geometry: made, positions: positions, used: false))
        } else {
            place = makeRoom(for: positions)
            clock[place] = KeptPolygon(slot: slot, geometry: made, positions: positions, used: false)
        }
        prepared[slot] = place
        preparedPositions += positions
        preparations += 1
        return made
    }

    /// Drops kept polygons by the clock rule until one more of `positions` fits both limits,
    /// and returns a free place for it. Each pass of the hand clears the `used` marks it meets,
    /// so it stops within two turns.
    private mutating func makeRoom(for positions: Int) -> Int {
        var free = -1
        while true {
            if free >= 0 && prepared.count < preparedLimit && preparedPositions + positions <= preparedPositionLimit { return free }
            let k = hand
            hand = hand + 1 == clock.count ? 0 : hand + 1
            if clock[k].geometry == nil {
                if free < 0 { free = k }
            } else if clock[k].used {
                clock[k].used = false
            } else {
                prepared[clock[k].slot] = nil
                preparedPositions -= clock[k].positions
                clock[k].geometry = nil
                if free < 0 { free = k }
            }
        }
    }
}

extension FenceStore {
    /// The fences covering one position (boundary included), ascending by handle.
    ///
    /// Circles: geodesic distance on the WGS84 ellipsoid. Polygons: GEOS `covers` semantics.
    /// - Parameters:
    ///   - position: the point, in `coord`.
    ///   - time: when given, fences that have expired by then (`hasExpired`) are not there, as
    ///     in `nearestBoundary(at:)` and the event engine; without it every stored fence counts
    ///     (a store drops expired fences only when told: `removeExpired`, or the event
    ///     engine at a batch's end).
    /// - Complexity: O(log n + k·v) for k candidates of v vertices each.
    public func fences(covering position: LonLat, coord: CoordinateSystem = .wgs84, at time: Double? = nil) -> [FenceHandle] {
        var scratch = ContainmentScratch()
        var slab = CandidateSlab()
        defer { slab.deallocate() }
        var out = ContiguousArray<FenceHandle>()
        tree.withPointQuerier { appendCovering(position, coord: coord, querier: $0, slab: &slab, scratch: &scratch, into: &out) }
        if let time, expiringCount > 0 { out.removeAll { hasExpired($0, at: time) } }
        return Array(out)
    }

    /// The ids of the fences covering one position, ascending by id (`time` as in
    /// `fences(covering:coord:at:)`).
    public func ids(covering position: LonLat, coord: CoordinateSystem = .wgs84, at time: Double? = nil) -> [String] {
        UTF8Order.sorted(fences(covering: position, coord: coord, at: time).map { id(of: $0) })
    }

    /// For each position of a batch, the fences covering it.
    ///
    /// Positions are first put in spatial order (a Morton curve over 2^16 x 2^16 cells), so
    /// that consecutive queries walk the same index nodes and fence records while they are in
    /// cache; results come back in input order. The ordered positions are split into chunks
    /// taken by `threads` workers (`DispatchQueue.concurrentPerform`); each worker owns its
    /// scratch buffers and GEOS context and writes only its own chunks, and the merge is by
    /// chunk number, so the result is the same for every thread count.
    /// - Parameters:
    ///   - positions: the points, in `coord`. Positions with a NaN or out-of-range coordinate
    ///     are covered by nothing.
    ///   - threads: workers to use; 1 runs on the calling thread.
    /// - Complexity: O(m (log n + k·v)) work for m positions, spread over the workers, plus an
    ///   O(m) radix sort.
    public func covering(_ positions: UnsafeBufferPointer<LonLat>, coord: CoordinateSystem = .wgs84, threads: Int = FenceStore.defaultThreads)
        -> Coverage
    {
        covering(positions, coord: coord, threads: threads, keys: false)
    }

    /// `covering`, with the fences' keys beside their handles when `keys` is set: read while
    /// the hit's slot is fresh (and prefetched with its record), so the event pass reads them in
    /// order instead of one cache miss a hit later.
    func covering(_ positions: UnsafeBufferPointer<LonLat>, coord: CoordinateSystem, threads: Int, keys withKeys: Bool)
        -> Coverage
    {
        let m = positions.count
        let (order, sorted) = SpatialOrder.sorted(positions, threads: threads)
        let chunkSize = 4096
        let chunks = (m + chunkSize - 1) / chunkSize
        // Per ordered position: how many fences; per chunk: the fences, in order. The count
        // arrays and the output are written in full below, so they start unset (a serial fill
        // of each would only be overwritten).
        var orderedCounts = ContiguousArray<Int32>(uninitializedCount: m)
        var chunkHandles = [ContiguousArray<FenceHandle>](repeating: [], count: chunks)
        var chunkKeys = [ContiguousArray<Int32>](repeating: [], count: withKeys ? chunks : 0)
        orderedCounts.withUnsafeMutableBufferPointer { countsBuffer in
            chunkHandles.withUnsafeMutableBufferPointer { handlesBuffer in
                chunkKeys.withUnsafeMutableBufferPointer { keysBuffer in
                    nonisolated(unsafe) let counts = countsBuffer
                    nonisolated(unsafe) let handles = handlesBuffer
                    nonisolated(unsafe) let chunkKeys = keysBuffer
                    Parallel.forEachChunk(count: m, chunkSize: chunkSize, threads: threads, makeState: ContainmentScratch.init) {
                        scratch, c, range in
                        var local = ContiguousArray<FenceHandle>()
                        local.reserveCapacity(range.count)
                        var localKeys = ContiguousArray<Int32>()
                        if withKeys { localKeys.reserveCapacity(range.count) }
                        tree.withPointQuerier { querier in
                            // One position ahead: its candidates are found, and their records asked
                            // for, before this position's are tested, so the fetches overlap.
                            var ahead = CandidateSlab()
                            var current = CandidateSlab()
                            defer {
                                ahead.deallocate()
                                current.deallocate()
                            }
                            var next = findCandidates(sorted[range.lowerBound], coord: coord, querier: querier, into: &ahead)
                            for k in range {
                                let here = next
                                swap(&current, &ahead)
                                if k + 1 < range.upperBound {
                                    next = findCandidates(sorted[k + 1], coord: coord, querier: querier, into: &ahead)
                                    prefetchRecords(ahead.items, keys: withKeys)
                                }
                                let before = local.count
                                if let here { appendTested(here, candidates: current.items, scratch: &scratch, into: &local) }
                                if withKeys {
                                    for j in before..<local.count { localKeys.append(slotKey[Int(local[j].rawValue)]) }
                                }
                                counts[k] = Int32(local.count - before)
                            }
                        }
                        handles[c] = local
                        if withKeys { chunkKeys[c] = localKeys }
                    }
                }
            }
        }
        // Back to input order: counts, offsets, then each ordered run copied to its place.
        var inputCounts = ContiguousArray<Int32>(uninitializedCount: m)
        var total = 0
        var offsets = ContiguousArray<Int>(uninitializedCount: m + 1)
        var handles = ContiguousArray<FenceHandle>()
        var keys = ContiguousArray<Int32>()
        order.withUnsafeBufferPointer { orderBuffer in
            orderedCounts.withUnsafeBufferPointer { orderedBuffer in
                nonisolated(unsafe) let order = orderBuffer
                nonisolated(unsafe) let orderedCounts = orderedBuffer
                inputCounts.withUnsafeMutableBufferPointer { buffer in
                    nonisolated(unsafe) let inputCounts = buffer
                    Parallel.forEachChunk(count: m, chunkSize: 65_536, threads: threads, makeState: { () }) { _, _, range in
                        for k in range { inputCounts[Int(order[k])] = orderedCounts[k] }
                    }
                }
                offsets.withUnsafeMutableBufferPointer { offsets in
                    inputCounts.withUnsafeBufferPointer { counts in
                        offsets[0] = 0
                        for k in 0..<m {
                            total &+= Int(counts[k])
                            offsets[k &+ 1] = total
                        }
                    }
                }
                // Every place is written below: each position's run, at its offset.
                handles = ContiguousArray(uninitializedCount: total)
                keys = ContiguousArray(uninitializedCount: withKeys ? total : 0)
                handles.withUnsafeMutableBufferPointer { buffer in
                    keys.withUnsafeMutableBufferPointer { keyBuffer in
                        offsets.withUnsafeBufferPointer { offsetBuffer in
                            nonisolated(unsafe) let handles = buffer.baseAddress
                            nonisolated(unsafe) let keys = keyBuffer.baseAddress
                            nonisolated(unsafe) let offsets = offsetBuffer
                            // Chunk c's fences go to the places of its positions: disjoint writes
                            // per chunk.
                            Parallel.forEachChunk(count: chunks, chunkSize: 1, threads: threads, makeState: { () }) { _, c, _ in
                                chunkHandles[c].withUnsafeBufferPointer { local in
                                    (withKeys ? chunkKeys[c] : []).withUnsafeBufferPointer { localKeys in
                                        var read = 0
                                        for k in (c * chunkSize)..<min(m, (c + 1) * chunkSize) {
                                            let n = Int(orderedCounts[k])
                                            if n == 0 { continue }
                                            let write = offsets[Int(order[k])]
                                            (handles! + write).initialize(from: local.baseAddress! + read, count: n)
                                            if withKeys { (keys! + write).initialize(from: localKeys.baseAddress! + read, count: n) }
                                            read += n
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        var coverage = Coverage(offsets: offsets, handles: handles)
        coverage.keys = keys
        return coverage
    }

    /// Convenience over an array.
    public func covering(_ positions: [LonLat], coord: CoordinateSystem = .wgs84, threads: Int = FenceStore.defaultThreads) -> Coverage {
        positions.withUnsafeBufferPointer { covering($0, coord: coord, threads: threads) }
    }

    /// Whether one fence covers a position (in `coord`, WGS84 by default), tested directly (no
    /// index): the oracle the index is checked against. False for a position that is not
    /// valid and for a removed fence.
    public func fence(_ handle: FenceHandle, covers position: LonLat, coord: CoordinateSystem = .wgs84) -> Bool {
        guard let position = Self.queryPoint(position, coord: coord), isLive(handle) else { return false }
        var scratch = ContainmentScratch()
        var unit: (Double, Double, Double)?
        return covers(slot: handle.rawValue, position, unit: &unit, scratch: &scratch)
    }

    /// Candidates, hits and GEOS calls per position over a sample, on one thread.
    public func probeStatistics(_ positions: [LonLat]) -> ProbeStatistics {
        var scratch = ContainmentScratch()
        var slab = CandidateSlab()
        defer { slab.deallocate() }
        var out = ContiguousArray<FenceHandle>()
        tree.withPointQuerier { q in
            for p in positions { appendCovering(p, coord: .wgs84, querier: q, slab: &slab, scratch: &scratch, into: &out) }
        }
        let n = Double(max(1, positions.count))
        return ProbeStatistics(
            candidatesPerPosition: Double(scratch.candidateCount) / n, hitsPerPosition: Double(out.count) / n,
            geosCallsPerPosition: Double(scratch.geosCalls) / n)
    }

    /// Appends the handles of the fences covering `position`, ascending, to `out`; `slab`
    /// holds the candidates meanwhile.
    @inline(__always)
    func appendCovering(
        _ position: LonLat, coord: CoordinateSystem, querier: RTreePointQuerier, slab: inout CandidateSlab,
        scratch: inout ContainmentScratch, into out: inout ContiguousArray<FenceHandle>
    ) {
        guard let p = findCandidates(position, coord: coord, querier: querier, into: &slab) else { return }
        appendTested(p, candidates: slab.items, scratch: &scratch, into: &out)
    }

    /// The position in WGS84, or nil when it is not a valid one: where every candidate query
    /// starts.
    @inline(__always)
    static func queryPoint(_ position: LonLat, coord: CoordinateSystem) -> LonLat? {
        guard coord == .wgs84 || (position.lon.isFinite && position.lat.isFinite) else { return nil }
        let p = CoordinateConversion.toWGS84(position, from: coord)
        return p.isValidWGS84Range ? p : nil
    }

    /// Replaces the slab's contents with the index entries whose box holds the position, and
    /// returns the position in WGS84, or nil (and no candidates) when it is not a valid one.
    /// No array bookkeeping per query or per id; the slab grows (and the query is asked again)
    /// when a point has more candidates than it holds.
    @inline(__always)
    func findCandidates(_ position: LonLat, coord: CoordinateSystem, querier: RTreePointQuerier, into slab: inout CandidateSlab)
        -> LonLat?
    {
        slab.count = 0
        guard let p = Self.queryPoint(position, coord: coord) else { return nil }
        slab.append { querier.candidates(x: p.lon, y: p.lat, into: $0, capacity: $1) }
        if p.lon == 180 || p.lon == -180 {
            // The antimeridian is one line with two names: a fence cut there (RFC 7946) has
            // one piece ending at 180 and one starting at -180.
            slab.append { querier.candidates(x: -p.lon, y: p.lat, into: $0, capacity: $1) }
        }
        return p
    }

    /// Asks the cache for the start of each candidate's geometry record (two lines: a
    /// 16-vertex polygon's record is six) and, for a small polygon, for its grid, which is
    /// all a point in a pure cell reads besides the record's first line. A hint only: nothing
    /// waits for it.
    @inline(__always)
    func prefetchRecords(_ candidates: UnsafeBufferPointer<Int32>, keys: Bool = false) {
        slotHot.withUnsafeBufferPointer { hot in
            let g = geometry.base
            slotKey.withUnsafeBufferPointer { slotKeys in
                for item in candidates {
                    let word = hot[Int(item >> 1)]
                    let record = g + HotWord.start(word)
                    fence_prefetch(record)
                    fence_prefetch(record + 8)
                    // A small grid's 80 bytes: at most two lines, its first and last double.
                    let grid = HotWord.gridOffset(word)
                    if grid != 0 {
                        fence_prefetch(record + grid)
                        fence_prefetch(record + grid + 9)
                    }
                    if keys { fence_prefetch(slotKeys.baseAddress! + Int(item >> 1)) }
                }
            }
        }
    }

    /// Tests the candidates against `p` (WGS84) and appends the handles of those that cover
    /// it, ascending and once each (a fence indexed under two boxes can be found twice).
    ///
    /// Hits are appended as found; when one comes below the last (the index's leaf order is
    /// not slot order, so overlapping fences added over time do this), the run is sorted and
    /// deduplicated once at the end (`sortHits`). In order, the cost is one compare a hit.
    /// - Complexity: O(k) fast tests for k candidates, plus O(h log h) for h hits when any
    ///   came out of order: ten thousand fences over one point stay linear-ish, not O(h²).
    @inline(__always)
    func appendTested(
        _ p: LonLat, candidates: UnsafeBufferPointer<Int32>, scratch: inout ContainmentScratch, into out: inout ContiguousArray<FenceHandle>
    ) {
        let start = out.count
        var unit: (Double, Double, Double)?
        var unordered = false
        scratch.candidateCount &+= candidates.count
        let onAntimeridian = p.lon == 180 || p.lon == -180
        slotHot.withUnsafeBufferPointer { hot in
            let g = geometry.base
            for item in candidates {
                let slot = item >> 1
                let word = hot[Int(slot)]
                var covered = coversAsGiven(slot: slot, word: word, record: g + HotWord.start(word), p, unit: &unit, scratch: &scratch)
                if !covered && onAntimeridian {
                    covered = coversUnderOtherName(slot: slot, p, scratch: &scratch)
                }
                guard covered else { continue }
                let handle = FenceHandle(rawValue: slot)
                if out.count != start && out[out.count &- 1] >= handle { unordered = true }
                out.append(handle)
            }
        }
        if unordered { FenceStore.sortHits(&out, from: start) }
    }

    /// Sorts the hits `out[start...]` ascending and drops repeats (a fence found under two
    /// of its boxes), in place: insertion sort up to 16 hits (a few, nearly in order), the
    /// standard sort above. O(h log h) for h hits, no allocation; kept out of line, since
    /// most positions' hits arrive in order.
    @inline(never)
    static func sortHits(_ out: inout ContiguousArray<FenceHandle>, from start: Int) {
        let kept = out.withUnsafeMutableBufferPointer { all -> Int in
            var hits = UnsafeMutableBufferPointer(rebasing: all[start...])
            if hits.count <= 16 {
                // Insertion sort: a few hits, nearly in order, no allocation.
                for i in 1..<hits.count {
                    let h = hits[i]
                    var j = i
                    while j > 0 && hits[j &- 1] > h { hits[j] = hits[j &- 1]; j &-= 1 }
                    hits[j] = h
                }
            } else {
                hits.sort()
            }
            var kept = 1
            for i in 1..<hits.count where hits[i] != hits[kept &- 1] {
                hits[kept] = hits[i]
                kept &+= 1
            }
            return start + kept
        }
        out.removeLast(out.count - kept)
    }

    /// Whether the fence in `slot` covers `p` (WGS84). A position on the antimeridian is
    /// tested under both its names (`coversUnderOtherName`).
    @inline(__always)
    func covers(slot: Int32, _ p: LonLat, unit: inout (Double, Double, Double)?, scratch: inout ContainmentScratch) -> Bool {
        let word = slotHot[Int(slot)]
        let covered = coversAsGiven(
            slot: slot, word: word, record: geometry.base + HotWord.start(word), p, unit: &unit, scratch: &scratch)
        if !covered && (p.lon == 180 || p.lon == -180) { return coversUnderOtherName(slot: slot, p, scratch: &scratch) }
        return covered
    }

    /// Whether the polygon in `slot` covers `p`, a position on the antimeridian, under its
    /// other name: longitude 180 and -180 are one line, and a polygon cut there (RFC 7946)
    /// has its edge at one of them only, so a position given as -180 lies on a piece ending
    /// at 180. Circles measure on the ellipsoid, where the two names are one point already.
    /// Rare (a position exactly on the antimeridian), so kept out of line.
    @inline(never)
    func coversUnderOtherName(slot: Int32, _ p: LonLat, scratch: inout ContainmentScratch) -> Bool {
        let word = slotHot[Int(slot)]
        guard HotWord.kind(word) != FlatGeometry.Kind.circle.rawValue else { return false }
        let q = LonLat(lon: -p.lon, lat: p.lat)
        var unit: (Double, Double, Double)?
        return coversAsGiven(slot: slot, word: word, record: geometry.base + HotWord.start(word), q, unit: &unit, scratch: &scratch)
    }

    /// Whether the fence in `slot` (its hot word and record given) covers `p` as written: the
    /// fast filters, else GEOS. Every containment path's one test; the antimeridian's other
    /// name is the callers' concern.
    @inline(__always)
    func coversAsGiven(
        slot: Int32, word: Int, record: UnsafePointer<Double>, _ p: LonLat, unit: inout (Double, Double, Double)?,
        scratch: inout ContainmentScratch
    ) -> Bool {
        FenceStore.fastCovers(kind: HotWord.kind(word), record: record, p, unit: &unit)
            ?? slowCovers(slot: slot, p, record: record, scratch: &scratch)
    }

    /// Whether the fence of this kind and record covers `p` (WGS84), or nil when the fast
    /// filters cannot tell (a point within about 1e-15 relative of a polygon edge).
    ///
    /// Circles: geodesic distance, from the position's unit vector (made once per position,
    /// in `unit`). Polygons: the small grid (`SmallPolygonGrid`) or, for large ones, the cell
    /// grid and edge index (`RingLocator.locateIndexed`).
    @inline(__always)
    static func fastCovers(kind: Int, record: UnsafePointer<Double>, _ p: LonLat, unit: inout (Double, Double, Double)?) -> Bool? {
        if kind == FlatGeometry.Kind.circle.rawValue {
            let u = unit ?? CircleGeometry.unitVector(lon: p.lon, lat: p.lat)
            unit = u
            return CircleGeometry.covers(record, lon: p.lon, lat: p.lat, u: u)
        }
        let location =
            kind == FlatGeometry.Kind.indexedPolygon.rawValue
            ? RingLocator.locateIndexed(x: p.lon, y: p.lat, record: record)
            : SmallPolygonGrid.locate(x: p.lon, y: p.lat, record: record)
        switch location {
        case .interior, .boundary: return true
        case .exterior: return false
        case .uncertain: return nil
        }
    }

    /// A polygon test the fast filters left undecided.
    @inline(never)
    func slowCovers(slot: Int32, _ p: LonLat, record: UnsafePointer<Double>, scratch: inout ContainmentScratch) -> Bool {
        // Outside every polygon's box is outside, whatever GEOS says: its orientation filter
        // takes a product that underflowed (coordinates near 1e-308) for exact, and its
        // envelope test looks at the whole MultiPolygon's box only.
        guard RingLocator.inExteriorBox(x: p.lon, y: p.lat, record: record) else { return false }
        scratch.geosCalls += 1
        // GEOS decides, `GEOSPreparedCovers_r` on the fence rebuilt in this worker's context
        // (kept in the scratch for the positions after this one).
        guard let prepared = scratch.preparedGeometry(slot: slot, in: self) else { return false }
        return prepared.covers(x: p.lon, y: p.lat) ?? false
    }

    /// A GEOS prepared geometry for a stored polygon fence, made in `context`, and its number
    /// of positions. Callers go through `ContainmentScratch.preparedGeometry`, which keeps it.
    /// - Complexity: O(v) for v positions.
    func preparedGeometry(slot: Int32, context: GEOSContext) -> (GEOSPreparedGeometry, positions: Int)? {
        let s = Int(slot)
        let start = geometryStart(s)
        var positions = 0
        let made = geometry.withUnsafeBufferPointer { g -> GEOSGeometry? in
            let record = g.baseAddress! + start
            let (rings, offset) = FlatGeometry.rings(of: record)
            positions = rings.reduce(0) { $0 + $1.count }
            return context.makePolygonal(coords: UnsafeBufferPointer(start: record + offset, count: 2 * positions), rings: rings)
        }
        return made.flatMap(GEOSPreparedGeometry.init).map { ($0, positions) }
    }
}

/// Candidate ids of one position, in memory the caller owns and frees (`deallocate`):
/// cleared by setting `count`, filled by the index without an array's uniqueness and capacity
/// checks per id. A plain value: a copy shares the memory, so only the owner may grow or free
/// it.
struct CandidateSlab {
    private(set) var base: UnsafeMutablePointer<Int32>
    private(set) var capacity: Int
    var count = 0

    init(capacity: Int = 64) {
        self.capacity = capacity
        base = .allocate(capacity: capacity)
    }

    /// The ids found so far.
    var items: UnsafeBufferPointer<Int32> { UnsafeBufferPointer(start: base, count: count) }

    /// Appends what `fill` finds: `fill(at, room)` writes up to `room` ids at `at` and returns
    /// how many there are in all; when they did not fit, the slab grows and `fill` runs again.
    @inline(__always)
    mutating func append(_ fill: (UnsafeMutablePointer<Int32>, Int) -> Int) {
        var found = fill(base + count, capacity - count)
        while found > capacity - count {
            grow(to: 2 * (count + found))
            found = fill(base + count, capacity - count)
        }
        count += found
    }

    @inline(never)
    private mutating func grow(to newCapacity: Int) {
        let bigger = UnsafeMutablePointer<Int32>.allocate(capacity: newCapacity)
        bigger.update(from: base, count: count)
        base.deallocate()
        base = bigger
        capacity = newCapacity
    }

    func deallocate() { base.deallocate() }
}
