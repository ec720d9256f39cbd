import SpatialIndex

/// What happened to one fence of a batch add.
public struct FenceAddResult: Sendable, Hashable {
    public enum Outcome: Sendable, Hashable {
        case added
        /// A fence with the same id was stored and has been replaced.
        case replaced
        case rejected(FenceError)
    }
    public var id: String
    public var outcome: Outcome
    /// GEOS MakeValid changed the geometry (only when the add asked for repair).
    public var repaired: Bool

    public var error: FenceError? {
        if case .rejected(let e) = outcome { return e }
        return nil
    }
}

extension FenceStore {
    /// Adds fences; a fence whose id is already stored replaces it.
    ///
    /// Each fence is checked (see SPEC "Fences"): a bad one gets `.rejected` with the reason and
    /// the rest still load. Within one batch a repeated id is rejected; the first one stands.
    /// Validation runs on `threads` workers, each with its own GEOS context.
    /// - Parameters:
    ///   - repair: fix invalid polygons with GEOS MakeValid instead of rejecting them.
    /// - Returns: one result per input fence, in input order.
    /// - Complexity: O(n log n) in the total number of vertices; a batch larger than half the
    ///   store rebuilds the index by bulk loading, a smaller one inserts into it. A batch of more
    ///   than 64 into a new or emptied store (a start-up load) is also stored on `threads`
    ///   workers (`loadFresh`); other batches are stored on one.
    @discardableResult
    public mutating func add(_ fences: [Fence], repair: Bool = false, threads: Int = FenceStore.defaultThreads)
        -> [FenceAddResult]
    {
        add(fences, repair: repair, threads: threads, pristinePath: true)
    }

    /// `add`, with `pristinePath` false keeping a bulk load into a pristine store on the one-by-one
    /// path: tests compare the two.
    mutating func add(_ fences: [Fence], repair: Bool, threads: Int, pristinePath: Bool) -> [FenceAddResult] {
        var clock = PhaseTimer("add \(fences.count) fences")
        var results = [FenceAddResult?](repeating: nil, count: fences.count)
        // Each id's first position in the batch (into a pristine store this becomes the id table).
        var firstIndex = [ExactID: Int32]()
        firstIndex.reserveCapacity(fences.count)
        // The ids only: a copy of each fence would retain its rings (a cache miss a fence).
        for i in fences.indices {
            let id = fences[i].id
            if id.isEmpty {
                results[i] = FenceAddResult(
                    id: "", outcome: .rejected(FenceError(.missingID, fence: "#\(i + 1)", reason: "the fence has no id")),
                    repaired: false)
            } else if let first = firstIndex.updateValue(Int32(i), forKey: ExactID(id)) {
                firstIndex[ExactID(id)] = first
                results[i] = FenceAddResult(
                    id: id,
                    outcome: .rejected(
                        FenceError(.duplicateID, fence: id, reason: "the id appears more than once in this batch")),
                    repaired: false)
            }
        }
        let skip = results.map { $0 != nil }
        clock.mark("ids")
        var (normalized, sizes) = Self.normalizeAll(fences, skip: skip, repair: repair, limits: limits, threads: threads)
        clock.mark("check")
        let bulk = fences.count > 64 && fences.count > count / 2
        // Into an empty store, a large batch goes in spatial order straight away (see
        // `reorderSpatially`); otherwise in input order. Key and index share one word to sort.
        var order = ContiguousArray<UInt64>(fences.indices.map { UInt64($0) })
        if bulk && count == 0 {
            for i in fences.indices { order[i] = UInt64(sizes[i].key) << 32 | UInt64(i) }
            order.sort()
        }
        clock.mark("order")
        if bulk && pristinePath && isPristine {
            fences.withUnsafeBufferPointer { fences in
                loadFresh(
                    fences, normalized: &normalized, sizes: sizes, order: order, skip: skip, firstIndex: firstIndex,
                    results: &results, threads: threads, clock: &clock)
            }
            clock.mark("index")
        } else {
            let extra = sizes.reduce(0) { $0 + $1.doubles }
            reserveCapacity(slots: slotHot.count + fences.count, geometryRoom: extra)
            insertEach(fences, normalized: &normalized, order: order, skip: skip, bulk: bulk, results: &results)
            clock.mark("store")
            if bulk {
                if tree.count == 0 { rebuildIndex() } else { reorderSpatially() }
            }
            clock.mark("index")
        }
        compactIfNeeded()
        clock.mark("compact")
        clock.report()
        // Moved out, not copied: no reference counting on a million results.
        return results.withUnsafeMutableBufferPointer { decided in
            [FenceAddResult](unsafeUninitializedCapacity: decided.count) { out, initialized in
                for i in decided.indices { (out.baseAddress! + i).initialize(to: decided[i].take()!) }
                initialized = decided.count
            }
        }
    }

    /// `add`'s path into a store that holds or has held fences: each checked fence in `order`
    /// into a free or new slot, replacing a stored fence with its id; its index boxes into the
    /// tree at once (`bulk` false) or left pending for the caller to pack.
    private mutating func insertEach(
        _ fences: [Fence], normalized: inout [Result<NormalizedFence, FenceError>?], order: ContiguousArray<UInt64>,
        skip: [Bool], bulk: Bool, results: inout [FenceAddResult?]
    ) {
        fences.withUnsafeBufferPointer { fences in
            for packed in order {
                let i = Int(packed & 0xFFFF_FFFF)
                guard !skip[i] else { continue }
                // Moved out, not copied: no reference counting on a million records (a copy
                // retained each record's two arrays: a cache miss each).
                guard let taken = normalized[i].take() else { continue }
                switch consume taken {
                case .failure(let error):
                    results[i] = FenceAddResult(id: fences[i].id, outcome: .rejected(error), repaired: false)
                case .success(let flat):
                    var replaced = false
                    var key: Int32?
                    if let old = slotByID[fences[i].id] {
                        key = slotKey[Int(old)]
                        removeSlot(old, keepKey: true)
                        replaced = true
                    }
                    insert(fences.baseAddress! + i, flat, key: key, indexNow: !bulk)
                    results[i] = FenceAddResult(id: fences[i].id, outcome: replaced ? .replaced : .added, repaired: flat.repaired)
                }
            }
        }
    }

    /// Adds one fence; throws its error when it is rejected.
    /// - Returns: true when it replaced a fence with the same id.
    @discardableResult
    public mutating func add(_ fence: Fence, repair: Bool = false) throws(FenceError) -> Bool {
        let result = add([fence], repair: repair, threads: 1)[0]
        switch result.outcome {
        case .added: return false
        case .replaced: return true
        case .rejected(let e): throw e
        }
    }

    /// Each fence checked and laid out (nil where `skip` says), on `threads` workers; beside
    /// it, for a good one, its record's size in doubles, the Morton key of its `orderBox`'s
    /// centre and its number of index boxes (0, 0 and 0 otherwise). Taken while the record is
    /// fresh in the worker's cache: read later from the results, on one thread, each was a
    /// reference count touched a fence, a cache miss each at a million fences.
    static func normalizeAll(_ fences: [Fence], skip: [Bool], repair: Bool, limits: FenceLimits, threads: Int)
        -> (results: [Result<NormalizedFence, FenceError>?], sizes: [(doubles: Int, key: UInt32, boxes: Int)])
    {
        var out = [Result<NormalizedFence, FenceError>?](repeating: nil, count: fences.count)
        var sizes = [(doubles: Int, key: UInt32, boxes: Int)](repeating: (0, 0, 0), count: fences.count)
        out.withUnsafeMutableBufferPointer { buffer in
            sizes.withUnsafeMutableBufferPointer { sizeBuffer in
                nonisolated(unsafe) let results = buffer
                nonisolated(unsafe) let sizes = sizeBuffer
                Parallel.forEachChunk(count: fences.count, chunkSize: 256, threads: threads, makeState: { GEOSContextSlot() }) {
                    slot, _, range in
                    for i in range where !skip[i] {
                        let result = FenceValidation.normalize(fences[i], repair: repair, limits: limits, geos: slot.context)
                        if case .success(let flat) = result {
                            sizes[i] = (flat.geometry.count, SpatialOrder.key(centreOf: orderBox(flat.boxes)), flat.boxes.count)
                        }
                        results[i] = result
                    }
                }
            }
        }
        return (out, sizes)
    }

    /// Grows every per-slot array and the id table once, instead of by doubling while adding.
    /// Where one is too small it grows to at least twice its capacity: reserving exactly
    /// what one more fence needs copied every array (and rehashed the id table) on each
    /// single-fence add, O(n) a fence (338 adds a second at 100k fences).
    /// The records move to a bigger reservation only when `geometryRoom` more doubles do not
    /// fit in theirs (`GeometryRecords`).
    mutating func reserveCapacity(slots: Int, geometryRoom: Int) {
        func grow<T>(_ array: inout ContiguousArray<T>, _ n: Int) {
            if array.capacity < n { array.reserveCapacity(max(n, 2 * array.capacity)) }
        }
        grow(&slotHot, slots)
        grow(&slotSettings, slots)
        grow(&slotGeometryCount, slots)
        grow(&slotExpires, slots)
        grow(&slotBoxCount, slots)
        grow(&slotKey, slots)
        grow(&keySlot, slots)
        if slotByID.capacity < slots { slotByID.reserveCapacity(max(slots, 2 * slotByID.capacity)) }
        reserveGeometry(room: geometryRoom)
    }

    /// Makes room for `room` more doubles of records: when they do not fit, the records this
    /// store names move to records of its own (`moveRecords`) with room to spare (at least as
    /// much again as they take: amortised O(1) a double).
    /// - Complexity: O(1) when they fit, O(slots + records) otherwise.
    mutating func reserveGeometry(room: Int) {
        guard geometry.room < room else { return }
        moveRecords(room: room, atLeastAsMuchAgain: true)
    }

    /// Moves the records of the live slots, in slot order, into new records of this store's
    /// own with room for `room` more doubles (and as much again as they take when
    /// `atLeastAsMuchAgain`), and points the slots' hot words at them. Only those records
    /// are read: what removed fences and other copies of the store left behind stays with
    /// the old records (copies still appending there are not read while they write).
    /// - Complexity: O(slots + records).
    mutating func moveRecords(room: Int, atLeastAsMuchAgain: Bool = false) {
        let old = geometry
        var live = 0
        for s in slotHot.indices where HotWord.isLive(slotHot[s]) { live += Int(slotGeometryCount[s]) }
        geometry = GeometryRecords(room: live + (atLeastAsMuchAgain ? max(room, live) : room))
        for s in slotHot.indices where HotWord.isLive(slotHot[s]) {
            let n = Int(slotGeometryCount[s])
            guard let start = geometry.claim(n) else { preconditionFailure("records sized for the live slots are full") }
            (geometry.base + start).initialize(from: old.base + geometryStart(s), count: n)
            slotHot[s] = HotWord.moved(slotHot[s], to: start)
        }
        liveGeometry = live
        deadGeometry = 0
    }

    /// Appends a record to the shared records and returns where it starts.
    /// - Complexity: O(record), plus a move of every record when there is no room
    ///   (`reserveGeometry`).
    mutating func appendRecord(_ record: UnsafeBufferPointer<Double>) -> Int {
        // Another copy of the store may take the room between the check and the claim.
        while true {
            if let start = geometry.claim(record.count) {
                if let from = record.baseAddress { (geometry.base + start).initialize(from: from, count: record.count) }
                return start
            }
            reserveGeometry(room: record.count)
        }
    }

    /// Stores one checked fence in a free or new slot. `fence` is read in place (a pointer,
    /// so its shape arrays are not retained: they are not needed, `flat` has the geometry).
    mutating func insert(_ fence: UnsafePointer<Fence>, _ flat: NormalizedFence, key: Int32?, indexNow: Bool) {
        let slot: Int32
        if let free = freeSlots.popLast() {
            slot = free
        } else {
            slot = Int32(slotHot.count)
            slotHot.append(0)
            slotSettings.append(SlotSettings())
            slotGeometryCount.append(0)
            slotExpires.append(.nan)
            slotBoxCount.append(0)
            slotKey.append(-1)
        }
        let s = Int(slot)
        let k: Int32
        if let key {
            k = key
        } else if let free = freeKeys.popLast() {
            k = free
        } else {
            k = Int32(keySlot.count)
            keySlot.append(-1)
        }
        slotKey[s] = k
        keySlot[Int(k)] = slot
        let start = flat.geometry.withUnsafeBufferPointer { appendRecord($0) }
        liveGeometry += flat.geometry.count
        slotHot[s] = HotWord.make(start: start, kind: flat.flatKind, gridOffset: flat.smallGridOffset)
        slotGeometryCount[s] = Int32(flat.geometry.count)
        slotSettings[s] = SlotSettings(of: fence)
        slotExpires[s] = fence.pointee.expires ?? .nan
        if let e = fence.pointee.expires {
            expiring += 1
            earliestExpiry = min(earliestExpiry, e)
            queueExpiry(e, key: k)
        }
        if let group = fence.pointee.group {
            let g = internGroup(group)
            slotSettings[s].group = g
            groupMembers[Int(g)].insert(slot)
        }
        if !fence.pointee.properties.isEmpty { properties[slot] = fence.pointee.properties }
        slotByID[fence.pointee.id] = slot
        precondition(!flat.boxes.isEmpty && flat.boxes.count <= Int(UInt8.max), "a fence with \(flat.boxes.count) index boxes")
        slotBoxCount[s] = UInt8(flat.boxes.count)
        let shared = flat.boxes.count > 2
        if shared { sharedBoxes[slot] = Array(flat.boxes.dropFirst()) }
        for part in flat.boxes.indices {
            let item = Self.item(slot: slot, part: part)
            if !indexNow {
                pendingBoxes.append((item, flat.boxes[part]))
            } else if shared && part > 0 {
                tree.insertShared(id: item, box: flat.boxes[part])
            } else {
                tree.insert(id: item, box: flat.boxes[part])
            }
        }
    }

    /// Renumbers the fences in spatial order (Morton order of their `orderBox`'s centre),
    /// rewrites their geometry records in that order, and packs the index anew.
    ///
    /// Afterwards fences that are near on the map are near in memory, so a batch of positions
    /// queried in spatial order finds the next fence's slot and record already in cache.
    /// Handles from before are invalid.
    /// - Complexity: O(n + total geometry), plus rehashing the id table.
    mutating func reorderSpatially() {
        var boxes: [Int32: Box] = [:]
        for (item, box) in pendingBoxes where item & 1 == 0 { boxes[item >> 1] = box }
        var live: [(key: UInt32, slot: Int32)] = []
        live.reserveCapacity(count)
        for s in slotHot.indices where HotWord.isLive(slotHot[s]) {
            let first = boxes[Int32(s)] ?? tree.box(of: Int32(s) * 2)!
            let box = sharedBoxes[Int32(s)].map { Self.orderBox([first] + $0) } ?? first
            live.append((SpatialOrder.key(centreOf: box), Int32(s)))
        }
        live.sort { $0.key < $1.key || ($0.key == $1.key && $0.slot < $1.slot) }
        var allBoxes: [Int32: Box] = [:]
        allBoxes.reserveCapacity(live.count * 2)
        for (item, box) in pendingBoxes { allBoxes[item] = box }
        pendingBoxes = []

        var next = FenceStore()
        next.limits = limits
        next.groupNames = groupNames
        next.groupByName = groupByName
        next.groupMembers = [Set<Int32>](repeating: [], count: groupNames.count)
        next.keySlot = keySlot
        next.freeKeys = freeKeys
        next.geometry = GeometryRecords(room: liveGeometry)
        next.liveGeometry = liveGeometry
        next.slotByID.reserveCapacity(live.count)
        var ids = ContiguousArray<Int32>()
        var treeBoxes = ContiguousArray<Box>()
        var sharedIDs: [Int32] = []
        ids.reserveCapacity(live.count * 2)
        treeBoxes.reserveCapacity(live.count * 2)
        for (newSlot, entry) in live.enumerated() {
            let s = Int(entry.slot)
            let start = geometryStart(s)
            let n = Int(slotGeometryCount[s])
            let moved = next.appendRecord(UnsafeBufferPointer(start: geometry.base + start, count: n))
            next.slotHot.append(HotWord.moved(slotHot[s], to: moved))
            next.slotGeometryCount.append(slotGeometryCount[s])
            next.slotSettings.append(slotSettings[s])
            next.slotExpires.append(slotExpires[s])
            next.slotBoxCount.append(slotBoxCount[s])
            let slot = Int32(newSlot)
            next.slotKey.append(slotKey[s])
            next.keySlot[Int(slotKey[s])] = slot
            next.slotByID[slotSettings[s].id] = slot
            if slotSettings[s].group >= 0 { next.groupMembers[Int(slotSettings[s].group)].insert(slot) }
            if let p = properties[entry.slot] { next.properties[slot] = p }
            if !slotExpires[s].isNaN {
                next.expiring += 1
                next.earliestExpiry = min(next.earliestExpiry, slotExpires[s])
            }
            if let rest = sharedBoxes[entry.slot] {
                let old = Self.item(slot: entry.slot, part: 0)
                ids.append(Self.item(slot: slot, part: 0))
                treeBoxes.append(allBoxes[old] ?? tree.box(of: old)!)
                let item = Self.item(slot: slot, part: 1)
                sharedIDs.append(item)
                next.sharedBoxes[slot] = rest
                for box in rest {
                    ids.append(item)
                    treeBoxes.append(box)
                }
            } else {
                for part in 0..<Int(slotBoxCount[s]) {
                    let old = Self.item(slot: entry.slot, part: part)
                    ids.append(Self.item(slot: slot, part: part))
                    treeBoxes.append(allBoxes[old] ?? tree.box(of: old)!)
                }
            }
        }
        next.tree = RTree(ids: ids, boxes: treeBoxes, shared: sharedIDs)
        next.rebuildExpiryQueue()
        self = next
    }

    /// The box whose centre places a fence in the spatial order: its first box, or the union
    /// of all when it has more than two (pieces of a long fence, the first at one end).
    static func orderBox(_ boxes: [Box]) -> Box {
        boxes.count > 2 ? boxes.dropFirst().reduce(boxes[0]) { $0.union($1) } : boxes[0]
    }

    /// Packs the index anew over every stored box (Sort-Tile-Recursive).
    mutating func rebuildIndex() {
        var ids = ContiguousArray<Int32>()
        var boxes = ContiguousArray<Box>()
        ids.reserveCapacity(tree.count + pendingBoxes.count)
        boxes.reserveCapacity(tree.count + pendingBoxes.count)
        var sharedIDs: [Int32] = []
        for slot in slotHot.indices where HotWord.isLive(slotHot[slot]) {
            let count = Int(slotBoxCount[slot])
            for part in 0..<(count > 2 ? 1 : count) {
                let item = Self.item(slot: Int32(slot), part: part)
                if let box = tree.box(of: item) {
                    ids.append(item)
                    boxes.append(box)
                }
            }
            if count > 2 {
                // Its other boxes: in the index as one shared item, or still pending (below).
                let item = Self.item(slot: Int32(slot), part: 1)
                sharedIDs.append(item)
                if tree.isShared(id: item) {
                    for box in sharedBoxes[Int32(slot)]! {
                        ids.append(item)
                        boxes.append(box)
                    }
                }
            }
        }
        for (item, box) in pendingBoxes {
            ids.append(item)
            boxes.append(box)
        }
        pendingBoxes = []
        tree = RTree(ids: ids, boxes: boxes, shared: sharedIDs)
        queriesWithoutGrid = 0
    }

    mutating func internGroup(_ name: String) -> Int32 {
        if let g = groupByName[name] { return g }
        let g = Int32(groupNames.count)
        groupNames.append(name)
        groupByName[name] = g
        groupMembers.append([])
        return g
    }
}

/// A worker's GEOS context, made on first use.
final class GEOSContextSlot {
    private var made: GEOSContext?
    func context() -> GEOSContext {
        if let made { return made }
        let c = GEOSContext()
        made = c
        return c
    }
}
