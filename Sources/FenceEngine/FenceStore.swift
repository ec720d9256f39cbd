import Foundation
import SpatialIndex
import Synchronization

/// A handle to a stored fence, valid until the next change to the store. Handles come only
/// from the store (`covering`, `handle(id:)`, ...): one made from a number could name no slot,
/// and the accessors that take handles (`id(of:)`, `fence(_:)`) would trap on it (library
/// audit), so the initialiser is the package's own. A handle kept past a change names what
/// is in its slot now, or a removed fence (an empty id, no group, no shape, covering nothing);
/// so does one past the store's slots (kept past `removeAll`, or from another store): the
/// accessors never trap on it (a second library audit).
public struct FenceHandle: Sendable, Hashable, Comparable, BitwiseCopyable {
    public let rawValue: Int32
    package init(rawValue: Int32) { self.rawValue = rawValue }
    public static func < (a: FenceHandle, b: FenceHandle) -> Bool { a.rawValue < b.rawValue }
}

/// Millions of circle and polygon fences, flat in memory, indexed by an R-tree over their boxes.
///
/// Layout (structure of arrays, one slot per fence):
/// - `slotHot[s]`: the only per-fence word the containment loop reads besides the record
///   itself (`HotWord`): the kind (`FlatGeometry.Kind`), where the record starts in
///   `geometry`, and where in the record its small grid starts, for the prefetch.
/// - `geometry`: every record back to back (`FlatGeometry`), in memory that never moves and
///   that copies of the store share (`GeometryRecords`): an edit appends, it never copies.
/// - colder per slot: id, group, actions and dwell in one record (`SlotSettings`), expiry,
///   record length.
/// - the R-tree holds item `2 * slot` for a fence's first box and `2 * slot + 1` for the
///   others (`item(slot:part:)`): one more box, or any number (a shared item, its boxes kept
///   in `sharedBoxes`), so a hit's slot is always `item >> 1`.
///
/// Ids and groups are interned: the hot loops see only integers. A value type: copies share
/// storage until one of them changes (copy-on-write; the records stay shared, each copy
/// appending its own), so a snapshot can be read on many threads while another copy is
/// edited.
public struct FenceStore: Sendable {
    // Hot, per slot.
    var slotHot: ContiguousArray<Int> = []
    // Cold, per slot.
    /// Id, group, action mask and dwell: one 32-byte record, what the event pass reads per
    /// event (`SlotSettings`).
    var slotSettings: ContiguousArray<SlotSettings> = []
    var slotGeometryCount: ContiguousArray<Int32> = []
    var slotExpires: ContiguousArray<Double> = []  // NaN: never
    var slotBoxCount: ContiguousArray<UInt8> = []
    /// A fence's key: stable while the fence (its id) is stored, through replacement and bulk
    /// renumbering of slots; the event tracker keys its per-device state by it.
    var slotKey: ContiguousArray<Int32> = []
    var keySlot: ContiguousArray<Int32> = []  // -1: free key
    var freeKeys: [Int32] = []
    var freeSlots: [Int32] = []
    var slotByID = IDTable<Int32>()
    var properties: [Int32: [String: String]] = [:]
    var expiring = 0
    /// At or before the earliest `expires` of a live fence (+infinity when none has one): a
    /// lower bound, set to the earliest entry of `expiryQueue` at each removal of expired
    /// fences, lowered by adds, left as it is by other removals. Until a batch's time reaches
    /// it no fence can have expired, so the search for expired ones (`expired(asOf:)`) and the
    /// engine's per-device expiry pass are skipped: one expiring fence made every batch
    /// O(fences) (library audit).
    var earliestExpiry = Double.infinity
    /// (expires, key) of every live fence that has an expiry, earliest first, and stale
    /// entries of fences removed or replaced since: an entry counts only while its key's fence
    /// has that `expires` (`expiredFences(asOf:)`). Entries at or before a removal of expired
    /// fences go then; the queue is rebuilt from the slots when stale entries outnumber the
    /// live ones (plus 1,024), so it holds at most about twice the expiring fences. Before it,
    /// finding the expired fences read every slot, at every batch past an expiry (a fleet fed
    /// in small batches, with fences expiring throughout, paid that every batch).
    var expiryQueue = TimeHeap()
    /// Searches for expired fences so far, for the tests of what expiry costs.
    static let expiryScans = Atomic<Int>(0)

    /// Adds a fence's expiry to `expiryQueue`, rebuilding the queue when stale entries
    /// outnumber the live ones (plus 1,024).
    /// - Complexity: O(log n), or O(slots) amortised over as many adds.
    mutating func queueExpiry(_ expires: Double, key: Int32) {
        if expiryQueue.count > 2 * expiring + 1_024 {
            rebuildExpiryQueue()
        } else {
            expiryQueue.push(time: expires, id: key)
        }
    }

    /// Makes `expiryQueue` anew from the live slots (no stale entries).
    /// - Complexity: O(slots).
    mutating func rebuildExpiryQueue() {
        var entries = ContiguousArray<TimeHeap.Entry>()
        entries.reserveCapacity(expiring)
        for slot in slotHot.indices where HotWord.isLive(slotHot[slot]) && !slotExpires[slot].isNaN {
            entries.append(TimeHeap.Entry(time: slotExpires[slot], id: slotKey[slot]))
        }
        expiryQueue.rebuild(entries)
    }

    /// Whether a fence may have expired at or before `time` (`earliestExpiry`).
    @inline(__always)
    func mayHaveExpired(asOf time: Double) -> Bool { expiring > 0 && time >= earliestExpiry }

    /// Every record, shared with copies of this store (`GeometryRecords`).
    var geometry = GeometryRecords.empty
    /// Doubles of the records this store names (its live fences'); with `deadGeometry`, what
    /// of the shared records is this store's own (other copies' appends are not).
    var liveGeometry = 0
    /// Doubles of records this store no longer names (removed or replaced fences).
    var deadGeometry = 0

    var groupNames: [String] = []
    var groupByName = IDTable<Int32>()
    var groupMembers: [Set<Int32>] = []

    var tree = RTree()
    /// Positions `prepareIndex` was told of since the index last had its cell grid.
    var queriesWithoutGrid = 0
    /// Boxes waiting for the bulk load at the end of a large batch.
    var pendingBoxes: [(Int32, Box)] = []
    /// The boxes past the first of each fence indexed under more than two (a long thin fence
    /// cut into pieces, `FenceValidation.polygonBoxes`), by slot: its shared item's entries,
    /// which the index finds only by their boxes (`RTree.removeShared`).
    var sharedBoxes: [Int32: [Box]] = [:]
    /// Times bulk loads asked the allocator to return freed memory (`loadFresh`,
    /// `trimRecordSize`; whether it could is not counted): a counter for tests.
    var memoryReturns = 0
    /// Doubles of records a bulk-load worker frees between two such requests: `trimStep`;
    /// tests set less.
    var bulkTrimStep = FenceStore.trimStep

    /// Limits applied to every fence added.
    public var limits = FenceLimits()

    public init() {}

    /// Number of fences stored.
    public var count: Int { slotByID.count }

    /// Whether any stored fence is in the group whose name is these bytes (`ExactID`).
    public func hasFences(inGroup name: String) -> Bool {
        guard let g = groupByName[name] else { return false }
        return !groupMembers[Int(g)].isEmpty
    }

    /// Ids of every stored fence, in no particular order.
    public var ids: some Collection<String> { slotByID.ids }

    /// The names of all groups with at least one fence.
    public var groups: [String] {
        groupNames.indices.filter { !groupMembers[$0].isEmpty }.map { groupNames[$0] }
    }

    public static var defaultThreads: Int { max(1, ProcessInfo.processInfo.activeProcessorCount) }

    /// The index item of box `part` of the fence in `slot` (see the layout above).
    @inline(__always)
    static func item(slot: Int32, part: Int) -> Int32 { slot &* 2 &+ (part == 0 ? 0 : 1) }

    /// Calls `body` with each index box of the fence in `slot`, in order, while it returns
    /// true; returns false when `body` stopped it. A box still waiting for the index
    /// (`pendingBoxes`) is not known here: then nil, before any call.
    /// - Complexity: O(boxes), no allocation.
    func forEachIndexBox(ofSlot slot: Int32, _ body: (Box) -> Bool) -> Bool? {
        let count = Int(slotBoxCount[Int(slot)])
        guard let first = tree.box(of: Self.item(slot: slot, part: 0)) else { return nil }
        if count > 2 {
            guard tree.isShared(id: Self.item(slot: slot, part: 1)), let rest = sharedBoxes[slot] else { return nil }
            guard body(first) else { return false }
            for box in rest where !body(box) { return false }
            return true
        }
        if count == 2 {
            guard let second = tree.box(of: Self.item(slot: slot, part: 1)) else { return nil }
            return body(first) && body(second)
        }
        return body(first)
    }

    @inline(__always)
    func kind(_ slot: Int) -> FlatGeometry.Kind { FlatGeometry.Kind(rawValue: HotWord.kind(slotHot[slot]))! }

    @inline(__always)
    func geometryStart(_ slot: Int) -> Int { HotWord.start(slotHot[slot]) }

    /// A 64-bit FNV-1a digest of the fence's stored shape: its kind and the WGS84 numbers
    /// that define it (a circle's centre and radius; a polygon's ring count, its rings'
    /// signed lengths and its coordinates), not the derived grids. Equal shapes give equal
    /// digests on every machine; `restoreReportingChanges` uses it to tell a replaced fence.
    /// Checkpoints keep digests, so they stay as they were when records held ring lengths
    /// (they now hold running ends, `FlatGeometry`): the lengths are hashed, not the header.
    /// - Complexity: O(v) for v vertices.
    func shapeDigest(slot: Int32) -> UInt64 {
        let s = Int(slot)
        let kind = HotWord.kind(slotHot[s])
        return geometry.withUnsafeBufferPointer { g -> UInt64 in
            let record = g.baseAddress! + geometryStart(s)
            var digest = FNV1a.hash(CollectionOfOne(UInt8(kind)))
            func add(_ v: Double) { withUnsafeBytes(of: v.bitPattern.littleEndian) { digest = FNV1a.hash($0, seed: digest) } }
            guard kind != FlatGeometry.Kind.circle.rawValue else {
                for v in UnsafeBufferPointer(start: record, count: 3) { add(v) }
                return digest
            }
            let k = FlatGeometry.ringCount(of: record)
            add(record[0])
            for r in 0..<k {
                let n = FlatGeometry.ringPositions(r, of: record).count
                add(Double(FlatGeometry.isExterior(r, of: record) ? n : -n))
            }
            for v in UnsafeBufferPointer(start: record + 1 + k, count: 2 * FlatGeometry.positionCount(of: record)) { add(v) }
            return digest
        }
    }

    // MARK: - Reading

    /// The handle of the fence with this id.
    public func handle(id: String) -> FenceHandle? { slotByID[id].map(FenceHandle.init(rawValue:)) }

    /// Whether `handle` is one of this store's slots (live or removed): false for a handle
    /// kept past `removeAll` or made by another store.
    @inline(__always)
    func isSlot(_ handle: FenceHandle) -> Bool { handle.rawValue >= 0 && Int(handle.rawValue) < slotHot.count }

    /// Whether `handle` names a stored fence: one of this store's slots, not removed.
    @inline(__always)
    func isLive(_ handle: FenceHandle) -> Bool { isSlot(handle) && HotWord.isLive(slotHot[Int(handle.rawValue)]) }

    /// The id of a handle returned by a query on this store, unchanged since ("" for a
    /// removed fence: `FenceHandle`).
    public func id(of handle: FenceHandle) -> String { isSlot(handle) ? slotSettings[Int(handle.rawValue)].id : "" }

    /// Whether the fence has expired at `time`: its `expires` is at or before it, as the event
    /// engine counts a fence no longer there for a fix at or after its expiry (false for a
    /// removed fence).
    /// - Complexity: O(1).
    public func hasExpired(_ handle: FenceHandle, at time: Double) -> Bool {
        isSlot(handle) && slotExpires[Int(handle.rawValue)] <= time
    }

    /// How many stored fences have an `expires` time.
    public var expiringCount: Int { expiring }

    /// The group of a handle, if any.
    public func group(of handle: FenceHandle) -> String? {
        guard isSlot(handle) else { return nil }
        let g = slotSettings[Int(handle.rawValue)].group
        return g < 0 ? nil : groupNames[Int(g)]
    }

    /// The stable key of a stored fence (see `slotKey`).
    @inline(__always)
    func key(ofSlot slot: Int32) -> Int32 { slotKey[Int(slot)] }

    /// The slot of a key, or nil when no fence has it.
    func slot(ofKey key: Int32) -> Int32? {
        guard key >= 0 && Int(key) < keySlot.count else { return nil }
        let s = keySlot[Int(key)]
        return s < 0 ? nil : s
    }

    /// The fence with this id, in WGS84, or nil.
    public func fence(id: String) -> Fence? { slotByID[id].map { fence(slot: $0) } }

    /// The fence of a handle, in WGS84 (a removed fence: an empty id and no polygon).
    public func fence(_ handle: FenceHandle) -> Fence {
        // A removed slot's record is not its own (its word is cleared): not read.
        guard isLive(handle) else { return Fence(id: "", shape: .polygons([])) }
        return fence(slot: handle.rawValue)
    }

    /// The fences of a group, sorted by id (`UTF8Order`).
    public func fences(group: String) -> [Fence] {
        guard let g = groupByName[group] else { return [] }
        var fences = groupMembers[Int(g)].map { fence(slot: $0) }
        UTF8Order.sort(&fences) { $0.id }
        return fences
    }

    /// Every stored fence, ascending by handle.
    public func allHandles() -> [FenceHandle] {
        slotHot.indices.filter { HotWord.isLive(slotHot[$0]) }.map { FenceHandle(rawValue: Int32($0)) }
    }

    /// Rebuilds the value of a stored fence from the flat arrays.
    func fence(slot: Int32) -> Fence {
        let s = Int(slot)
        let start = geometryStart(s)
        let shape: FenceShape = geometry.withUnsafeBufferPointer { g in
            let record = g.baseAddress! + start
            if kind(s) == .circle {
                return .circle(center: LonLat(lon: record[0], lat: record[1]), radius: record[2])
            }
            return .polygons(FlatGeometry.polygons(of: record))
        }
        let g = slotSettings[s].group
        return Fence(
            id: slotSettings[s].id, group: g < 0 ? nil : groupNames[Int(g)], shape: shape, coord: .wgs84,
            actions: slotSettings[s].actions == 0xFF ? nil : FenceActions(rawValue: slotSettings[s].actions),
            dwell: slotSettings[s].dwell.isNaN ? nil : slotSettings[s].dwell, expires: slotExpires[s].isNaN ? nil : slotExpires[s],
            properties: properties[slot] ?? [:])
    }

    /// Approximate bytes held by the store: its arrays by capacity, the index, ids and tables,
    /// and the records it appended or loaded, live or dead (records shared with copies of the
    /// store count in each copy; room reserved and not written counts nowhere).
    /// - Complexity: O(slots) for the id strings.
    public var memoryFootprint: Int {
        func bytes<T>(_ a: ContiguousArray<T>) -> Int { a.capacity * MemoryLayout<T>.stride }
        var total = bytes(slotHot) + bytes(slotSettings) + bytes(slotGeometryCount)
        total += bytes(slotExpires) + bytes(slotBoxCount) + (liveGeometry + deadGeometry) * MemoryLayout<Double>.stride
        total += bytes(slotKey) + bytes(keySlot)
        total += tree.memoryFootprint
        for boxes in sharedBoxes.values { total += boxes.capacity * MemoryLayout<Box>.stride + 48 }
        // Dictionary entries: key + value + about one word of hashing overhead at 75% load.
        total += slotByID.capacity * (MemoryLayout<String>.stride + 4 + 8)
        for s in slotSettings where s.id.utf8.count > 15 { total += s.id.utf8.count + 32 }
        return total
    }
}

/// A fence's settings that the event pass reads for every event it reports, in one record
/// (32 bytes: one cache line holds two), so an event costs one miss for them instead of one
/// per array. Paired in one process, against four separate arrays: `evaluate` 2-3.5% faster
/// at 1M fences.
struct SlotSettings: Sendable {
    var id: String = ""
    /// Seconds inside before `dwell`; NaN: the engine's.
    var dwell: Double = .nan
    /// Index into `groupNames`; -1: none.
    var group: Int32 = -1
    /// `FenceActions` raw value; 0xFF: the engine's.
    var actions: UInt8 = 0xFF

    init() {}

    /// A fence's id, dwell and action mask, read in place (a pointer: its shape is not
    /// retained); the group is left to the caller, which interns it.
    init(of fence: UnsafePointer<Fence>) {
        id = fence.pointee.id
        dwell = fence.pointee.dwell ?? .nan
        actions = fence.pointee.actions?.rawValue ?? 0xFF
    }
}

/// The store's hot word per slot: bits 0-1 the kind (`FlatGeometry.Kind`; 0 a free slot), bits
/// 2-9 where a `.polygon` record's small grid starts, in doubles from the record's start (0
/// for other kinds), and the bits above where the record starts in `geometry`.
///
/// The grid offset is for `FenceStore.prefetchRecords`: a 16-vertex polygon's grid lies about
/// 290 bytes into its record, past the two cache lines asked for at its start, and a point in
/// a pure cell reads nothing else of the coordinates. Asking for the grid's lines too made
/// containment at 1M fences 3.4-5.3% faster (paired in one process, best of 8 each way).
enum HotWord {
    static let startShift = 10

    static func make(start: Int, kind: FlatGeometry.Kind, gridOffset: Int) -> Int {
        precondition(gridOffset >= 0 && gridOffset < 256, "grid offset \(gridOffset) does not fit")
        return start << startShift | gridOffset << 2 | kind.rawValue
    }

    /// The same word for a record moved to `start`.
    @inline(__always)
    static func moved(_ word: Int, to start: Int) -> Int { start << startShift | (word & (1 << startShift - 1)) }

    @inline(__always) static func start(_ word: Int) -> Int { word >> startShift }
    @inline(__always) static func kind(_ word: Int) -> Int { word & 3 }
    /// Whether the slot holds a fence (kind 0 is a free slot).
    @inline(__always) static func isLive(_ word: Int) -> Bool { word & 3 != 0 }
    @inline(__always) static func gridOffset(_ word: Int) -> Int { (word >> 2) & 0xFF }
}

