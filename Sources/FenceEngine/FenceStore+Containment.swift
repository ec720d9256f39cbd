import Dispatch
import SpatialIndex

/// Per-position fence lists for a batch, in compressed rows: the fences covering position `i`
/// are `handles[offsets[i] ..< offsets[i + 1]]`, ascending.
public struct Coverage: Sendable {
    public var offsets: ContiguousArray<Int>
    public var handles: ContiguousArray<FenceHandle>

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

    init() { candidates.reserveCapacity(64) }

    mutating func context() -> GEOSContext {
        if let geos { return geos }
        let made = GEOSContext()
        geos = made
        return made
    }
}

extension FenceStore {
    /// The fences covering one position (boundary included), ascending by handle.
    ///
    /// Circles: geodesic distance on the WGS84 ellipsoid. Polygons: GEOS `covers` semantics.
    /// - Parameters:
    ///   - position: the point, in `coord`.
    /// - Complexity: O(log n + k·v) for k candidates of v vertices each.
    public func fences(covering position: LonLat, coord: CoordinateSystem = .wgs84) -> [FenceHandle] {
        var scratch = ContainmentScratch()
        var out = ContiguousArray<FenceHandle>()
        appendCovering(position, coord: coord, scratch: &scratch, into: &out)
        return Array(out)
    }

    /// The ids of the fences covering one position, ascending by id.
    public func ids(covering position: LonLat, coord: CoordinateSystem = .wgs84) -> [String] {
        fences(covering: position, coord: coord).map { id(of: $0) }.sorted()
    }

    /// For each position of a batch, the fences covering it.
    ///
    /// Work is split into chunks of positions taken by `threads` workers
    /// (`DispatchQueue.concurrentPerform`); each worker owns its scratch buffers and GEOS context
    /// and writes only its own chunks, and chunks are merged in input order, so the result is
    /// the same for every thread count.
    /// - Parameters:
    ///   - positions: the points, in `coord`. Positions with a NaN or out-of-range coordinate
    ///     are covered by nothing.
    ///   - threads: workers to use; 1 runs on the calling thread.
    /// - Complexity: O(m (log n + k·v)) work for m positions, spread over the workers.
    public func covering(_ positions: UnsafeBufferPointer<LonLat>, coord: CoordinateSystem = .wgs84, threads: Int = FenceStore.defaultThreads)
        -> Coverage
    {
        let chunkSize = 2048
        let chunks = (positions.count + chunkSize - 1) / chunkSize
        var chunkCounts = [ContiguousArray<Int32>](repeating: [], count: chunks)
        var chunkHandles = [ContiguousArray<FenceHandle>](repeating: [], count: chunks)
        chunkCounts.withUnsafeMutableBufferPointer { countsBuffer in
            chunkHandles.withUnsafeMutableBufferPointer { handlesBuffer in
                nonisolated(unsafe) let counts = countsBuffer
                nonisolated(unsafe) let handles = handlesBuffer
                Parallel.forEachChunk(count: positions.count, chunkSize: chunkSize, threads: threads, makeState: ContainmentScratch.init) {
                    scratch, c, range in
                    var localCounts = ContiguousArray<Int32>()
                    localCounts.reserveCapacity(range.count)
                    var localHandles = ContiguousArray<FenceHandle>()
                    localHandles.reserveCapacity(range.count)
                    for i in range {
                        let before = localHandles.count
                        appendCovering(positions[i], coord: coord, scratch: &scratch, into: &localHandles)
                        localCounts.append(Int32(localHandles.count - before))
                    }
                    counts[c] = localCounts
                    handles[c] = localHandles
                }
            }
        }
        var offsets = ContiguousArray<Int>()
        offsets.reserveCapacity(positions.count + 1)
        offsets.append(0)
        var total = 0
        for c in 0..<chunks {
            for n in chunkCounts[c] {
                total += Int(n)
                offsets.append(total)
            }
        }
        var handles = ContiguousArray<FenceHandle>()
        handles.reserveCapacity(total)
        for c in 0..<chunks { handles.append(contentsOf: chunkHandles[c]) }
        return Coverage(offsets: offsets, handles: handles)
    }

    /// Convenience over an array.
    public func covering(_ positions: [LonLat], coord: CoordinateSystem = .wgs84, threads: Int = FenceStore.defaultThreads) -> Coverage {
        positions.withUnsafeBufferPointer { covering($0, coord: coord, threads: threads) }
    }

    /// Every stored fence, ascending.
    public func allHandles() -> [FenceHandle] {
        slotKind.indices.filter { slotKind[$0] != 0 }.map { FenceHandle(rawValue: Int32($0)) }
    }

    /// Whether one fence covers a WGS84 position, tested directly (no index): the oracle the
    /// index is checked against.
    public func fence(_ handle: FenceHandle, covers position: LonLat) -> Bool {
        guard position.isValidWGS84Range else { return false }
        var scratch = ContainmentScratch()
        var unit: (Double, Double, Double)?
        return covers(slot: handle.rawValue, position, unit: &unit, scratch: &scratch)
    }

    /// Candidates, hits and GEOS calls per position over a sample, on one thread.
    public func probeStatistics(_ positions: [LonLat]) -> ProbeStatistics {
        var scratch = ContainmentScratch()
        var out = ContiguousArray<FenceHandle>()
        for p in positions { appendCovering(p, coord: .wgs84, scratch: &scratch, into: &out) }
        let n = Double(max(1, positions.count))
        return ProbeStatistics(
            candidatesPerPosition: Double(scratch.candidateCount) / n, hitsPerPosition: Double(out.count) / n,
            geosCallsPerPosition: Double(scratch.geosCalls) / n)
    }

    /// Appends the handles of the fences covering `position`, ascending, to `out`.
    @inline(__always)
    func appendCovering(
        _ position: LonLat, coord: CoordinateSystem, scratch: inout ContainmentScratch,
        into out: inout ContiguousArray<FenceHandle>
    ) {
        var p = position
        if coord != .wgs84 {
            guard p.lon.isFinite && p.lat.isFinite else { return }
            let c = CoordinateConversion.toWGS84(lon: p.lon, lat: p.lat, from: coord)
            p = LonLat(lon: c.lon, lat: c.lat)
        }
        guard p.isValidWGS84Range else { return }
        scratch.candidates.removeAll(keepingCapacity: true)
        tree.query(x: p.lon, y: p.lat, into: &scratch.candidates)
        if p.lon == 180 || p.lon == -180 {
            // The antimeridian is one line with two names: a fence cut there (RFC 7946) has
            // one piece ending at 180 and one starting at -180.
            tree.query(x: -p.lon, y: p.lat, into: &scratch.candidates)
        }
        let start = out.count
        var unit: (Double, Double, Double)?
        scratch.candidates.withUnsafeBufferPointer { candidates in
            scratch.candidateCount += candidates.count
            for item in candidates {
                let slot = itemSlot[Int(item)]
                if covers(slot: slot, p, unit: &unit, scratch: &scratch) {
                    out.append(FenceHandle(rawValue: slot))
                }
            }
        }
        let added = out.count - start
        if added > 1 {
            // Ascending, and once: a fence indexed under several boxes can be found twice.
            out[start...].sort()
            var write = start + 1
            for read in (start + 1)..<out.count where out[read] != out[write - 1] {
                out[write] = out[read]
                write += 1
            }
            out.removeLast(out.count - write)
        }
    }

    /// Whether the fence in `slot` covers `p` (WGS84).
    @inline(__always)
    func covers(slot: Int32, _ p: LonLat, unit: inout (Double, Double, Double)?, scratch: inout ContainmentScratch) -> Bool {
        let s = Int(slot)
        let start = slotGeometry[s]
        return geometry.withUnsafeBufferPointer { g -> Bool in
            let base = g.baseAddress! + start
            if slotKind[s] == NormalizedFence.Kind.circle.rawValue {
                let u = unit ?? CircleGeometry.unitVector(lon: p.lon, lat: p.lat)
                unit = u
                return CircleGeometry.covers(base, lon: p.lon, lat: p.lat, u: u)
            }
            let r0 = Int(slotRingFirst[s])
            let location = ringLengths.withUnsafeBufferPointer { rings in
                RingLocator.locate(
                    x: p.lon, y: p.lat, coords: base,
                    ringLengths: UnsafeBufferPointer(rebasing: rings[r0..<(r0 + Int(slotRingCount[s]))]))
            }
            switch location {
            case .interior, .boundary: return true
            case .exterior: return false
            case .uncertain:
                scratch.geosCalls += 1
                return geosCovers(slot: slot, p, context: scratch.context())
            }
        }
    }

    /// GEOS decides: the fence is rebuilt in this worker's context, prepared, and asked
    /// `GEOSPreparedCovers_r`. Only points within ~1e-15 relative of an edge come here.
    func geosCovers(slot: Int32, _ p: LonLat, context: GEOSContext) -> Bool {
        guard let prepared = preparedGeometry(slot: slot, context: context) else { return false }
        return prepared.covers(x: p.lon, y: p.lat) ?? false
    }

    /// A GEOS prepared geometry for a stored polygon fence, made in `context`.
    func preparedGeometry(slot: Int32, context: GEOSContext) -> GEOSPreparedGeometry? {
        let s = Int(slot)
        let start = slotGeometry[s]
        let r0 = Int(slotRingFirst[s])
        let rings = (r0..<(r0 + Int(slotRingCount[s]))).map {
            (count: Int(ringLengths[$0] & ~FenceValidation.exteriorFlag), isExterior: ringLengths[$0] & FenceValidation.exteriorFlag != 0)
        }
        let geometry = self.geometry.withUnsafeBufferPointer { g in
            context.makePolygonal(
                coords: UnsafeBufferPointer(rebasing: g[start..<(start + Int(slotGeometryCount[s]))]), rings: rings)
        }
        return geometry.flatMap(GEOSPreparedGeometry.init)
    }
}
