import Dispatch
import Foundation
import SpatialIndex

/// A handle to a stored fence, valid until the next change to the store.
public struct FenceHandle: Sendable, Hashable, Comparable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }
    public static func < (a: FenceHandle, b: FenceHandle) -> Bool { a.rawValue < b.rawValue }
}

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

/// Millions of circle and polygon fences, flat in memory, indexed by an R-tree over their boxes.
///
/// Geometry lives in one `ContiguousArray<Double>`; each fence is a slot in parallel arrays
/// (structure of arrays). Ids and groups are interned: the hot loops see only integers.
/// A value type: copies share storage until one of them changes (copy-on-write), so a
/// snapshot can be read on many threads while nothing mutates it.
public struct FenceStore: Sendable {
    // Per slot.
    var slotID: ContiguousArray<String> = []
    var slotKind: ContiguousArray<UInt8> = []  // 0 free, 1 circle, 2 polygon
    var slotGeometry: ContiguousArray<Int> = []  // start in `geometry` (doubles)
    var slotGeometryCount: ContiguousArray<Int32> = []  // doubles
    var slotRingFirst: ContiguousArray<Int32> = []
    var slotRingCount: ContiguousArray<Int32> = []
    var slotGroup: ContiguousArray<Int32> = []  // -1: none
    var slotActions: ContiguousArray<UInt8> = []  // 0xFF: the engine's
    var slotDwell: ContiguousArray<Double> = []  // NaN: the engine's
    var slotExpires: ContiguousArray<Double> = []  // NaN: never
    var slotItems: ContiguousArray<Int32> = []  // first index item; more in `extraItems`
    var slotCoord: ContiguousArray<UInt8> = []  // the coordinate system the fence came in
    var freeSlots: [Int32] = []
    var slotByID: [String: Int32] = [:]
    var extraItems: [Int32: [Int32]] = [:]
    var properties: [Int32: [String: String]] = [:]
    var expiring: Int = 0

    // Geometry.
    var geometry: ContiguousArray<Double> = []
    var ringLengths: ContiguousArray<UInt32> = []
    var deadGeometry = 0
    var deadRings = 0

    // Groups.
    var groupNames: [String] = []
    var groupByName: [String: Int32] = [:]
    var groupMembers: [Set<Int32>] = []

    // Index.
    var tree = RTree()
    var itemSlot: ContiguousArray<Int32> = []
    var freeItems: [Int32] = []

    /// Limits applied to every fence added.
    public var limits = FenceLimits()

    public init() {}

    /// Number of fences stored.
    public var count: Int { slotByID.count }

    /// Ids of every stored fence, in no particular order.
    public var ids: Dictionary<String, Int32>.Keys { slotByID.keys }

    /// The names of all groups with at least one fence.
    public var groups: [String] {
        groupNames.indices.filter { !groupMembers[$0].isEmpty }.map { groupNames[$0] }
    }

    // MARK: - Adding

    /// Adds fences; a fence whose id is already stored replaces it.
    ///
    /// Each fence is checked (see SPEC "Fences"): a bad one gets `.rejected` with the reason and
    /// the rest still load. Within one batch a repeated id is rejected; the first one stands.
    /// Validation runs on `threads` workers, each with its own GEOS context.
    /// - Parameters:
    ///   - repair: fix invalid polygons with GEOS MakeValid instead of rejecting them.
    /// - Returns: one result per input fence, in input order.
    /// - Complexity: O(n log n) in the total number of vertices; a batch larger than half the
    ///   store rebuilds the index by bulk loading, a smaller one inserts into it.
    @discardableResult
    public mutating func add(_ fences: [Fence], repair: Bool = false, threads: Int = FenceStore.defaultThreads)
        -> [FenceAddResult]
    {
        var results = [FenceAddResult?](repeating: nil, count: fences.count)
        var seen = Set<String>()
        seen.reserveCapacity(fences.count)
        for (i, fence) in fences.enumerated() {
            if fence.id.isEmpty {
                results[i] = FenceAddResult(
                    id: "", outcome: .rejected(FenceError(.missingID, fence: "#\(i + 1)", reason: "the fence has no id")),
                    repaired: false)
            } else if !seen.insert(fence.id).inserted {
                results[i] = FenceAddResult(
                    id: fence.id,
                    outcome: .rejected(
                        FenceError(.duplicateID, fence: fence.id, reason: "the id appears more than once in this batch")),
                    repaired: false)
            }
        }
        let normalized = Self.normalizeAll(fences, skip: results.map { $0 != nil }, repair: repair, limits: limits, threads: threads)
        let bulk = fences.count > 64 && fences.count > tree.count / 2
        for i in fences.indices where results[i] == nil {
            switch normalized[i]! {
            case .failure(let error):
                results[i] = FenceAddResult(id: fences[i].id, outcome: .rejected(error), repaired: false)
            case .success(let flat):
                let replaced = remove(id: fences[i].id) != nil
                insert(fences[i], flat, indexNow: !bulk)
                results[i] = FenceAddResult(id: fences[i].id, outcome: replaced ? .replaced : .added, repaired: flat.repaired)
            }
        }
        if bulk { rebuildIndex() }
        compactIfNeeded()
        return results.map { $0! }
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

    public static var defaultThreads: Int { max(1, ProcessInfo.processInfo.activeProcessorCount) }

    static func normalizeAll(_ fences: [Fence], skip: [Bool], repair: Bool, limits: FenceLimits, threads: Int)
        -> [Result<NormalizedFence, FenceError>?]
    {
        var out = [Result<NormalizedFence, FenceError>?](repeating: nil, count: fences.count)
        out.withUnsafeMutableBufferPointer { buffer in
            nonisolated(unsafe) let results = buffer
            Parallel.forEachChunk(count: fences.count, chunkSize: 256, threads: threads, makeState: { GEOSContextSlot() }) {
                slot, _, range in
                for i in range where !skip[i] {
                    results[i] = FenceValidation.normalize(fences[i], repair: repair, limits: limits, geos: slot.context)
                }
            }
        }
        return out
    }

    mutating func insert(_ fence: Fence, _ flat: NormalizedFence, indexNow: Bool) {
        let slot: Int32
        if let free = freeSlots.popLast() {
            slot = free
        } else {
            slot = Int32(slotKind.count)
            slotID.append("")
            slotKind.append(0)
            slotGeometry.append(0)
            slotGeometryCount.append(0)
            slotRingFirst.append(0)
            slotRingCount.append(0)
            slotGroup.append(-1)
            slotActions.append(0xFF)
            slotDwell.append(.nan)
            slotExpires.append(.nan)
            slotItems.append(-1)
            slotCoord.append(0)
        }
        let s = Int(slot)
        slotID[s] = fence.id
        slotKind[s] = flat.kind.rawValue
        slotGeometry[s] = geometry.count
        slotGeometryCount[s] = Int32(flat.geometry.count)
        geometry.append(contentsOf: flat.geometry)
        slotRingFirst[s] = Int32(ringLengths.count)
        slotRingCount[s] = Int32(flat.rings.count)
        ringLengths.append(contentsOf: flat.rings)
        slotActions[s] = fence.actions?.rawValue ?? 0xFF
        slotDwell[s] = fence.dwell ?? .nan
        slotExpires[s] = fence.expires ?? .nan
        if fence.expires != nil { expiring += 1 }
        slotCoord[s] = UInt8(CoordinateSystem.allCases.firstIndex(of: fence.coord) ?? 0)
        if let group = fence.group {
            let g = internGroup(group)
            slotGroup[s] = g
            groupMembers[Int(g)].insert(slot)
        } else {
            slotGroup[s] = -1
        }
        if !fence.properties.isEmpty { properties[slot] = fence.properties }
        slotByID[fence.id] = slot
        var items: [Int32] = []
        for box in flat.boxes {
            let item: Int32
            if let free = freeItems.popLast() {
                item = free
                itemSlot[Int(item)] = slot
            } else {
                item = Int32(itemSlot.count)
                itemSlot.append(slot)
            }
            items.append(item)
            if indexNow { tree.insert(id: item, box: box) } else { pendingBoxes.append((item, box)) }
        }
        slotItems[s] = items[0]
        if items.count > 1 { extraItems[slot] = Array(items.dropFirst()) }
    }

    /// Boxes waiting for the bulk load at the end of a large batch.
    var pendingBoxes: [(Int32, Box)] = []

    mutating func rebuildIndex() {
        var ids = ContiguousArray<Int32>()
        var boxes = ContiguousArray<Box>()
        ids.reserveCapacity(itemSlot.count)
        boxes.reserveCapacity(itemSlot.count)
        for slot in slotKind.indices where slotKind[slot] != 0 {
            for item in items(of: Int32(slot)) {
                if let box = tree.box(of: item) {
                    ids.append(item)
                    boxes.append(box)
                }
            }
        }
        for (item, box) in pendingBoxes {
            ids.append(item)
            boxes.append(box)
        }
        pendingBoxes = []
        tree = RTree(ids: ids, boxes: boxes)
    }

    func items(of slot: Int32) -> [Int32] {
        let first = slotItems[Int(slot)]
        if let more = extraItems[slot] { return [first] + more }
        return [first]
    }

    mutating func internGroup(_ name: String) -> Int32 {
        if let g = groupByName[name] { return g }
        let g = Int32(groupNames.count)
        groupNames.append(name)
        groupByName[name] = g
        groupMembers.append([])
        return g
    }

    // MARK: - Removing

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
        let ids = slots.map { slotID[Int($0)] }
        for slot in slots { removeSlot(slot) }
        compactIfNeeded()
        return ids.sorted()
    }

    /// Removes every fence.
    /// - Returns: the ids removed, sorted.
    @discardableResult
    public mutating func removeAll() -> [String] {
        let ids = slotByID.keys.sorted()
        let limits = self.limits
        self = FenceStore()
        self.limits = limits
        return ids
    }

    /// Removes fences whose `expires` is at or before `time`.
    /// - Returns: the ids removed, sorted.
    /// - Complexity: O(slots) when any fence has an expiry, O(1) otherwise.
    @discardableResult
    public mutating func removeExpired(asOf time: Double) -> [String] {
        guard expiring > 0 else { return [] }
        var ids: [String] = []
        for slot in slotKind.indices where slotKind[slot] != 0 {
            let e = slotExpires[slot]
            if !e.isNaN && e <= time {
                ids.append(slotID[slot])
                removeSlot(Int32(slot))
            }
        }
        compactIfNeeded()
        return ids.sorted()
    }

    mutating func removeSlot(_ slot: Int32) {
        let s = Int(slot)
        for item in items(of: slot) {
            if !tree.remove(id: item) {
                pendingBoxes.removeAll { $0.0 == item }
            }
            freeItems.append(item)
        }
        extraItems[slot] = nil
        slotByID[slotID[s]] = nil
        if slotGroup[s] >= 0 { groupMembers[Int(slotGroup[s])].remove(slot) }
        if !slotExpires[s].isNaN { expiring -= 1 }
        properties[slot] = nil
        deadGeometry += Int(slotGeometryCount[s])
        deadRings += Int(slotRingCount[s])
        slotID[s] = ""
        slotKind[s] = 0
        slotGroup[s] = -1
        slotExpires[s] = .nan
        freeSlots.append(slot)
    }

    /// Rewrites the geometry arrays without the space of removed fences once that space is
    /// more than half of them. Amortised O(1) per removed double.
    mutating func compactIfNeeded() {
        guard deadGeometry > 4096 && deadGeometry * 2 > geometry.count else { return }
        var newGeometry = ContiguousArray<Double>()
        newGeometry.reserveCapacity(geometry.count - deadGeometry)
        var newRings = ContiguousArray<UInt32>()
        newRings.reserveCapacity(ringLengths.count - deadRings)
        for s in slotKind.indices where slotKind[s] != 0 {
            let start = slotGeometry[s]
            slotGeometry[s] = newGeometry.count
            newGeometry.append(contentsOf: geometry[start..<(start + Int(slotGeometryCount[s]))])
            let r = Int(slotRingFirst[s])
            slotRingFirst[s] = Int32(newRings.count)
            newRings.append(contentsOf: ringLengths[r..<(r + Int(slotRingCount[s]))])
        }
        geometry = newGeometry
        ringLengths = newRings
        deadGeometry = 0
        deadRings = 0
    }

    // MARK: - Reading

    /// The handle of the fence with this id.
    public func handle(id: String) -> FenceHandle? { slotByID[id].map(FenceHandle.init(rawValue:)) }

    /// The id of a handle returned by a query on this store, unchanged since.
    public func id(of handle: FenceHandle) -> String { slotID[Int(handle.rawValue)] }

    /// The group of a handle, if any.
    public func group(of handle: FenceHandle) -> String? {
        let g = slotGroup[Int(handle.rawValue)]
        return g < 0 ? nil : groupNames[Int(g)]
    }

    /// The fence with this id, in WGS84, or nil.
    public func fence(id: String) -> Fence? { slotByID[id].map { fence(slot: $0) } }

    /// The fences of a group, sorted by id.
    public func fences(group: String) -> [Fence] {
        guard let g = groupByName[group] else { return [] }
        return groupMembers[Int(g)].map { fence(slot: $0) }.sorted { $0.id < $1.id }
    }

    /// Rebuilds the value of a stored fence from the flat arrays.
    func fence(slot: Int32) -> Fence {
        let s = Int(slot)
        let start = slotGeometry[s]
        let shape: FenceShape
        if slotKind[s] == NormalizedFence.Kind.circle.rawValue {
            shape = .circle(center: LonLat(lon: geometry[start], lat: geometry[start + 1]), radius: geometry[start + 2])
        } else {
            var polygons: [Polygon] = []
            var offset = start
            let r0 = Int(slotRingFirst[s])
            for r in r0..<(r0 + Int(slotRingCount[s])) {
                let raw = ringLengths[r]
                let n = Int(raw & ~FenceValidation.exteriorFlag)
                let ring = (0..<n).map { LonLat(lon: geometry[offset + 2 * $0], lat: geometry[offset + 2 * $0 + 1]) }
                if raw & FenceValidation.exteriorFlag != 0 {
                    polygons.append(Polygon(exterior: ring))
                } else {
                    polygons[polygons.count - 1].holes.append(ring)
                }
                offset += 2 * n
            }
            shape = .polygons(polygons)
        }
        let g = slotGroup[s]
        return Fence(
            id: slotID[s], group: g < 0 ? nil : groupNames[Int(g)], shape: shape, coord: .wgs84,
            actions: slotActions[s] == 0xFF ? nil : FenceActions(rawValue: slotActions[s]),
            dwell: slotDwell[s].isNaN ? nil : slotDwell[s], expires: slotExpires[s].isNaN ? nil : slotExpires[s],
            properties: properties[slot] ?? [:])
    }

    /// Approximate bytes held by the store: its arrays by capacity, the index, ids and tables.
    /// - Complexity: O(slots) for the id strings.
    public var memoryFootprint: Int {
        func bytes<T>(_ a: ContiguousArray<T>) -> Int { a.capacity * MemoryLayout<T>.stride }
        var total = bytes(slotID) + bytes(slotKind) + bytes(slotGeometry) + bytes(slotGeometryCount)
        total += bytes(slotRingFirst) + bytes(slotRingCount) + bytes(slotGroup) + bytes(slotActions)
        total += bytes(slotDwell) + bytes(slotExpires) + bytes(slotItems) + bytes(slotCoord)
        total += bytes(geometry) + bytes(ringLengths) + bytes(itemSlot)
        total += tree.memoryFootprint
        // Dictionary entries: key + value + about one word of hashing overhead at 75% load.
        total += slotByID.capacity * (MemoryLayout<String>.stride + 4 + 8)
        for id in slotID where id.utf8.count > 15 { total += id.utf8.count + 32 }
        return total
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
