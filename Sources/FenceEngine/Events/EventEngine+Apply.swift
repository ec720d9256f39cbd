extension EventEngine {
    /// Appends an event if the fence's action mask reports its kind.
    @inline(__always)
    func emit(
        _ kind: FenceEventKind, device: String, slot: Int, time: Double, lon: Double, lat: Double, initial: Bool = false,
        reason: FenceEventReason? = nil, inside: Double? = nil, into events: inout [FenceEvent]
    ) {
        guard actions(slot: slot).contains(kind.action) else { return }
        events.append(
            FenceEvent(
                time: time, device: device, fence: store.slotSettings[slot].id, group: group(slot: slot), kind: kind,
                lon: lon, lat: lat, initial: initial, reason: reason, insideSeconds: inside))
    }

    /// Marks the pair stayed and reports `dwell` when its fence's dwell time has passed at `t`;
    /// nothing when it is already stayed or the time has not come. The one dwell rule of every
    /// apply path.
    @inline(__always)
    func dwellIfDue(
        _ pair: inout PairState, slot: Int, device: String, time t: Double, point: LonLat, events: inout [FenceEvent]
    ) {
        guard !pair.isStayed && EventEngine.hasPassed(from: pair.enterTime, to: t, dwell(slot: slot)) else { return }
        pair.flags |= PairState.stayed
        emit(.dwell, device: device, slot: slot, time: t, lon: point.lon, lat: point.lat, inside: t - pair.enterTime, into: &events)
    }

    /// True when `near` lists exactly the stored pairs' fences, each deep inside, and no exit is
    /// pending nor status undetermined: applying the fix changes nothing but dwell.
    @inline(__always)
    static func unchanged(_ pairs: [PairState], _ near: [NearFence]) -> Bool {
        guard pairs.count == near.count else { return false }
        for k in pairs.indices
        where pairs[k].fence != near[k].key || near[k].cls != .deepInside || pairs[k].flags & (PairState.exitPending | PairState.undetermined) != 0 {
            return false
        }
        return true
    }

    /// The common cases of `apply`, decided without building the near list: a device covered
    /// by at most one fence and inside at most one, with no cross detection (the caller checks
    /// that), holding no pair of a fence expired by `t` and covered by none (`ending`: the key
    /// bits of the fences the batch's end expires, 0 for none; `fastPathUnaffected`). Handles staying outside, staying inside one
    /// fence (dwell), entering one fence from outside (on a first fix, the initial enter),
    /// and leaving one fence when exits fire at once. Returns false, having changed nothing,
    /// for any other case, which `apply` then takes. A pair made or dropped goes to `log`.
    ///
    /// - Parameters:
    ///   - covering: how many fences cover the fix (hysteresis off: all of them count as deep
    ///     inside); `slot` and `key` are the one's when there is one.
    /// - Complexity: O(1).
    @inline(__always)
    func applyCommon(
        time t: Double, point: LonLat, covering n: Int, slot: Int, key: Int32, ending: UInt64, state: inout DeviceState,
        events: inout [FenceEvent], log: inout PairLog
    ) -> Bool {
        if ending != 0 && !fastPathUnaffected(time: t, heldKeys: state.heldKeys, ending: ending, covering: n, slot: slot) { return false }
        let p = state.pairs.count
        // An undetermined pair (left by hysteresis, since turned off) is `apply`'s to settle.
        if p == 1 && state.pairs[0].isUndetermined { return false }
        if n == 0 {
            if p == 1 && settings.exitDelay <= 0 {
                let pair = state.pairs[0]
                if let s = store.slot(ofKey: pair.fence) {
                    emit(.exit, device: state.id, slot: Int(s), time: t, lon: point.lon, lat: point.lat, inside: t - pair.enterTime, into: &events)
                }
                // Freed, as `apply` does: a device outside everything holds no pair storage.
                log.left(pair.fence)
                state.setPairs([])
            } else if p != 0 {
                return false
            }
        } else if n == 1 {
            if p == 0 {
                let first = !state.hasFix
                if !first || settings.initialEvents {
                    emit(.enter, device: state.id, slot: slot, time: t, lon: point.lon, lat: point.lat, initial: first, into: &events)
                }
                var pair = PairState(fence: key, flags: 0, enterTime: t, pendingSince: 0)
                dwellIfDue(&pair, slot: slot, device: state.id, time: t, point: point, events: &events)
                log.entered(key)
                state.appendPair(pair)
            } else if p == 1 && state.pairs[0].fence == key && !state.pairs[0].isExitPending {
                let id = state.id
                state.updatePair(0) { dwellIfDue(&$0, slot: slot, device: id, time: t, point: point, events: &events) }
            } else {
                return false
            }
        } else {
            return false
        }
        state.lastTime = t
        state.lastLon = point.lon
        state.lastLat = point.lat
        return true
    }

    /// Applies one fix of one device: enter, exit (at once or after the exit delay), dwell, and
    /// cross when enabled.
    ///
    /// - Parameters:
    ///   - near: the fences near the fix, ascending by key, with where the fix is against each;
    ///     a stored pair whose fence is not listed is far outside.
    /// Pairs made and dropped go to `log`.
    /// - Complexity: O(p + k) for p stored pairs and k near fences, plus the cross test.
    func apply(
        time t: Double, point: LonLat, near: [NearFence], state: inout DeviceState,
        scratch: inout ApplyScratch, events: inout [FenceEvent], log: inout PairLog
    ) {
        if store.mayHaveExpired(asOf: t) { expirePairs(upTo: t, state: &state, events: &events, log: &log) }
        if !settings.crossDetection && state.hasFix && Self.unchanged(state.pairs, near) {
            // The common case: the device is inside exactly the fences it was inside, deeply
            // (or outside all of them), with no exit pending. Only dwell can fire.
            let id = state.id
            for k in state.pairs.indices where !state.pairs[k].isStayed {
                state.updatePair(k) { dwellIfDue(&$0, slot: Int(near[k].slot), device: id, time: t, point: point, events: &events) }
            }
            state.lastTime = t
            state.lastLon = point.lon
            state.lastLat = point.lat
            return
        }
        let d = state.id
        let first = !state.hasFix
        let previous = state.hasFix ? LonLat(lon: state.lastLon, lat: state.lastLat) : nil
        let delay = settings.exitDelay
        // Scratch buffers swapped out and back: no allocation per fix.
        var pairs: [PairState] = []
        swap(&pairs, &scratch.pairs)
        pairs.removeAll(keepingCapacity: true)
        var stored: [PairState] = []
        swap(&stored, &scratch.stored)
        stored.removeAll(keepingCapacity: true)
        stored.append(contentsOf: state.pairs)

        func outside(_ pair: PairState, slot: Int) {
            if delay <= 0 {
                emit(.exit, device: d, slot: slot, time: t, lon: point.lon, lat: point.lat, inside: t - pair.enterTime, into: &events)
                return
            }
            var p = pair
            if !p.isExitPending {
                p.flags |= PairState.exitPending
                p.pendingSince = t
                pairs.append(p)
            } else if EventEngine.hasPassed(from: p.pendingSince, to: t, delay) {
                emit(.exit, device: d, slot: slot, time: t, lon: point.lon, lat: point.lat, inside: t - pair.enterTime, into: &events)
            } else {
                pairs.append(p)
            }
        }
        func inside(_ pair: PairState, slot: Int) {
            var p = pair
            p.flags &= ~PairState.exitPending
            dwellIfDue(&p, slot: slot, device: d, time: t, point: point, events: &events)
            pairs.append(p)
        }

        // The enter of a pair not inside before: `initial` when the device was never seen
        // outside the fence (its first fix, or an undetermined pair).
        func enter(_ key: Int32, slot: Int, initial: Bool) {
            if !initial || settings.initialEvents {
                emit(.enter, device: d, slot: slot, time: t, lon: point.lon, lat: point.lat, initial: initial, into: &events)
            }
            inside(PairState(fence: key, flags: 0, enterTime: t, pendingSince: 0), slot: slot)
        }

        var i = 0
        var j = 0
        while i < stored.count || j < near.count {
            if j == near.count || (i < stored.count && stored[i].fence < near[j].key) {
                // Far outside: a visit ends; an undetermined status becomes outside.
                if !stored[i].isUndetermined, let slot = store.slot(ofKey: stored[i].fence) { outside(stored[i], slot: Int(slot)) }
                i += 1
            } else if i == stored.count || near[j].key < stored[i].fence {
                if near[j].cls == .deepInside {
                    enter(near[j].key, slot: Int(near[j].slot), initial: first)
                } else if first && near[j].cls != .farOutside {
                    // A first fix within the margin: the status is not known yet, and holds.
                    pairs.append(PairState(fence: near[j].key, flags: PairState.undetermined, enterTime: t, pendingSince: 0))
                }
                j += 1
            } else if stored[i].isUndetermined {
                switch near[j].cls {
                case .farOutside: break
                case .outsideBand, .insideBand: pairs.append(stored[i])
                case .deepInside: enter(near[j].key, slot: Int(near[j].slot), initial: true)
                }
                i += 1
                j += 1
            } else {
                let slot = Int(near[j].slot)
                switch near[j].cls {
                case .farOutside: outside(stored[i], slot: slot)
                // Within the margin on either side the status holds (inside): a pending exit
                // is cancelled and dwell is judged as for any fix inside.
                case .outsideBand, .insideBand, .deepInside: inside(stored[i], slot: slot)
                }
                i += 1
                j += 1
            }
        }

        if let previous, settings.crossDetection {
            crossEvents(
                device: d, from: previous, to: point, time: t, before: stored, after: pairs, near: near, scratch: &scratch,
                events: &events)
        }
        log.changed(from: stored, to: pairs)
        if pairs.isEmpty {
            state.setPairs([])
        } else {
            state.copyPairs(from: pairs)
        }
        swap(&pairs, &scratch.pairs)
        swap(&stored, &scratch.stored)
        state.lastTime = t
        state.lastLon = point.lon
        state.lastLat = point.lat
    }
}
