extension FenceStore {
    /// Removes the fence with this id.
    /// - Returns: the removed fence (in WGS84), or nil when no fence has the id.
    /// - Complexity: O(log n) for the index plus O(v) to rebuild the returned value.
    @discardableResult
    public mutating func remove(id: String) -> Fence? {
        guard let slot = slotByID[id] else { return nil }
        let fence = self.fence(slot: slot)
        removeSlot(slot)
        return fence
    }

    /// Removes every fence of a group (Baidu's removeGeoFenceRegionsWithCustomID).
    /// - Returns: the ids removed, sorted.
    @discardableResult
    public mutating func remove(group: String) -> [String] {
        guard let g = groupByName[group] else { return [] }
        let slots = groupMembers[Int(g)].sorted()
        let ids = slots.map { slotSettings[Int($0)].id }
        for slot in slots { removeSlot(slot) }
        compactIfNeeded()
        return UTF8Order.sorted(ids)
    }

    /// Removes every fence.
    /// - Returns: the ids removed, sorted.
    @discardableResult
    public mutating func removeAll() -> [String] {
        let ids = UTF8Order.sorted(Array(slotByID.ids))
        let limits = self.limits
        self = FenceStore()
        self.limits = limits
        return ids
    }

    /// The ids of fences whose `expires` is at or before `time`, sorted.
    /// - Complexity: O(k log k) for the k entries of `expiryQueue` at or before `time` (the
    ///   expired fences, and stale entries not yet dropped) once some fence may have expired
    ///   by `time`, O(1) otherwise (before the earliest expiry, or with none).
    public func expired(asOf time: Double) -> [String] { expiredFences(asOf: time).ids(in: self) }

    /// Fences whose `expires` is at or before a time, as found by `expiredFences(asOf:)`, and
    /// the earliest `expires` of the others (+infinity): valid until the store changes.
    struct ExpiredFences: Sendable {
        var time = -Double.infinity
        var slots: [Int32] = []
        /// At or before the earliest `expires` of the others.
        var nextEarliest = Double.infinity

        /// Their keys (`slotKey`), ascending.
        func keys(in store: FenceStore) -> [Int32] { slots.map { store.slotKey[Int($0)] }.sorted() }

        /// Their ids, sorted.
        func ids(in store: FenceStore) -> [String] { UTF8Order.sorted(slots.map { store.slotSettings[Int($0)].id }) }
    }

    /// The live fences whose `expires` is at or before `time`.
    /// - Complexity: as `expired(asOf:)`.
    func expiredFences(asOf time: Double) -> ExpiredFences {
        guard mayHaveExpired(asOf: time) else { return ExpiredFences(time: time, nextEarliest: earliestExpiry) }
        Self.expiryScans.add(1, ordering: .relaxed)
        var found = ExpiredFences(time: time)
        found.nextEarliest = expiryQueue.forEach(atOrBefore: time) { entry in
            // A stale entry: its fence is gone, or has another expiry now (its own entry).
            if let slot = slot(ofKey: entry.id), slotExpires[Int(slot)] == entry.time { found.slots.append(slot) }
        }
        // A fence replaced with the same expiry has two entries.
        found.slots.sort()
        found.slots = found.slots.enumerated().filter { $0.offset == 0 || found.slots[$0.offset - 1] != $0.element }.map(\.element)
        return found
    }

    /// Removes fences whose `expires` is at or before `time`.
    /// - Returns: the ids removed, sorted.
    @discardableResult
    public mutating func removeExpired(asOf time: Double) -> [String] { removeExpiredFences(asOf: time).ids }

    /// `removeExpired`, also giving the latest `expires` among the fences removed (-infinity
    /// when none was).
    /// - Complexity: O(slots) once some fence may have expired by `time` (then
    ///   `earliestExpiry` is made exact, so the next scan waits for the next expiry), plus
    ///   the removals; O(1) before.
    mutating func removeExpiredFences(asOf time: Double) -> (ids: [String], latest: Double) {
        remove(expiredFences(asOf: time))
    }

    /// Removes the fences `expiredFences(asOf:)` found, the store unchanged since.
    /// - Returns: their ids, sorted, and the latest `expires` among them (-infinity for none).
    /// - Complexity: O(removals), plus the compaction when due.
    mutating func remove(_ expired: ExpiredFences) -> (ids: [String], latest: Double) {
        // In id order, as removal by id went: the order frees slots and keys for later adds.
        var slots = expired.slots
        UTF8Order.sort(&slots) { slotSettings[Int($0)].id }
        let ids = slots.map { slotSettings[Int($0)].id }
        while let first = expiryQueue.first, first.time <= expired.time { expiryQueue.removeFirst() }
        earliestExpiry = expired.nextEarliest
        var latest = -Double.infinity
        for slot in slots {
            latest = max(latest, slotExpires[Int(slot)])
            removeSlot(slot)
        }
        compactIfNeeded()
        return (ids, latest)
    }

    /// Frees a slot. `keepKey` keeps the fence's key reserved, for a replacement under the same id.
    mutating func removeSlot(_ slot: Int32, keepKey: Bool = false) {
        let s = Int(slot)
        let key = slotKey[s]
        keySlot[Int(key)] = -1
        if !keepKey { freeKeys.append(key) }
        slotKey[s] = -1
        let boxCount = Int(slotBoxCount[s])
        for part in 0..<(boxCount > 2 ? 1 : boxCount) {
            let item = Self.item(slot: slot, part: part)
            if !tree.remove(id: item) { pendingBoxes.removeAll { $0.0 == item } }
        }
        if boxCount > 2 {
            let item = Self.item(slot: slot, part: 1)
            if tree.isShared(id: item) {
                tree.removeShared(id: item, boxes: sharedBoxes[slot]!)
            } else {
                pendingBoxes.removeAll { $0.0 == item }
            }
            sharedBoxes[slot] = nil
        }
        slotByID[slotSettings[s].id] = nil
        if slotSettings[s].group >= 0 { groupMembers[Int(slotSettings[s].group)].remove(slot) }
        if !slotExpires[s].isNaN { expiring -= 1 }
        properties[slot] = nil
        deadGeometry += Int(slotGeometryCount[s])
        liveGeometry -= Int(slotGeometryCount[s])
        slotHot[s] = 0
        slotSettings[s].id = ""
        slotSettings[s].group = -1
        slotExpires[s] = .nan
        slotBoxCount[s] = 0
        freeSlots.append(slot)
    }

    /// Moves the records this store names into new records of its own (`moveRecords`) once
    /// the space of its removed fences is more than half of what it wrote or loaded (what
    /// other copies of the store appended is not counted: it is theirs). Amortised O(1) per
    /// removed double.
    mutating func compactIfNeeded() {
        guard deadGeometry > 4096 && deadGeometry > liveGeometry else { return }
        moveRecords(room: 0)
    }
}
