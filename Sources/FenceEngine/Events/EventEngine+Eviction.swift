extension EventEngine {
    /// Ends every open visit of a device that has been idle for `after` seconds since its last
    /// fix: `exit` with reason `device-idle` at the last fix time plus `after`, at the last
    /// fix's position, with the time inside up to the last fix. Pending exits end the same way.
    /// The exit is never later than the clock that found the device idle (`by`: a fix of the
    /// device, or a batch's latest fix time). Such a clock can be short of the sum by the
    /// rounding `hasPassed` allows: a fix written exactly `after` seconds later, whose sum
    /// rounds an ulp past it. The exit must not come after the enter that fix causes, and a
    /// batch ending at that fix (or at another device's fix at that time) must time it as one
    /// batch does (an independent audit found a batch's end timing it at the sum: after the
    /// re-enter, or a written millisecond later). What is left: a batch ending on another
    /// device's fix within that rounding before the sum, with the device's own next fix at or
    /// after the sum, times the exit at the batch's end where one batch times it at the sum,
    /// less than 61 µs apart (written the same but across a millisecond's rounding edge, or
    /// against an expiry between the two). Timing every idle exit at the earliest clock
    /// `hasPassed` accepts would remove that too, but would put every exit a microsecond or so
    /// before the time the README promises. The dropped pairs go to `log`.
    ///
    /// A visit whose fence expired before then (at or before that time) ended at the expiry
    /// first: `fence-expired` at the expiry, as it would have been had a fix or a batch's end
    /// come in between (an independent audit found the idle exit winning, and the outcome
    /// depending on the batch size).
    /// - Complexity: O(p) for p pairs.
    func endIdleVisits(
        state: inout DeviceState, after: Double, by clock: Double, events: inout [FenceEvent], log: inout PairLog
    ) {
        let t = min(state.lastTime + after, clock)
        if store.mayHaveExpired(asOf: t) { expirePairs(upTo: t, state: &state, events: &events, log: &log) }
        for pair in state.pairs where !pair.isUndetermined {
            guard let slot = store.slot(ofKey: pair.fence) else { continue }
            emit(
                .exit, device: state.id, slot: Int(slot), time: t, lon: state.lastLon, lat: state.lastLat,
                reason: .deviceIdle, inside: max(0, state.lastTime - pair.enterTime), into: &events)
        }
        log.left(state.pairs)
        state.setPairs([])
    }

    /// Drops from a partition every device whose last fix is at least `after` seconds before
    /// `time`, ending its visits first. A dropped device is marked dormant (`DevicePartition`:
    /// its state fresh, as a device never seen) and the partition rebuilt without them only
    /// once they are a quarter of it: rebuilding whenever one device went cost a churning fleet
    /// fed in small batches a rebuild of every partition every batch (an audit: 100k devices,
    /// `--batch 1000`, 5.68 s against 0.95 s without eviction).
    /// `exactly` (at the end of a piece of a batch, `pieces`): only devices whose last fix plus
    /// `after` is at or before `time`, without `hasPassed`'s rounding slack, so every exit is
    /// timed at that sum, as one pass over the whole batch times it.
    ///
    /// The devices that may be idle come from the partition's `IdleQueue`, earliest entry
    /// first, while an entry's time is within `hasPassed`'s largest slack of idle: an entry's
    /// time is at most its device's last fix, so every idle device is found. A device that is
    /// not idle gets a new entry at its last fix, after the walk when it is itself within the
    /// slack (so the walk ends).
    /// - Complexity: O((k + j) log d) for the partition's d devices, k of them new since the
    ///   last call and j read (each device about once an eviction time, however small the
    ///   batches), plus O(d) amortised over d/4 evictions for the rebuild.
    func evictIdle(
        _ partition: inout DevicePartition, asOf time: Double, after: Double, exactly: Bool, events: inout [FenceEvent],
        log: inout PairLog
    ) {
        partition.idle.catchUp(partition.states)
        // Every entry `hasPassed` or the exact rule could accept: `hasPassed` is false when
        // the elapsed time is short of `after` by 2^-14 s or more, and so is the exact rule.
        func mayBeIdle(_ last: Double) -> Bool { time - last >= after - 0x1p-14 }
        var nearlyIdle: [Int32] = []
        while let entry = partition.idle.first, mayBeIdle(entry.time) {
            partition.idle.removeFirst()
            let d = Int(entry.id)
            guard d < partition.states.count && !partition.isDormant(d) else { continue }
            let last = partition.states[d].lastTime
            guard exactly ? last + after <= time : EventEngine.hasPassed(from: last, to: time, after) else {
                if mayBeIdle(last) {
                    nearlyIdle.append(entry.id)
                } else {
                    partition.idle.push(time: last, device: entry.id)
                }
                continue
            }
            endIdleVisits(state: &partition.states[d], after: after, by: time, events: &events, log: &log)
            partition.makeDormant(d)
        }
        for d in nearlyIdle { partition.idle.push(time: partition.states[Int(d)].lastTime, device: d) }
        partition.dropDormantIfMany()
    }
}
