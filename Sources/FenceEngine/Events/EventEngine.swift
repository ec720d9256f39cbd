import SpatialIndex

/// The outcome of evaluating one batch of fixes.
public struct EvaluationResult: Sendable {
    /// Events in (time, device, fence, event) order.
    public var events: [FenceEvent]
    /// Fixes refused before they reached any state: input index and reason.
    public var rejected: [(index: Int, reason: String)]
    /// Fixes older than the device's last applied fix (from an earlier batch): dropped.
    public var late: Int
    /// Fixes with the same device and time as another: all but the first dropped.
    public var duplicates: Int
    /// Fixes applied.
    public var applied: Int
    /// The earliest time among the fixes not rejected (+infinity when none), late and
    /// duplicate ones included.
    public var earliest: Double = .infinity
    /// The engine's watermark once these fixes were applied (`EventEngine.watermark`): no
    /// later event is timed before its written millisecond, so events before it can be written
    /// (see `evaluate(_:threads:matchBudget:each:)`).
    public var watermark: Double = -.infinity
}

/// Per-device fence status and events, server-side for a whole fleet (SPEC "Status and events").
///
/// Holds the fence store and, per device, only the pairs that are not `outside` (sparse).
/// Devices and fences are interned to integers. Fence edits go through the engine so that
/// devices inside get their `exit` events. A value type: copying an engine copies its state
/// lazily (copy-on-write).
///
/// Event time is the fixes' time. `evaluate` orders each device's fixes itself; a fix older
/// than the device's last applied fix is late and dropped, one with the same time is a
/// duplicate and dropped. Output does not depend on the thread count.
public struct EventEngine: Sendable {
    public internal(set) var store: FenceStore
    public internal(set) var settings: EventSettings

    /// Devices, by `stableHash64(id) % partitionCount`.
    var partitions = [DevicePartition](repeating: DevicePartition(), count: EventEngine.partitionCount)
    static let partitionCount = 64
    /// Devices holding a pair with each fence: edits skip the devices when none does.
    var pairCounts = PairCounts()
    /// Partitions whose devices edits have read (`updateDevices`), for tests of what an edit
    /// costs.
    var partitionsReadByEdits = 0
    /// Devices whose pairs edits have read (`updateDevices`: those whose `heldKeys` meet the
    /// edit's keys), for the same tests.
    var pairListsReadByEdits = 0
    /// The latest event time applied (fences expire against it).
    public internal(set) var watermark: Double = -.infinity
    /// The latest `expires` of a fence removed as expired, at the end of a batch, by `add` (a
    /// fence the clock already passed) or by a restore (-infinity before any): a fix of a
    /// later batch from before it no longer sees that fence, as it would have in one batch
    /// (input out of time order across batches). `fence eval` warns.
    public internal(set) var latestExpiredRemoval: Double = -.infinity
    /// With idle eviction on: the time of the last batch's end (its watermark), -infinity
    /// before any. Devices idle for the eviction time as of then were dropped, so a fix for a
    /// device without state that is that old as of then (`hasPassed`) is late.
    var evictionHorizon: Double = -.infinity

    /// An engine over `store` with the default settings.
    public init(store: FenceStore = FenceStore()) {
        self.store = store
        self.settings = EventSettings()
    }

    /// An engine over `store` with `settings`.
    /// - Throws: `FenceError` (invalid-setting) naming the setting, when `settings.problem`
    ///   is not nil (a NaN, negative or infinite time or margin).
    public init(store: FenceStore = FenceStore(), settings: EventSettings) throws(FenceError) {
        if let problem = settings.problem { throw FenceError(.invalidSetting, reason: problem) }
        self.store = store
        self.settings = settings
    }

    /// Devices with state.
    public var deviceCount: Int { partitions.reduce(0) { $0 + $1.states.count - $1.dormantCount } }

    @inline(__always)
    static func partition(of device: String) -> Int { partition(hash: stableHash64(device)) }

    @inline(__always)
    static func partition(hash: UInt64) -> Int { Int(hash % UInt64(partitionCount)) }

    func state(of device: String) -> DeviceState? {
        let h = stableHash64(device)
        let p = Self.partition(hash: h)
        guard let d = partitions[p].find(device, hash: h), !partitions[p].isDormant(Int(d)) else { return nil }
        return partitions[p].states[Int(d)]
    }

    /// True when `pairCounts` holds what the device states do: a recount, O(devices + pairs).
    var pairCountsAreExact: Bool { pairCounts.agrees(with: PairCounts(partitions)) }

    /// For `assert` after a batch or an edit: the recount, and every device's key bits
    /// (`heldKeysAreExact`), of an engine of up to 4,096 devices and 65,536 fence keys (debug
    /// builds only: a recount costs O(devices + pairs + keys), and after every small batch of a
    /// larger engine it made debug runs of a stream 70 times slower).
    var pairCountsCheck: Bool {
        deviceCount > 4_096 || store.keySlot.count > 65_536 || (pairCountsAreExact && heldKeysAreExact)
    }

    /// True when every device's `heldKeys` are the bits of the pairs it holds. O(devices + pairs).
    var heldKeysAreExact: Bool { partitions.allSatisfy { $0.states.allSatisfy(\.heldKeysMatchPairs) } }

    /// `pairCounts`, recounted first if they went wrong (`PairCounts.trusted`): what the edits
    /// read.
    mutating func trustedPairCounts() -> PairCounts {
        if !pairCounts.trusted { pairCounts = PairCounts(partitions) }
        return pairCounts
    }

    /// Calls `body` with the state of every device that holds a pair whose fence key
    /// `touches`, in the partitions whose bit `within` sets (`PairCounts.partitions(key:)`), and
    /// the engine to read (the fences, settings). `keyBits` has the `DeviceState.keyBit` of
    /// every key `touches` accepts: a device whose `heldKeys` miss them is passed over without
    /// reading its pairs. The partitions are moved out of the engine while it runs, so that
    /// reading it copies none of them, and `body` can change a state in place.
    /// - Complexity: O(devices) of those partitions, plus O(pairs) of the devices whose bits
    ///   meet `keyBits` (about 1 in 64 of those holding one pair, for one fence), plus `body`.
    mutating func updateDevices(
        touching touches: (Int32) -> Bool, keyBits: UInt64, within: UInt64,
        _ body: (inout DeviceState, borrowing EventEngine) -> Void
    ) {
        var parts: [DevicePartition] = []
        swap(&parts, &partitions)
        let engine = self
        for p in parts.indices where within & (1 << UInt64(p)) != 0 {
            partitionsReadByEdits += 1
            parts[p].states.withUnsafeMutableBufferPointer { states in
                for d in states.indices {
                    guard states[d].mayHold(anyOf: keyBits) else {
                        assert(!states[d].pairs.contains { touches($0.fence) }, "a device's key bits miss a pair it holds")
                        continue
                    }
                    pairListsReadByEdits += 1
                    if states[d].pairs.contains(where: { touches($0.fence) }) { body(&states[d], engine) }
                }
            }
        }
        swap(&parts, &partitions)
    }

    /// Calls `body` with the state of every device in the partitions whose bit `within` sets
    /// and whose `heldKeys` meet `keyBits`: `updateDevices`' walk for readers, which change
    /// nothing. `touches` names the fence keys `keyBits` stands for; debug builds check that no
    /// device passed over holds a pair of one.
    /// - Complexity: O(devices) of those partitions, plus `body` for each device read (about 1
    ///   in 64 of those holding one pair, for one fence).
    func forEachState(
        touching touches: (Int32) -> Bool, keyBits: UInt64, within: UInt64, _ body: (borrowing DeviceState) -> Void
    ) {
        for (p, partition) in partitions.enumerated() where within & (1 << UInt64(p)) != 0 {
            for state in partition.states {
                guard state.mayHold(anyOf: keyBits) else {
                    assert(!state.pairs.contains { touches($0.fence) }, "a device's key bits miss a pair it holds")
                    continue
                }
                body(state)
            }
        }
    }

    /// A device's status against a fence.
    public func status(device: String, fence: String) -> FenceStatus {
        guard let state = state(of: device) else { return .unknown }
        guard state.hasFix else { return .unknown }
        guard let slot = store.slotByID[fence] else { return .outside }
        let key = store.key(ofSlot: slot)
        guard let pair = state.pairs.first(where: { $0.fence == key }) else { return .outside }
        if pair.isUndetermined { return .unknown }
        return pair.isStayed ? .stayed : .inside
    }

    /// Ids of the fences a device is inside (or stayed in), sorted.
    public func fences(insideOf device: String) -> [String] {
        guard let state = state(of: device) else { return [] }
        return UTF8Order.sorted(state.pairs.compactMap { $0.isUndetermined ? nil : store.slot(ofKey: $0.fence).map { store.slotSettings[Int($0)].id } })
    }

    /// Ids of the devices inside (or stayed in) a fence, sorted: who is at the depot now, as
    /// `fences(insideOf:)` answers where a device is. A pair whose exit waits out an exit
    /// delay is still inside; an `unknown` one (hysteresis) is not; an unknown fence has none.
    /// - Complexity: O(1) when no device holds a pair with the fence (`PairCounts`, when
    ///   trusted); otherwise O(devices) of the partitions that may hold one, reading the pairs
    ///   only of devices whose key bits meet the fence's (about 1 in 64 of those holding one
    ///   pair), as a fence edit does.
    public func devices(insideOf fence: String) -> [String] {
        guard let slot = store.slotByID[fence] else { return [] }
        let key = store.key(ofSlot: slot)
        let within = pairCounts.trusted ? pairCounts.partitions(key: key) : ~0
        var ids: [String] = []
        forEachState(touching: { $0 == key }, keyBits: DeviceState.keyBit(key), within: within) { state in
            if state.pairs.contains(where: { $0.fence == key && !$0.isUndetermined }) { ids.append(state.id) }
        }
        return UTF8Order.sorted(ids)
    }

    /// Bytes of tracker state: devices, their pairs and the id table (capacity-based),
    /// devices evicted and not yet dropped included (`DevicePartition`'s dormant ones, which
    /// `deviceCount` leaves out).
    public var stateFootprint: Int {
        var total = 0
        for p in partitions {
            total += p.states.capacity * MemoryLayout<DeviceState>.stride
            total += p.hashes.capacity * 8 + p.table.capacity * 4 + p.longIDBytes.capacity + p.longIDEnds.capacity * 8
            total += p.idle.heap.entries.capacity * MemoryLayout<TimeHeap.Entry>.stride
            for d in p.states {
                if d.pairs.capacity > 0 { total += 32 + d.pairs.capacity * MemoryLayout<PairState>.stride }
                if d.id.utf8.count > DevicePartition.inlineBytes { total += d.id.utf8.count + 32 }
            }
        }
        return total
    }

    /// The action mask that applies to a fence slot: its own, or the engine's (with `cross`
    /// when cross detection is on).
    @inline(__always)
    func actions(slot: Int) -> FenceActions {
        let own = store.slotSettings[slot].actions
        if own != 0xFF { return FenceActions(rawValue: own) }
        return engineMask
    }

    /// The mask of fences without their own: the engine's, with `cross` when it is detected.
    var engineMask: FenceActions { settings.crossDetection ? settings.actions.union(.cross) : settings.actions }

    /// Whether `duration` seconds have passed from `start` to `end` (two times as read),
    /// allowing for how finely a Double holds them: `end - start` may fall short by 1 µs, or by
    /// twice the step between Doubles at the larger of the two times if that is more.
    ///
    /// A time written to the millisecond is held to the nearest Double: within 0.1-0.5 µs in
    /// 2004-2038 (a step of 2^-22 s), but within 2-15 µs in the years 2514-6325 and 881-1425
    /// (2^-18 to 2^-15 s). So a fix written exactly at enter + dwell can come out a rounding
    /// early, and must still dwell (a fixed 1 µs missed such fixes past 2242; independent
    /// audit). The slack stays under 61 µs in the years 1-9999, far below the millisecond
    /// events are written to. The one rule for dwell, the exit delay and idle eviction, in a
    /// batch and at its end alike, so the cut into batches cannot change what passed.
    /// A start of -infinity (no fix yet) has always passed; an end of -infinity (no batch yet)
    /// never has.
    /// - Complexity: O(1): a few compares and an exponent read.
    @inline(__always)
    static func hasPassed(from start: Double, to end: Double, _ duration: Double) -> Bool {
        let elapsed = end - start
        if elapsed >= duration - 1e-6 { return true }
        // Usable times are under 2^38 s, where twice the step is 2^-14 s (61 µs): further
        // short, nothing to weigh. Two compares for the common case (a dwell not yet due).
        if elapsed < duration - 0x1p-14 { return false }
        return passedWithinRounding(elapsed, start, end, duration)
    }

    /// `hasPassed`'s rare case, out of line: `elapsed` short of `duration` by 1-61 µs.
    @inline(never)
    static func passedWithinRounding(_ elapsed: Double, _ start: Double, _ end: Double, _ duration: Double) -> Bool {
        // The step at an infinite time is NaN, which no compare passes.
        elapsed >= duration - 2 * Swift.max(abs(start), abs(end)).ulp
    }

    /// The dwell time that applies to a fence slot.
    @inline(__always)
    func dwell(slot: Int) -> Double {
        let own = store.slotSettings[slot].dwell
        return own.isNaN ? settings.dwell : own
    }

    func group(slot: Int) -> String? {
        let g = store.slotSettings[slot].group
        return g < 0 ? nil : store.groupNames[Int(g)]
    }
}
