/// The tracker's whole state as a value: every device's last fix and its non-outside pairs,
/// with fences named by id so a snapshot outlives the process that made it.
public struct TrackerSnapshot: Sendable, Hashable {
    public struct Pair: Sendable, Hashable {
        public var fence: String
        public var stayed: Bool
        public var exitPending: Bool
        public var enterTime: Double
        public var pendingSince: Double
        /// With hysteresis: the status is still unknown (`PairState.undetermined`); then
        /// `stayed` and `exitPending` are false and `enterTime` is the fix that left it so.
        public var undetermined = false

        /// Field by field, the fence id by its bytes (`ExactID`; see `FenceEvent.==`).
        public static func == (a: Pair, b: Pair) -> Bool {
            a.stayed == b.stayed && a.exitPending == b.exitPending && a.undetermined == b.undetermined && a.enterTime == b.enterTime
                && a.pendingSince == b.pendingSince && ExactID.sameBytes(a.fence, b.fence)
        }
    }
    public struct Device: Sendable, Hashable {
        public var id: String
        public var lastTime: Double
        public var lastLon: Double
        public var lastLat: Double
        public var pairs: [Pair]

        /// Field by field, the id by its bytes (`ExactID`).
        public static func == (a: Device, b: Device) -> Bool {
            a.lastTime == b.lastTime && a.lastLon == b.lastLon && a.lastLat == b.lastLat && a.pairs == b.pairs
                && ExactID.sameBytes(a.id, b.id)
        }
    }
    /// What a fence that device pairs name looked like when the snapshot was taken, so that a
    /// restore against other fences can report the change (`restoreReportingChanges`).
    public struct FenceRecord: Sendable, Hashable {
        public var id: String
        public var group: String?
        /// `FenceActions` raw value of the fence's own mask; 0xFF: the engine's.
        public var actions: UInt8
        /// `FenceStore.shapeDigest` of its stored geometry.
        public var shapeDigest: UInt64

        /// Field by field, id and group by their bytes (`ExactID`).
        public static func == (a: FenceRecord, b: FenceRecord) -> Bool {
            a.actions == b.actions && a.shapeDigest == b.shapeDigest && ExactID.sameBytes(a.id, b.id)
                && ExactID.sameBytes(a.group, b.group)
        }
    }
    public var watermark: Double
    public var devices: [Device]
    /// The fences the pairs name (format version 2; empty from version 1 files).
    public var fences: [FenceRecord] = []
    /// The engine's own action mask when the snapshot was taken, cross included if detected
    /// (version 2; nil from version 1 files).
    public var engineActions: FenceActions?
}

extension EventEngine {
    /// The tracker's state (not the fences, not the settings).
    /// - Parameter fenceRecords: also record each paired fence's group, mask and shape digest
    ///   (`fences`), which `restoreReportingChanges` needs to word the changes a restore meets.
    ///   A snapshot only ever given back to `restore` (a partition checkpoint) leaves them out:
    ///   the digests cost O(vertices) of every paired fence, each time.
    /// - Complexity: O(devices log devices + pairs), plus O(vertices of the paired fences) with
    ///   `fenceRecords`.
    public func snapshot(fenceRecords: Bool = true) -> TrackerSnapshot {
        var out: [TrackerSnapshot.Device] = []
        out.reserveCapacity(deviceCount)
        var named = Set<Int32>()  // the fences the pairs name, for their records
        // Dormant devices (evicted, not yet dropped: `DevicePartition`) are not there.
        for partition in partitions {
            for d in partition.states.indices where !partition.isDormant(d) {
                let state = partition.states[d]
                let pairs = state.pairs.compactMap { pair -> TrackerSnapshot.Pair? in
                    guard let slot = store.slot(ofKey: pair.fence) else { return nil }
                    if fenceRecords { named.insert(slot) }
                    return TrackerSnapshot.Pair(
                        fence: store.slotSettings[Int(slot)].id, stayed: pair.isStayed, exitPending: pair.isExitPending,
                        enterTime: pair.enterTime, pendingSince: pair.pendingSince, undetermined: pair.isUndetermined)
                }
                out.append(
                    TrackerSnapshot.Device(
                        id: state.id, lastTime: state.lastTime, lastLon: state.lastLon, lastLat: state.lastLat, pairs: pairs))
            }
        }
        UTF8Order.sort(&out) { $0.id }
        var records = named.map { slot in
            TrackerSnapshot.FenceRecord(
                id: store.slotSettings[Int(slot)].id, group: group(slot: Int(slot)), actions: store.slotSettings[Int(slot)].actions,
                shapeDigest: store.shapeDigest(slot: slot))
        }
        UTF8Order.sort(&records) { $0.id }
        return TrackerSnapshot(watermark: watermark, devices: out, fences: records, engineActions: engineMask)
    }

    /// Replaces the tracker's state with a snapshot taken against other fences or settings,
    /// and reports the change as the live engine reports edits (SPEC: exits when a fence is
    /// removed or replaced, Baidu's re-trigger when a mask changes), at each device's last fix:
    /// - a pair whose fence is gone: `exit`, reason `fence-removed`;
    /// - a pair whose fence has another shape (`FenceStore.shapeDigest`) that does not cover
    ///   the device's last fix: `exit`, reason `fence-replaced`; where the new shape covers it,
    ///   an exit waiting out a delay is cancelled, as `add` does;
    /// - a pair whose fence's mask now reports its status and did not: `enter` or `dwell`,
    ///   reason `actions-changed`.
    /// - a fence whose `expires` is at or before the snapshot's watermark: removed, as the
    ///   batch that passed its expiry removed it in the run that wrote the snapshot, with
    ///   `exit`, reason `fence-expired`, for pairs still inside it (a fence that was given an
    ///   expiry since). A later fix from before the expiry no longer sees it, as in one run
    ///   (`latestExpiredRemoval` says so); before, a chained run loaded it again.
    /// Exits of removed and reshaped fences are worded with the fence's old group and mask;
    /// `fence-expired` ones with the fence as loaded, whose expiry it is (as `add` and a
    /// batch's end word them). A version 1 snapshot has no fence
    /// records: pairs of missing fences are dropped without events, as `restore` does.
    /// - Returns: the pairs dropped, and the events in output order.
    /// - Complexity: O(devices + pairs + vertices of the recorded fences), plus a containment
    ///   test per pair of a changed shape.
    public mutating func restoreReportingChanges(_ snapshot: TrackerSnapshot) throws(FenceError) -> (dropped: Int, events: [FenceEvent]) {
        let dropped = try restore(snapshot)
        guard let oldEngine = snapshot.engineActions else { return (dropped, Self.sorted(expireAsOfWatermark())) }
        var records = IDTable<TrackerSnapshot.FenceRecord>()
        for r in snapshot.fences { records[r.id] = r }
        func oldMask(_ r: TrackerSnapshot.FenceRecord?) -> FenceActions {
            guard let r, r.actions != 0xFF else { return oldEngine }
            return FenceActions(rawValue: r.actions)
        }
        var events: [FenceEvent] = []
        // Pairs of fences no longer loaded were dropped by `restore`: their exits.
        for device in snapshot.devices {
            for pair in device.pairs where store.slotByID[pair.fence] == nil && !pair.undetermined {
                let record = records[pair.fence]
                guard oldMask(record).contains(.exit) else { continue }
                events.append(
                    Self.exitWithoutFix(
                        device: device.id, lastFix: (device.lastTime, device.lastLon, device.lastLat), enterTime: pair.enterTime,
                        fence: pair.fence, group: record?.group, reason: .fenceRemoved))
            }
        }
        // Fences expired as of the watermark go now (after the loop above, which would take
        // them for removed fences).
        events += expireAsOfWatermark()
        // Pairs of fences loaded with another shape, then with another mask. Each recorded
        // fence's shape is digested once (O(vertices)), not once per pair inside it.
        var reshaped: [Int: (group: String?, actions: FenceActions)] = [:]
        for r in snapshot.fences {
            guard let slot = store.slotByID[r.id], r.shapeDigest != store.shapeDigest(slot: slot) else { continue }
            reshaped[Int(slot)] = (r.group, oldMask(r))
        }
        let store = self.store
        events += endVisitsOfReshapedFences(Set(reshaped.keys.map { store.slotKey[$0] })) { reshaped[$0] }
        events += retrigger(previous: { oldMask(records[store.slotSettings[$0].id]) }, affects: { _ in true })
        return (dropped, Self.sorted(events))
    }

    /// Ends the visits of fences whose `expires` is at or before the watermark, and removes the
    /// fences: what the end of the batch that passed their expiry does. After `restore`, this
    /// brings the fences to what the run that wrote the snapshot had (a consistent snapshot
    /// holds no pair of such a fence, so there are no events then). `add` calls it for a fence
    /// whose expiry the clock has already passed.
    /// - Returns: the `exit` events (reason `fence-expired`), unsorted.
    /// - Complexity: O(1) when no fence has expired. Otherwise O(expired fences x log) to find
    ///   them, plus, as a fence edit (`updateDevices`), O(devices) of the partitions that may
    ///   hold a pair of one (`PairCounts`; none when no device holds one), reading the pairs
    ///   only of devices whose key bits meet theirs.
    public mutating func expireAsOfWatermark() -> [FenceEvent] {
        guard store.mayHaveExpired(asOf: watermark), watermark.isFinite else { return [] }
        let expired = store.expiredFences(asOf: watermark)
        var events: [FenceEvent] = []
        if !expired.slots.isEmpty {
            let ending = EndingFences(keys: expired.keys(in: store), counts: trustedPairCounts())
            let keys = Set(ending.keys)
            let time = watermark
            var log = PairLog()
            updateDevices(touching: { keys.contains($0) }, keyBits: ending.bits, within: ending.partitions) { state, engine in
                engine.expirePairs(upTo: time, state: &state, events: &events, log: &log)
            }
            pairCounts.apply(log)
        }
        latestExpiredRemoval = max(latestExpiredRemoval, store.remove(expired).latest)
        return events
    }

    /// Replaces the tracker's state with a snapshot, against the fences now in the store.
    /// - Returns: the number of visits (inside or stayed pairs) dropped because their fence is
    ///   not in the store; undetermined pairs of such fences go too, uncounted (no visit).
    /// - Throws: `FenceError` from `TrackerSnapshot.check` (a snapshot edited into values no
    ///   engine writes: a pair twice, a NaN time, a device twice); the state is then left as
    ///   it was.
    /// - Complexity: O(devices + pairs), the check included.
    @discardableResult
    public mutating func restore(_ snapshot: TrackerSnapshot) throws(FenceError) -> Int {
        try snapshot.check()
        partitions = [DevicePartition](repeating: DevicePartition(), count: Self.partitionCount)
        watermark = snapshot.watermark
        evictionHorizon = settings.idleEviction > 0 ? watermark : -.infinity
        var dropped = 0
        for device in snapshot.devices {
            let p = Self.partition(of: device.id)
            let d = partitions[p].intern(device.id)
            var state = DeviceState(id: device.id, lastTime: device.lastTime, lastLon: device.lastLon, lastLat: device.lastLat)
            var pairs: [PairState] = []
            for pair in device.pairs {
                guard let slot = store.slotByID[pair.fence] else {
                    if !pair.undetermined { dropped += 1 }
                    continue
                }
                pairs.append(
                    PairState(
                        fence: store.key(ofSlot: slot),
                        flags: (pair.stayed ? PairState.stayed : 0) | (pair.exitPending ? PairState.exitPending : 0)
                            | (pair.undetermined ? PairState.undetermined : 0),
                        enterTime: pair.enterTime, pendingSince: pair.pendingSince))
            }
            pairs.sort { $0.fence < $1.fence }
            state.setPairs(pairs)
            partitions[p].states[Int(d)] = state
        }
        pairCounts = PairCounts(partitions)
        return dropped
    }
}
