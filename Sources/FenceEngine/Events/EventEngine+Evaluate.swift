import SpatialIndex

/// The fixes of one batch, flat, after validation and conversion to WGS84.
struct FixTable {
    var device = ContiguousArray<Int32>()
    var time = ContiguousArray<Double>()
    var point = ContiguousArray<LonLat>()
    /// Hysteresis margin for this fix: the engine's plus the fix's accuracy (0 when off).
    var margin = ContiguousArray<Double>()
    /// Input index of each fix.
    var input = ContiguousArray<Int>()
}

extension EventEngine {
    /// Applies a batch of fixes, in any order, and returns the events they cause.
    ///
    /// Steps: reject bad fixes (NaN, out of range: they never touch state); order each
    /// device's fixes by time and drop duplicates and late fixes; find the covering fences of
    /// every fix in one parallel containment pass; then apply each device's fixes in time order
    /// on `threads` workers, devices partitioned by a stable hash of their id so each device's
    /// state is touched by one worker; merge events in (time, device, fence, event) order.
    /// Fences whose `expires` is at or before the batch's latest fix time expire in the batch.
    /// - Complexity: O(m (log n + k·v)) for m fixes, plus O(m log m) for the output order.
    public mutating func evaluate(_ fixes: [Position], threads: Int = FenceStore.defaultThreads) -> EvaluationResult {
        var result = EvaluationResult(events: [], rejected: [], late: 0, duplicates: 0, applied: 0)
        var table = FixTable()
        table.device.reserveCapacity(fixes.count)
        table.time.reserveCapacity(fixes.count)
        table.point.reserveCapacity(fixes.count)
        table.input.reserveCapacity(fixes.count)
        let hysteresis = settings.hysteresisMargin > 0
        for (i, fix) in fixes.enumerated() {
            if let problem = fix.problem {
                result.rejected.append((i, problem))
                continue
            }
            if fix.device.isEmpty {
                result.rejected.append((i, "empty device id"))
                continue
            }
            var p = fix.lonLat
            if fix.coord != .wgs84 {
                let c = CoordinateConversion.toWGS84(lon: p.lon, lat: p.lat, from: fix.coord)
                p = LonLat(lon: c.lon, lat: c.lat)
            }
            table.device.append(intern(device: fix.device))
            table.time.append(fix.time)
            table.point.append(p)
            table.input.append(i)
            if hysteresis { table.margin.append(settings.hysteresisMargin + (fix.accuracy ?? 0)) }
        }

        // Each device's fixes in time order (stable: equal times keep input order), as runs of
        // fix indices; counting sort by device, then a per-device sort only where needed.
        let m = table.time.count
        var start = [Int](repeating: 0, count: devices.count + 1)
        for d in table.device { start[Int(d) + 1] += 1 }
        for d in 0..<devices.count { start[d + 1] += start[d] }
        var fill = start
        var order = [Int32](repeating: 0, count: m)
        for f in 0..<m {
            let d = Int(table.device[f])
            order[fill[d]] = Int32(f)
            fill[d] += 1
        }
        var batchDevices: [Int32] = []
        var keep = [Bool](repeating: false, count: m)
        var latest = watermark
        for d in 0..<devices.count where start[d + 1] > start[d] {
            batchDevices.append(Int32(d))
            let lo = start[d]
            let hi = start[d + 1]
            var sorted = true
            for k in (lo + 1)..<max(lo + 1, hi) where table.time[Int(order[k])] < table.time[Int(order[k - 1])] {
                sorted = false
                break
            }
            if !sorted { order[lo..<hi].sort { table.time[Int($0)] < table.time[Int($1)] || (table.time[Int($0)] == table.time[Int($1)] && $0 < $1) } }
            var last = devices[d].lastTime
            for k in lo..<hi {
                let f = Int(order[k])
                let t = table.time[f]
                if t < last {
                    result.late += 1
                } else if t == last {
                    result.duplicates += 1
                } else {
                    keep[f] = true
                    last = t
                    latest = max(latest, t)
                }
            }
        }
        result.applied = keep.lazy.filter { $0 }.count

        // Containment for every kept fix at once (spatially ordered, parallel).
        let coverage: Coverage? = hysteresis ? nil : table.point.withUnsafeBufferPointer { store.covering($0, threads: threads) }

        // Apply, devices partitioned by hash across workers.
        let workers = max(1, threads)
        var buckets = [[Int32]](repeating: [], count: workers)
        for d in batchDevices { buckets[Int(stableHash(deviceIDs[Int(d)]) % UInt32(workers))].append(d) }
        var workerEvents = [[FenceEvent]](repeating: [], count: workers)
        let expiring = store.expiring > 0
        let batchEnd = latest
        // Device states move out of `self` while workers write them; the workers read a copy
        // of the engine (copy-on-write: it shares the store and tables without copying).
        var states = ContiguousArray<DeviceState>()
        swap(&states, &devices)
        let engine = self
        states.withUnsafeMutableBufferPointer { stateBuffer in
            workerEvents.withUnsafeMutableBufferPointer { eventBuffer in
                nonisolated(unsafe) let states = stateBuffer
                nonisolated(unsafe) let out = eventBuffer
                Parallel.forEachChunk(count: workers, chunkSize: 1, threads: workers, makeState: ApplyScratch.init) {
                    scratch, w, _ in
                    var events: [FenceEvent] = []
                    for d in buckets[w] {
                        let dd = Int(d)
                        for k in start[dd]..<start[dd + 1] {
                            let f = Int(order[k])
                            guard keep[f] else { continue }
                            scratch.near.removeAll(keepingCapacity: true)
                            if let coverage {
                                for h in coverage[f] {
                                    let slot = Int(h.rawValue)
                                    if expiring && engine.store.slotExpires[slot] <= table.time[f] { continue }
                                    scratch.near.append(NearFence(key: engine.store.slotKey[slot], slot: Int32(slot), cls: .deepInside))
                                }
                            } else {
                                engine.store.classify(
                                    table.point[f], margin: table.margin[f], time: table.time[f], expiring: expiring,
                                    scratch: &scratch.containment, into: &scratch.near)
                            }
                            scratch.near.sort { $0.key < $1.key }
                            engine.apply(
                                device: d, time: table.time[f], point: table.point[f], near: scratch.near,
                                state: &states[dd], scratch: &scratch, events: &events)
                        }
                        if expiring { engine.expirePairs(device: d, upTo: batchEnd, state: &states[dd], events: &events) }
                    }
                    out[w] = events
                }
            }
        }
        swap(&states, &devices)
        var events = workerEvents.flatMap { $0 }
        if expiring && batchEnd > watermark {
            // Devices without fixes in this batch still leave fences that expired.
            let inBatch = Set(batchDevices)
            for d in devices.indices where !inBatch.contains(Int32(d)) && !devices[d].pairs.isEmpty {
                expirePairs(device: Int32(d), upTo: batchEnd, state: &devices[d], events: &events)
            }
            store.removeExpired(asOf: batchEnd)
        }
        watermark = batchEnd
        events.sort()
        result.events = events
        return result
    }

    /// Exits, with reason `fence-expired` at the expiry time, every pair whose fence expires at
    /// or before `time`.
    func expirePairs(device d: Int32, upTo time: Double, state: inout DeviceState, events: inout [FenceEvent]) {
        guard !state.pairs.isEmpty else { return }
        var kept: [PairState] = []
        for pair in state.pairs {
            guard let slot = store.slot(ofKey: pair.fence) else { continue }
            let e = store.slotExpires[Int(slot)]
            if !e.isNaN && e <= time {
                emit(
                    .exit, device: d, slot: Int(slot), time: max(e, pair.enterTime), lon: state.lastLon, lat: state.lastLat,
                    reason: .fenceExpired, inside: max(e, pair.enterTime) - pair.enterTime, into: &events)
            } else {
                kept.append(pair)
            }
        }
        state.pairs = kept
    }
}

/// A fence near a fix, and where the fix is against it.
struct NearFence {
    enum Class: UInt8 {
        /// Outside, by at least the margin.
        case farOutside
        /// Outside, within the margin.
        case outsideBand
        /// Inside, within the margin of the boundary.
        case insideBand
        /// Inside, by at least the margin (any covering fence when hysteresis is off).
        case deepInside
    }
    var key: Int32
    var slot: Int32
    var cls: Class
}

/// What a worker reuses from fix to fix.
struct ApplyScratch {
    var near: [NearFence] = []
    var pairs: [PairState] = []
    var containment = ContainmentScratch()
    var segment = ContiguousArray<Int32>()
    var prepared: [Int32: GEOSPreparedGeometry] = [:]
}
