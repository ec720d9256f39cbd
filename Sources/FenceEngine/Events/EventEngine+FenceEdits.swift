extension EventEngine {
    /// Adds fences (see `FenceStore.add`). A fence that replaces one with the same id by
    /// another shape is re-checked against the last fix of every device inside it: where the
    /// new shape does not cover that fix, the device gets `exit` with reason `fence-replaced`
    /// (at its last fix's time), worded with the fence's group and mask as they were. Where
    /// the new shape covers it the visit goes on, and an exit waiting out an exit delay waits
    /// no more (that fix is inside the fence as it now is; the next fix outside starts the
    /// delay again). The same shape again ends no visit, not even one waiting out an exit
    /// delay: the delay runs on. A replacement with another mask re-triggers as
    /// `setActions(_:fence:)` does. No edit fires `dwell` of itself (a shorter dwell, or such a
    /// reshape, leaves it to the device's next fix still inside). A new fence covering a
    /// device produces `enter` at the device's next fix.
    ///
    /// A fence whose `expires` the engine's clock (`watermark`, the latest batch's latest fix)
    /// has already passed expires at once, as the end of the batch that passed it would have
    /// expired it, before reshapes and masks are looked at (as a restore does): the visits of
    /// a replaced fence end `fence-expired` (timed as at a batch's end; worded with the
    /// replacement's group and mask, whose expiry it is, as when a later batch's end finds it
    /// passed: so the wording does not depend on when the clock passes the expiry), with no
    /// `fence-replaced` exit or re-trigger, and no later fix
    /// enters it. So a snapshot taken now and restored, which drops such fences
    /// (`expireAsOfWatermark`), goes on with the same events. Before the first batch (no clock
    /// yet) such a fence waits for the first batch's end. Cost then: what an edit of the
    /// fence costs (`expireAsOfWatermark`: the partitions that may hold a visit of it, only
    /// the devices whose key bits meet its key read; nothing when no device holds one). Its
    /// result is still `.added` (it was accepted, then expired): `store.fence(id:)` is nil
    /// after.
    /// - Returns: per-fence results, and the events, in output order.
    public mutating func add(_ fences: [Fence], repair: Bool = false, threads: Int = FenceStore.defaultThreads)
        -> (results: [FenceAddResult], events: [FenceEvent])
    {
        // What each fence about to be replaced reported, to word its exits: its group and
        // action mask before the replacement, not the new fence's; and its shape.
        var before = IDTable<(group: String?, actions: FenceActions, shape: UInt64)>()
        for f in fences {
            if let slot = store.slotByID[f.id] {
                before[f.id] = (group(slot: Int(slot)), actions(slot: Int(slot)), store.shapeDigest(slot: slot))
            }
        }
        let results = store.add(fences, repair: repair, threads: threads)
        // Fences the clock already passed expire first, as a restore expires before it looks at
        // reshapes and masks: their visits end `fence-expired`, and, no longer stored, they
        // are no replacement to re-check or re-trigger (a re-trigger after the expiry exit
        // would leave the device inside a fence that is gone).
        let expired = expireAsOfWatermark()
        // Only replaced fences some device holds a pair with can end a visit or re-trigger.
        var remasked = Set<Int32>()
        var reshaped = Set<Int32>()
        let counts = trustedPairCounts()
        for r in results where r.outcome == .replaced {
            guard let slot = store.slotByID[r.id], let old = before[r.id] else { continue }
            let key = store.key(ofSlot: slot)
            guard counts[key] > 0 else { continue }
            if old.actions != actions(slot: Int(slot)) { remasked.insert(key) }
            if old.shape != store.shapeDigest(slot: slot) { reshaped.insert(key) }
        }
        guard !remasked.isEmpty || !reshaped.isEmpty else { return (results, Self.sorted(expired)) }
        let store = self.store
        var events = expired
        events += endVisitsOfReshapedFences(reshaped) { slot in
            guard let old = before[store.slotSettings[slot].id] else { return nil }
            return (old.group, old.actions)
        }
        // A replacement that brings another mask re-triggers, as `setActions(_:fence:)` does.
        if !remasked.isEmpty {
            let within = counts.partitions(keys: remasked)
            events += retrigger(
                previous: { before[store.slotSettings[$0].id]?.actions ?? [] }, within: within, keyBits: DeviceState.keyBits(remasked)
            ) { slot in
                remasked.contains(store.slotKey[slot])
            }
        }
        assert(pairCountsCheck, "pair counts differ from the device states after an add")
        return (results, Self.sorted(events))
    }

    /// Ends the visits whose fence has taken a shape that does not cover the device's last
    /// fix: `exit`, reason `fence-replaced`, at that fix, worded with the fence's group and
    /// mask as they were. A visit whose new shape covers the last fix goes on, and an exit it
    /// was waiting out (`exitDelay`) waits no more: that fix is inside the fence as it is now.
    /// `reshaped` holds those fences' keys; `before(slot)` gives their group and mask as they
    /// were.
    /// - Complexity: O(1) when no device holds a pair with any of them (`pairCounts`),
    ///   otherwise O(devices + pairs), a containment test per pair of a reshaped fence.
    mutating func endVisitsOfReshapedFences(
        _ keys: Set<Int32>, before: (Int) -> (group: String?, actions: FenceActions)?
    ) -> [FenceEvent] {
        let counts = trustedPairCounts()
        let reshaped = keys.filter { counts[$0] > 0 }
        guard !reshaped.isEmpty else { return [] }
        var events: [FenceEvent] = []
        var log = PairLog()
        defer { pairCounts.apply(log) }
        var scratch = ContainmentScratch()
        let within = counts.partitions(keys: reshaped)
        updateDevices(touching: { reshaped.contains($0) }, keyBits: DeviceState.keyBits(reshaped), within: within) { state, engine in
            let last = LonLat(lon: state.lastLon, lat: state.lastLat)
            var unit: (Double, Double, Double)?
            var kept: [PairState] = []
            for pair in state.pairs {
                // An undetermined pair has no visit to end: the next fix judges it afresh
                // against the new shape (and drops it if that fix is not near).
                if pair.isUndetermined || !reshaped.contains(pair.fence) {
                    kept.append(pair)
                    continue
                }
                guard let slot = engine.store.slot(ofKey: pair.fence), let old = before(Int(slot)) else {
                    kept.append(pair)
                    continue
                }
                if engine.store.covers(slot: slot, last, unit: &unit, scratch: &scratch) {
                    // The last fix is inside the fence as it is now: an exit waiting out a
                    // delay from a fix outside only the old shape is no longer waiting (SPEC:
                    // exit once the device has stayed outside for the delay); the next fix
                    // outside the new shape starts it again.
                    var p = pair
                    p.flags &= ~PairState.exitPending
                    kept.append(p)
                } else {
                    log.left(pair.fence)
                    if old.actions.contains(.exit) {
                        let id = engine.store.slotSettings[Int(slot)].id
                        events.append(Self.exitWithoutFix(state, pair, fence: id, group: old.group, reason: .fenceReplaced))
                    }
                }
            }
            state.setPairs(kept)
        }
        return events
    }

    /// The `exit` of a pair ended by an edit rather than a fix: at the device's last fix, worded
    /// with the fence's group as it was.
    static func exitWithoutFix(
        _ state: DeviceState, _ pair: PairState, fence id: String, group: String?, reason: FenceEventReason
    ) -> FenceEvent {
        exitWithoutFix(
            device: state.id, lastFix: (state.lastTime, state.lastLon, state.lastLat), enterTime: pair.enterTime, fence: id,
            group: group, reason: reason)
    }

    static func exitWithoutFix(
        device: String, lastFix: (time: Double, lon: Double, lat: Double), enterTime: Double, fence id: String, group: String?,
        reason: FenceEventReason
    ) -> FenceEvent {
        FenceEvent(
            time: lastFix.time, device: device, fence: id, group: group, kind: .exit, lon: lastFix.lon, lat: lastFix.lat,
            reason: reason, insideSeconds: lastFix.time - enterTime)
    }

    /// Removes a fence; every device inside gets `exit` with reason `fence-removed`.
    /// - Parameter time: the event time, or each device's last fix when that is later (an
    ///   exit never goes before the fix that last saw the device inside); nil, NaN or an
    ///   infinity uses each device's last fix time.
    public mutating func remove(id: String, at time: Double? = nil) -> [FenceEvent] { remove(ids: [id], at: time) }

    /// Removes these fences (ids not loaded are skipped), with `exit` (`fence-removed`) for
    /// devices inside: the events of `remove(id:)` for each in turn, in output order, from one
    /// pass over the partitions that may hold any of them.
    /// - Parameter time: as for `remove(id:at:)`.
    public mutating func remove(ids: [String], at time: Double? = nil) -> [FenceEvent] {
        // In naming order: the store reuses freed slots and keys last first, so the order of
        // removal decides which fences later adds get (and so a state file's bytes).
        var seen = Set<Int32>()
        var slots: [Int32] = []
        for id in ids {
            if let slot = store.slotByID[id], seen.insert(slot).inserted { slots.append(slot) }
        }
        return removeFences(slots, at: time)
    }

    /// Removes every fence of a group, with `exit` (`fence-removed`) for devices inside.
    /// - Parameter time: as for `remove(id:at:)`.
    public mutating func remove(group: String, at time: Double? = nil) -> [FenceEvent] {
        guard let g = store.groupByName[group] else { return [] }
        return removeFences(store.groupMembers[Int(g)].sorted(), at: time)
    }

    /// Removes every fence, with `exit` (`fence-removed`) for devices inside.
    /// - Parameter time: as for `remove(id:at:)`.
    public mutating func removeAll(at time: Double? = nil) -> [FenceEvent] {
        removeFences(store.allHandles().map(\.rawValue), at: time)
    }

    /// Removes these fences, with `exit` (`fence-removed`) for the devices inside.
    /// - Complexity: O(fences) when no device holds a pair with any of them (`pairCounts`),
    ///   otherwise O(devices + pairs) more.
    mutating func removeFences(_ slots: [Int32], at time: Double?) -> [FenceEvent] {
        guard !slots.isEmpty else { return [] }
        var slotOfKey: [Int32: Int32] = [:]
        let counts = trustedPairCounts()
        for slot in slots {
            let key = store.key(ofSlot: slot)
            if counts[key] > 0 { slotOfKey[key] = slot }
        }
        var events: [FenceEvent] = []
        var log = PairLog()
        if !slotOfKey.isEmpty {
            let within = counts.partitions(keys: slotOfKey.keys)
            updateDevices(touching: { slotOfKey[$0] != nil }, keyBits: DeviceState.keyBits(slotOfKey.keys), within: within) {
                state, engine in
                var kept: [PairState] = []
                for pair in state.pairs {
                    guard let slot = slotOfKey[pair.fence] else {
                        kept.append(pair)
                        continue
                    }
                    log.left(pair.fence)
                    if pair.isUndetermined { continue }
                    // Never before the fix that last saw the device inside (an `inside_s` below
                    // zero, an exit before events already out), and never NaN (library audit).
                    let t = time.map { $0.isFinite ? max($0, state.lastTime) : state.lastTime } ?? state.lastTime
                    engine.emit(
                        .exit, device: state.id, slot: Int(slot), time: t, lon: state.lastLon, lat: state.lastLat,
                        reason: .fenceRemoved, inside: t - pair.enterTime, into: &events)
                }
                state.setPairs(kept)
            }
        }
        pairCounts.apply(log)
        if slots.count == store.count {
            store.removeAll()
        } else {
            for slot in slots { store.removeSlot(slot) }
            store.compactIfNeeded()
        }
        assert(pairCountsCheck, "pair counts differ from the device states after a removal")
        return Self.sorted(events)
    }

    /// Changes the engine-wide action mask. Pairs of fences without their own mask whose
    /// current status is newly reported get it again with reason `actions-changed` (Baidu's
    /// re-trigger): `enter` for inside, `dwell` for stayed, at the device's last fix. Bits
    /// of the raw value that are no action are dropped (`EventSettings.actions`).
    public mutating func setActions(_ actions: FenceActions) -> [FenceEvent] {
        let before = settings
        settings.actions = actions
        let store = self.store
        return retrigger(before: before) { slot in store.slotSettings[slot].actions == 0xFF }
    }

    /// Changes one fence's own action mask (nil: follow the engine's), with the same re-trigger.
    /// Bits of the raw value that are no action are dropped (0xFF would read as "the engine's").
    public mutating func setActions(_ actions: FenceActions?, fence id: String) -> [FenceEvent] {
        guard let slot = store.slotByID[id] else { return [] }
        let before = self.actions(slot: Int(slot))
        store.slotSettings[Int(slot)].actions = actions?.intersection(.all).rawValue ?? 0xFF
        let key = store.key(ofSlot: slot)
        let counts = trustedPairCounts()
        guard counts[key] > 0 else { return [] }
        let store = self.store
        return retrigger(previous: { _ in before }, within: counts.partitions(key: key), keyBits: DeviceState.keyBit(key)) { s in
            store.slotKey[s] == key
        }
    }

    /// Changes settings other than the action mask (dwell, hysteresis, exit delay, initial
    /// events, cross detection): they apply from the next fix; no events.
    /// - Throws: `FenceError` (invalid-setting) when the changed settings have a `problem`;
    ///   the settings are then left as they were.
    public mutating func updateSettings(_ body: (inout EventSettings) -> Void) throws(FenceError) -> [FenceEvent] {
        let before = settings
        body(&settings)
        if let problem = settings.problem {
            settings = before
            throw FenceError(.invalidSetting, reason: problem)
        }
        if settings.idleEviction == 0 {
            // No more evictions to make room: devices evicted and not yet dropped go now, and
            // the idle queues (made again, from every device, if eviction comes back).
            for p in partitions.indices {
                partitions[p].dropDormant()
                partitions[p].idle = IdleQueue()
            }
        }
        let store = self.store
        return retrigger(before: before) { slot in store.slotSettings[slot].actions == 0xFF }
    }

    func retrigger(before: EventSettings, affects: (Int) -> Bool) -> [FenceEvent] {
        var old = self
        old.settings = before
        let old_ = old
        return retrigger(previous: { old_.actions(slot: $0) }, affects: affects)
    }

    /// The re-trigger events of the pairs whose fence `affects` (by slot), whose status
    /// `previous` (the fence's mask before, by slot) did not report and its mask now does, in
    /// the partitions whose bit `within` sets. `keyBits` holds the `DeviceState.keyBit` of
    /// every fence key `affects` accepts (all bits: any); devices whose `heldKeys` miss them
    /// are passed over without reading their pairs.
    /// - Complexity: O(devices) of those partitions, plus the pairs of devices whose bits meet
    ///   `keyBits`.
    func retrigger(previous: (Int) -> FenceActions, within: UInt64 = ~0, keyBits: UInt64 = ~0, affects: (Int) -> Bool)
        -> [FenceEvent]
    {
        var events: [FenceEvent] = []
        let store = self.store
        func touches(_ key: Int32) -> Bool { store.slot(ofKey: key).map { affects(Int($0)) } ?? false }
        forEachState(touching: touches, keyBits: keyBits, within: within) { state in
            for pair in state.pairs where !pair.isUndetermined {
                guard let slot = store.slot(ofKey: pair.fence).map(Int.init), affects(slot) else { continue }
                let kind: FenceEventKind = pair.isStayed ? .dwell : .enter
                guard !previous(slot).contains(kind.action) else { continue }
                emit(
                    kind, device: state.id, slot: slot, time: state.lastTime, lon: state.lastLon, lat: state.lastLat,
                    reason: .actionsChanged, inside: kind == .dwell ? state.lastTime - pair.enterTime : nil, into: &events)
            }
        }
        return Self.sorted(events)
    }
}
