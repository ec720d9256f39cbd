import SpatialIndex

extension EventEngine {
    /// Applies a batch of fixes, in any order, in one pass, and returns the events they cause.
    ///
    /// Steps, all but the cheap bucketing on `threads` workers:
    /// 1. check and convert each fix (bad ones never touch state) and hash its device to one of
    ///    `partitionCount` partitions;
    /// 2. find the covering fences of every fix in one containment pass (spatially ordered);
    /// 3. per partition, on whichever worker takes it: intern the devices, order each device's
    ///    fixes by time, drop duplicates and late fixes, apply them in time order;
    /// 4. merge the events in (time, device, fence, event) order.
    /// Each device's state is touched by the one worker that holds its partition, and
    /// partitions do not depend on the thread count, so neither does the output. Fences whose
    /// `expires` is at or before the batch's latest fix time expire in the batch.
    /// - Complexity: O(m (log n + k·v)) for m fixes, plus O(e log e) for e events, plus
    ///   at a batch whose end passes the earliest `expires`, O(k log k) to find the k fences
    ///   it ends (`FenceStore.expiredFences`) and a pass over the devices of the partitions
    ///   that may hold them, only those whose key bits meet theirs read (`EndingFences`);
    ///   with `idleEviction`, O(log d) for each device that may be idle (`IdleQueue`).
    ///   Memory: about 16.5 bytes a (fix, fence) match and 90-200 bytes an event, all held
    ///   until the batch is done (`evaluate` cuts a batch with many matches into pieces first).
    /// - Parameter lastPiece: false for a piece of a batch that more pieces follow (`pieces`):
    ///   its end then evicts only devices idle by the exact sum of last fix and eviction time,
    ///   not by `hasPassed`'s rounding slack, which would time their exits at the piece's end
    ///   where one pass times them at the sum (an independent review found it).
    mutating func evaluateWhole(_ fixes: [Position], threads: Int, lastPiece: Bool = true) -> EvaluationResult {
        let m = fixes.count
        var clock = PhaseTimer("evaluate \(m) fixes")
        let hysteresis = settings.hysteresisMargin > 0
        let baseMargin = settings.hysteresisMargin
        let partitionCount = Self.partitionCount
        // 1. Check: bad fixes get their reason; good ones their device hash and partition
        //    (`rejected` for bad ones), counted per chunk and partition.
        // Both written by the check for every fix (a hash only for good ones, which are the
        // only ones read): no serial fill first.
        let rejected = UInt8.max
        var partitionOf = ContiguousArray<UInt8>(uninitializedCount: m)
        var deviceHashes = ContiguousArray<UInt64>(uninitializedCount: m)
        let chunkSize = 16_384
        let chunks = (m + chunkSize - 1) / chunkSize
        var chunkProblems = [[(index: Int, reason: String)]](repeating: [], count: chunks)
        // Each chunk's earliest and latest good fix time.
        var chunkSpans = [(earliest: Double, latest: Double)](repeating: (.infinity, -.infinity), count: chunks)
        // chunkCounts[c * partitionCount + p]: chunk c's good fixes in partition p; then, after the
        // prefix sums, where the first of them goes in partition order.
        var chunkCounts = [Int](repeating: 0, count: chunks * partitionCount)
        // The same for the bytes of their device ids longer than a `String` holds inline, each
        // with its 4-byte length (`PartitionedFixes.longIDBytes`).
        var chunkBytes = [Int](repeating: 0, count: chunks * partitionCount)
        partitionOf.withUnsafeMutableBufferPointer { partitionBuffer in
            deviceHashes.withUnsafeMutableBufferPointer { hashBuffer in
                chunkProblems.withUnsafeMutableBufferPointer { problemBuffer in
                    chunkSpans.withUnsafeMutableBufferPointer { spanBuffer in
                        chunkCounts.withUnsafeMutableBufferPointer { countBuffer in
                            chunkBytes.withUnsafeMutableBufferPointer { byteBuffer in
                                nonisolated(unsafe) let partitionOf = partitionBuffer
                                nonisolated(unsafe) let deviceHashes = hashBuffer
                                nonisolated(unsafe) let problems = problemBuffer
                                nonisolated(unsafe) let spans = spanBuffer
                                nonisolated(unsafe) let counts = countBuffer
                                nonisolated(unsafe) let byteCounts = byteBuffer
                                Parallel.forEachChunk(count: m, chunkSize: chunkSize, threads: threads, makeState: { () }) { _, c, range in
                                    // Kept local and stored once: neighbouring chunks' slots share
                                    // a cache line, and two workers writing it per fix would fight.
                                    var chunkLatest = -Double.infinity
                                    var chunkEarliest = Double.infinity
                                    defer { spans[c] = (chunkEarliest, chunkLatest) }
                                    let count = counts.baseAddress! + c * partitionCount
                                    let bytes = byteCounts.baseAddress! + c * partitionCount
                                    fixes.withUnsafeBufferPointer { fixes in
                                        for i in range {
                                            let fix = fixes.baseAddress! + i
                                            if !fix.pointee.isUsable, let problem = fix.pointee.problem {
                                                problems[c].append((i, problem))
                                                partitionOf[i] = rejected
                                                continue
                                            }
                                            if fix.pointee.device.isEmpty {
                                                problems[c].append((i, "empty device id"))
                                                partitionOf[i] = rejected
                                                continue
                                            }
                                            let h = stableHash64(fix.pointee.device)
                                            deviceHashes[i] = h
                                            let p = Self.partition(hash: h)
                                            partitionOf[i] = UInt8(p)
                                            count[p] &+= 1
                                            let n = fix.pointee.device.utf8.count
                                            if n > DevicePartition.inlineBytes { bytes[p] &+= PartitionedFixes.lengthBytes &+ n }
                                            chunkLatest = max(chunkLatest, fix.pointee.time)
                                            chunkEarliest = min(chunkEarliest, fix.pointee.time)
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        clock.mark("check")
        var result = EvaluationResult(
            events: [], rejected: chunkProblems.flatMap { $0 }, late: 0, duplicates: 0, applied: 0,
            earliest: chunkSpans.reduce(.infinity) { min($0, $1.earliest) })
        let batchEnd = chunkSpans.reduce(watermark) { max($0, $1.latest) }
        let valid = m - result.rejected.count

        // 2. Where each chunk's fixes of each partition go: partitionCount in order, chunks in
        //    order within a partition, so each partition keeps input order.
        //    Their long ids' bytes go in the same order.
        var partitionStart = [Int](repeating: 0, count: partitionCount + 1)
        var partitionByteStart = [Int](repeating: 0, count: partitionCount)
        var next = 0
        var nextByte = 0
        for p in 0..<partitionCount {
            partitionStart[p] = next
            partitionByteStart[p] = nextByte
            for c in 0..<chunks {
                let n = chunkCounts[c * partitionCount + p]
                chunkCounts[c * partitionCount + p] = next
                next += n
                let b = chunkBytes[c * partitionCount + p]
                chunkBytes[c * partitionCount + p] = nextByte
                nextByte += b
            }
        }
        partitionStart[partitionCount] = next

        // 3. Each good fix copied, converted to WGS84, to its place: reads in input order,
        //    writes in a run per partition, so each partition's worker then reads its fixes
        //    front to back.
        var batch = PartitionedFixes(count: valid, longIDBytes: nextByte, hysteresis: hysteresis)
        batch.scatter(
            from: fixes, partitionOf: partitionOf, hashes: deviceHashes, places: chunkCounts, bytePlaces: chunkBytes,
            chunkSize: chunkSize, baseMargin: baseMargin, threads: threads)

        clock.mark("bucket")
        // Containment for every fix at once.
        store.prepareIndex(forQueries: valid)
        let coverage: Coverage? = hysteresis ? nil : batch.points.withUnsafeBufferPointer {
            store.covering($0, coord: .wgs84, threads: threads, keys: true)
        }

        clock.mark("containment")
        // Apply, one partition at a time per worker; each partition's events are sorted there
        // (nearly in order already: a live feed is time-ordered), so the merge below only
        // interleaves sorted runs.
        var partitionEvents = [[FenceEvent]](repeating: [], count: Self.partitionCount)
        var partitionCounts = [(late: Int, duplicates: Int, applied: Int)](repeating: (0, 0, 0), count: Self.partitionCount)
        var partitionLogs = [PairLog](repeating: PairLog(), count: Self.partitionCount)
        var parts = [DevicePartition]()
        swap(&parts, &partitions)
        // The fences the batch's end removes, and where the devices they hold may be.
        let expired = store.mayHaveExpired(asOf: batchEnd) ? store.expiredFences(asOf: batchEnd) : nil
        let ending = expired.map { EndingFences(keys: $0.keys(in: store), counts: trustedPairCounts()) }
        // The workers read a copy of the engine; its scope ends with the apply phase, so the
        // removal of expired fences below finds the store unshared (alive to the end of the
        // function, it made that removal copy every array of the store and the id table: 20 ms
        // a batch at 1M fences).
        do {
            let engine = self
            parts.withUnsafeMutableBufferPointer { partBuffer in
                partitionEvents.withUnsafeMutableBufferPointer { eventBuffer in
                    partitionCounts.withUnsafeMutableBufferPointer { countBuffer in
                        partitionLogs.withUnsafeMutableBufferPointer { logBuffer in
                            nonisolated(unsafe) let parts = partBuffer
                            nonisolated(unsafe) let out = eventBuffer
                            nonisolated(unsafe) let counts = countBuffer
                            nonisolated(unsafe) let logs = logBuffer
                            Parallel.forEachChunk(count: Self.partitionCount, chunkSize: 1, threads: threads, makeState: ApplyScratch.init) {
                                scratch, p, _ in
                                var events: [FenceEvent] = []
                                var tally = (late: 0, duplicates: 0, applied: 0)
                                engine.applyPartition(
                                    &parts[p], number: p, range: partitionStart[p]..<partitionStart[p + 1], longIDsAt: partitionByteStart[p],
                                    batch: batch, coverage: coverage,
                                    batchEnd: batchEnd, lastPiece: lastPiece, ending: ending, scratch: &scratch, events: &events, tally: &tally,
                                    log: &logs[p])
                                out[p] = Self.sorted(consume events)
                                counts[p] = tally
                            }
                        }
                    }
                }
            }
        }
        swap(&parts, &partitions)
        batch.deallocateDevices()
        for (p, log) in partitionLogs.enumerated() { pairCounts.apply(log, partition: p) }
        clock.mark("apply")
        for c in partitionCounts {
            result.late += c.late
            result.duplicates += c.duplicates
            result.applied += c.applied
        }
        if let expired { latestExpiredRemoval = max(latestExpiredRemoval, store.remove(expired).latest) }
        watermark = batchEnd
        result.watermark = batchEnd
        if settings.idleEviction > 0 { evictionHorizon = batchEnd }
        result.events = Self.mergeSorted(&partitionEvents, threads: threads)
        assert(pairCountsCheck, "pair counts differ from the device states after a batch")
        clock.mark("merge")
        clock.report()
        return result
    }

    /// Applies one partition's fixes: interns its devices, applies each device's fixes in time
    /// order (stable for equal times; input order when the batch is time-ordered per device),
    /// dropping duplicates and late fixes; then, when fences expire in this batch (`ending`),
    /// closes the visits of the partition's devices that they end (only devices whose key bits
    /// meet theirs, and only in a partition that may hold one). `number` is the partition's.
    /// `longIDsAt` is where the partition's first long id is in `batch.longIDBytes`. Pairs
    /// made and dropped go to `log`.
    func applyPartition(
        _ partition: inout DevicePartition, number: Int, range: Range<Int>, longIDsAt: Int, batch: PartitionedFixes, coverage: Coverage?,
        batchEnd: Double, lastPiece: Bool, ending: EndingFences?, scratch: inout ApplyScratch, events: inout [FenceEvent],
        tally: inout (late: Int, duplicates: Int, applied: Int), log: inout PairLog
    ) {
        let times = batch.times
        let points = batch.points
        let margins = batch.margins
        var local = [Int32](repeating: 0, count: range.count)
        // Each id is moved out: this is its one use, and nothing is left to release later. An
        // empty one stands for the next long id in the block (an empty id is never a good fix).
        var cursor = longIDsAt
        for k in range {
            let id = batch.devices.moveElement(from: k)
            if id.isEmpty {
                let long = batch.longID(at: &cursor)
                local[k - range.lowerBound] = partition.intern(long: long, hash: batch.hashes[k])
            } else {
                local[k - range.lowerBound] = partition.intern(id, hash: batch.hashes[k])
            }
        }
        let mine = range
        let deviceCount = partition.states.count
        // Read directly, not through `Coverage`'s slices (a retain and release per fix).
        let hasCoverage = coverage != nil
        let coverOffsets = coverage?.offsets ?? []
        let coverHandles = coverage?.handles ?? []
        let coverKeys = coverage?.keys ?? []
        let expiring = ending != nil
        let endingBits = ending?.bits ?? 0
        // Where `applyCommon` may decide a fix (with fences expiring, per fix: below).
        let common = hasCoverage && !settings.crossDetection
        let evictAfter = settings.idleEviction > 0 ? max(settings.idleEviction, settings.exitDelay) : 0
        let evictionHorizon = evictionHorizon

        // Device states through one pointer for the whole partition: no uniqueness check of
        // the array per access. Interning (which appends) is done above.
        partition.states.withUnsafeMutableBufferPointer { states in
            func applyFix(_ f: Int, device d: Int) {
                let t = times[f]
                let last = states[d].lastTime
                if t < last {
                    tally.late += 1
                    return
                }
                if t == last {
                    tally.duplicates += 1
                    return
                }
                if evictAfter > 0 && states[d].hasFix && EventEngine.hasPassed(from: last, to: t, evictAfter) {
                    // Idle for the eviction time since its last fix: that visit ended then, as it
                    // would have had the batch ended in between.
                    endIdleVisits(state: &states[d], after: evictAfter, by: t, events: &events, log: &log)
                    states[d] = DeviceState(id: states[d].id)
                } else if evictAfter > 0 && !states[d].hasFix && EventEngine.hasPassed(from: t, to: evictionHorizon, evictAfter) {
                    // A device the engine holds no state for, with a fix older than what eviction
                    // has already judged: its state may have been dropped, so the fix is late.
                    tally.late += 1
                    return
                }
                tally.applied += 1
                if common {
                    let lo = coverOffsets[f]
                    let n = coverOffsets[f + 1] - lo
                    let slot = n > 0 ? Int(coverHandles[lo].rawValue) : -1
                    let key = n > 0 ? coverKeys[lo] : -1
                    // `ending`: with fences expiring by the batch's end, `applyCommon` first asks
                    // `fastPathUnaffected` (once one may have expired by t: only a device holding
                    // no pair of a fence the batch ends, covered by no fence expired by t).
                    if applyCommon(
                        time: t, point: points[f], covering: n, slot: slot, key: key, ending: endingBits, state: &states[d],
                        events: &events, log: &log)
                    {
                        return
                    }
                }
                scratch.near.removeAll(keepingCapacity: true)
                if hasCoverage {
                    for k in coverOffsets[f]..<coverOffsets[f + 1] {
                        let slot = Int(coverHandles[k].rawValue)
                        if expiring && store.slotExpires[slot] <= t { continue }
                        scratch.near.append(NearFence(key: coverKeys[k], slot: Int32(slot), cls: .deepInside))
                    }
                } else {
                    store.classify(
                        points[f], margin: margins[f], time: t, expiring: expiring, scratch: &scratch.containment,
                        into: &scratch.near)
                }
                if scratch.near.count > 1 { scratch.near.sort { $0.key < $1.key } }
                apply(time: t, point: points[f], near: scratch.near, state: &states[d], scratch: &scratch, events: &events, log: &log)
            }

            // The order to apply the partition's fixes in, as positions in `mine`; empty for
            // input order, which a live feed (in time order already) takes, reading the batch's
            // arrays front to back. Otherwise each device's fixes go together, in time order,
            // ties in input order. (Two calls of `applyFix`, not three: with a third,
            // `applyCommon` was no longer inlined, +2% instructions for the events case.)
            var order: [Int32] = []
            // One device's fixes (positions in `mine`): by time, ties in input order.
            func earlier(_ a: Int32, _ b: Int32) -> Bool {
                let ta = times[mine.lowerBound + Int(a)]
                let tb = times[mine.lowerBound + Int(b)]
                return ta < tb || (ta == tb && a < b)
            }
            if mine.count * 16 < deviceCount {
                // A few fixes among many devices (small batches of a large fleet): sorted by
                // device, then time, then input order, O(b log b), instead of the arrays below,
                // each as long as the partition's devices (500k devices in batches of 1,000).
                order = (0..<Int32(mine.count)).sorted { a, b in
                    let da = local[Int(a)]
                    let db = local[Int(b)]
                    return da != db ? da < db : earlier(a, b)
                }
            } else {
                var seen = [Double](repeating: -.infinity, count: deviceCount)
                var inOrder = true
                for (k, f) in mine.enumerated() {
                    let d = Int(local[k])
                    if times[f] < seen[d] {
                        inOrder = false
                        break
                    }
                    seen[d] = times[f]
                }
                if !inOrder {
                    var start = [Int](repeating: 0, count: deviceCount + 1)
                    for d in local { start[Int(d) + 1] += 1 }
                    for d in 0..<deviceCount { start[d + 1] += start[d] }
                    var fill = start
                    order = [Int32](repeating: 0, count: mine.count)
                    for k in 0..<mine.count {
                        let d = Int(local[k])
                        order[fill[d]] = Int32(k)
                        fill[d] += 1
                    }
                    for d in 0..<deviceCount where start[d + 1] > start[d] {
                        order[start[d]..<start[d + 1]].sort(by: earlier)
                    }
                }
            }
            if order.isEmpty {
                for (k, f) in mine.enumerated() { applyFix(f, device: Int(local[k])) }
            } else {
                for k in order { applyFix(mine.lowerBound + Int(k), device: Int(local[Int(k)])) }
            }
        }
        // Devices idle as of the batch's end go first: each one's visits end at its own idle
        // time (fences that expired before it, at their expiry), not at expiries after it.
        if evictAfter > 0 {
            evictIdle(&partition, asOf: batchEnd, after: evictAfter, exactly: !lastPiece, events: &events, log: &log)
        }
        if let ending, ending.mayBeHeld(inPartition: number, madeThisBatch: log) {
            for d in partition.states.indices where partition.states[d].mayHold(anyOf: ending.bits) {
                expirePairs(upTo: batchEnd, state: &partition.states[d], events: &events, log: &log)
            }
        }
    }

    /// Whether a fix at `time` of a device holding `heldKeys` can take `applyCommon` in a batch
    /// whose end expires the fences of key bits `ending`: no fence has expired by `time`, or
    /// the device holds no pair of one of them and the fence covering the fix (the first of
    /// `covering`, at `slot`) has not. Out of line: rare, and inlined it kept `applyCommon`
    /// from being inlined into every fix's apply.
    @inline(never)
    func fastPathUnaffected(time t: Double, heldKeys: UInt64, ending: UInt64, covering n: Int, slot: Int) -> Bool {
        !store.mayHaveExpired(asOf: t) || (heldKeys & ending == 0 && (n == 0 || !(store.slotExpires[slot] <= t)))
    }

    /// Exits, with reason `fence-expired` at the expiry time (or the device's last fix, when a
    /// restored state's fix came after an expiry given since), every pair whose fence expires at
    /// or before `time`. The dropped pairs go to `log`. A state with none is left as it is.
    func expirePairs(upTo time: Double, state: inout DeviceState, events: inout [FenceEvent], log: inout PairLog) {
        func ends(_ pair: PairState) -> Bool {
            guard let slot = store.slot(ofKey: pair.fence) else { return true }
            let e = store.slotExpires[Int(slot)]
            return !e.isNaN && e <= time
        }
        guard state.pairs.contains(where: ends) else { return }
        var kept: [PairState] = []
        for pair in state.pairs {
            guard ends(pair) else {
                kept.append(pair)
                continue
            }
            log.left(pair.fence)
            guard !pair.isUndetermined, let slot = store.slot(ofKey: pair.fence) else { continue }
            // Never before the device's last fix: within a run that fix came before the expiry
            // (a fix at or after it expires the pair first), but a state restored against a
            // fence given an expiry since holds fixes after it, and their events are written.
            let e = store.slotExpires[Int(slot)]
            let t = max(e, pair.enterTime, state.lastTime)
            emit(
                .exit, device: state.id, slot: Int(slot), time: t, lon: state.lastLon, lat: state.lastLat,
                reason: .fenceExpired, inside: t - pair.enterTime, into: &events)
        }
        state.setPairs(kept)
    }
}

/// The valid fixes of a batch in partition order: what each partition's worker reads.
struct PartitionedFixes: @unchecked Sendable {
    /// Each fix's device id when it is at most `DevicePartition.inlineBytes` long (held in the
    /// `String` itself: copying it touches nothing else), an empty string for a longer one:
    /// initialised by `scatter` in its place, moved out once by the partition that interns it
    /// (`applyPartition`), and the memory freed by `deallocateDevices` once every partition
    /// has. Nothing is left to release, one string at a time on one thread, when the batch ends.
    let devices: UnsafeMutableBufferPointer<String>
    /// The longer ids, back to back in partition order, each as its UTF-8 length (4 bytes,
    /// little-endian, unaligned) and its UTF-8: the fixes whose `devices` entry is empty, in
    /// order. Copied by `scatter` instead of the `String`: no reference count is touched per
    /// fix, and the partition's worker compares them in one block it reads front to back. No
    /// per-fix offset: that was a fifth array written in 64 runs, and the bucket phase with
    /// short ids took about 6 ms a million fixes longer with it (median 28.7 against 22.6).
    let longIDBytes: UnsafeMutableBufferPointer<UInt8>
    static let lengthBytes = 4
    var times: ContiguousArray<Double>
    var points: ContiguousArray<LonLat>
    var margins: ContiguousArray<Double>
    var hashes: ContiguousArray<UInt64>

    /// Room for `count` fixes whose long ids take `longIDBytes` bytes in all, left unset for
    /// `scatter`, which writes every element (there is one good fix per place).
    init(count: Int, longIDBytes bytes: Int, hysteresis: Bool) {
        hashes = ContiguousArray(uninitializedCount: count)
        devices = .allocate(capacity: count)
        longIDBytes = .allocate(capacity: max(1, bytes))
        times = ContiguousArray(uninitializedCount: count)
        points = ContiguousArray(uninitializedCount: count)
        margins = ContiguousArray(uninitializedCount: hysteresis ? count : 0)
    }

    /// The long id whose length starts at `cursor`, as UTF-8; `cursor` moves past it.
    @inline(__always)
    func longID(at cursor: inout Int) -> UnsafeBufferPointer<UInt8> {
        let n = Int(UInt32(littleEndian: UnsafeRawPointer(longIDBytes.baseAddress! + cursor).loadUnaligned(as: UInt32.self)))
        let id = UnsafeBufferPointer(start: longIDBytes.baseAddress! + cursor + Self.lengthBytes, count: n)
        cursor += Self.lengthBytes + n
        return id
    }

    /// Copies every good fix (`partitionOf[i] != UInt8.max`) to its place in partition
    /// order: chunk c's first fix of partition p goes to `places[c * partitionCount + p]`, its
    /// next ones after it, and its first long id (length, then bytes) to
    /// `bytePlaces[c * partitionCount + p]`. Positions are converted to WGS84 here; margins
    /// are the base margin plus the fix's accuracy.
    ///
    /// Each id is initialised in its place, not assigned over a placeholder: an assignment
    /// must first load what it overwrites (to release it), a cache miss per fix across the 64
    /// runs, after a serial fill of the placeholders.
    /// - Complexity: O(m + long id bytes), on `threads` workers, one chunk each at a time.
    mutating func scatter(
        from fixes: [Position], partitionOf: ContiguousArray<UInt8>, hashes h: ContiguousArray<UInt64>, places: [Int],
        bytePlaces: [Int], chunkSize: Int, baseMargin: Double, threads: Int
    ) {
        let hysteresis = !margins.isEmpty
        let partitions = EventEngine.partitionCount
        let deviceBuffer = devices
        let byteBuffer = longIDBytes
        times.withUnsafeMutableBufferPointer { timeBuffer in
            points.withUnsafeMutableBufferPointer { pointBuffer in
                margins.withUnsafeMutableBufferPointer { marginBuffer in
                    hashes.withUnsafeMutableBufferPointer { hashBuffer in
                        nonisolated(unsafe) let hashes = hashBuffer
                        nonisolated(unsafe) let devices = deviceBuffer
                        nonisolated(unsafe) let longIDBytes = byteBuffer
                        nonisolated(unsafe) let times = timeBuffer
                        nonisolated(unsafe) let points = pointBuffer
                        nonisolated(unsafe) let margins = marginBuffer
                        Parallel.forEachChunk(count: fixes.count, chunkSize: chunkSize, threads: threads, makeState: { () }) {
                            _, c, range in
                            var next = Array(places[(c * partitions)..<((c + 1) * partitions)])
                            var nextByte = Array(bytePlaces[(c * partitions)..<((c + 1) * partitions)])
                            fixes.withUnsafeBufferPointer { fixes in
                                for i in range {
                                    let p = Int(partitionOf[i])
                                    if p == Int(UInt8.max) { continue }
                                    let k = next[p]
                                    next[p] = k &+ 1
                                    let fix = fixes.baseAddress! + i
                                    // The fields, not `fix.pointee.wgs84`: that copied the whole
                                    // fix, its id retained and released (the bucket phase went
                                    // from 17-27 to 32-41 ms a million).
                                    points[k] = CoordinateConversion.toWGS84(
                                        LonLat(lon: fix.pointee.lon, lat: fix.pointee.lat), from: fix.pointee.coord)
                                    let n = fix.pointee.device.utf8.count
                                    if n > DevicePartition.inlineBytes {
                                        let b = nextByte[p]
                                        (devices.baseAddress! + k).initialize(to: "")
                                        UnsafeMutableRawPointer(longIDBytes.baseAddress! + b)
                                            .storeBytes(of: UInt32(n).littleEndian, as: UInt32.self)
                                        let start = b &+ Self.lengthBytes
                                        _ = UnsafeMutableBufferPointer(start: longIDBytes.baseAddress! + start, count: n)
                                            .initialize(from: fix.pointee.device.utf8)
                                        nextByte[p] = start &+ n
                                    } else {
                                        (devices.baseAddress! + k).initialize(to: fix.pointee.device)
                                    }
                                    times[k] = fix.pointee.time
                                    hashes[k] = h[i]
                                    if hysteresis { margins[k] = baseMargin + (fix.pointee.accuracy ?? 0) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Frees the ids' memory. Every id must have been moved out (each partition interns all of
    /// its fixes' ids).
    func deallocateDevices() {
        devices.deallocate()
        longIDBytes.deallocate()
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
    var stored: [PairState] = []
    var containment = ContainmentScratch()
    var segment = ContiguousArray<Int32>()
}
