import Foundation

/// One (device, fence) pair whose status is not the default `outside`: the device is inside
/// (or stayed), possibly with an exit pending under the exit delay; or, with hysteresis, its
/// status is still `unknown` (`undetermined`).
struct PairState: Sendable, Hashable {
    /// The fence's stable key (`FenceStore.slotKey`).
    var fence: Int32
    var flags: UInt8
    /// Event time of the enter.
    var enterTime: Double
    /// Event time of the first fix outside while an exit is pending (exit delay).
    var pendingSince: Double

    static let stayed: UInt8 = 1
    static let exitPending: UInt8 = 2
    /// With hysteresis: the device's first fix was within the margin of the fence's boundary
    /// (inside or outside it), so the pair's status is still `unknown`, and holds while fixes
    /// stay in that band. A fix inside by the margin makes it inside with an `initial` enter
    /// (the device was never seen outside); one outside by the margin makes it outside, as
    /// every pair not stored. Never with `stayed` or `exitPending`; no visit, so no exit,
    /// dwell or re-trigger.
    static let undetermined: UInt8 = 4

    var isStayed: Bool { flags & Self.stayed != 0 }
    var isExitPending: Bool { flags & Self.exitPending != 0 }
    var isUndetermined: Bool { flags & Self.undetermined != 0 }
}

/// What the tracker knows about one device. Sparse: a device inside 2 of a million fences
/// holds 2 pairs.
struct DeviceState: Sendable, Hashable {
    var id: String
    /// Event time of the last applied fix; -infinity before the first.
    var lastTime: Double = -.infinity
    var lastLon: Double = .nan
    var lastLat: Double = .nan
    /// Inside / stayed / exit-pending pairs, and with hysteresis undetermined ones, ascending
    /// by fence key. Changed only through the methods below, which keep `heldKeys`.
    private(set) var pairs: [PairState] = []
    /// Bit `key % 64` (`keyBit`) of every pair's fence key: a device whose bits miss all of
    /// an edit's keys holds a pair with none of them, and the edit skips it without reading
    /// its pairs, which are a heap block of their own (a cache miss a device: removing or
    /// reshaping one fence read about 100,000 of them with a million devices).
    private(set) var heldKeys: UInt64 = 0

    init(id: String, lastTime: Double = -.infinity, lastLon: Double = .nan, lastLat: Double = .nan) {
        self.id = id
        self.lastTime = lastTime
        self.lastLon = lastLon
        self.lastLat = lastLat
    }

    var hasFix: Bool { lastTime > -.infinity }

    /// The bit of `heldKeys` a pair with the fence of `key` sets.
    @inline(__always)
    static func keyBit(_ key: Int32) -> UInt64 { 1 << UInt64(UInt32(bitPattern: key) & 63) }

    /// The bits of these fence keys (`keyBit`).
    static func keyBits(_ keys: some Sequence<Int32>) -> UInt64 { keys.reduce(0) { $0 | keyBit($1) } }

    /// Whether `heldKeys` are the bits of the pairs held (what the methods below keep true;
    /// debug builds check it). O(pairs).
    var heldKeysMatchPairs: Bool { heldKeys == Self.keyBits(pairs.lazy.map(\.fence)) }

    /// Whether the device may hold a pair with a fence whose key bit `bits` sets: false
    /// means it certainly holds none.
    @inline(__always)
    func mayHold(anyOf bits: UInt64) -> Bool { heldKeys & bits != 0 }

    /// Replaces the pairs (ascending by fence key). An empty list frees their storage.
    mutating func setPairs(_ new: [PairState]) {
        pairs = new
        heldKeys = Self.keyBits(new.lazy.map(\.fence))
    }

    /// Replaces the pairs with a copy of `new` (ascending by fence key), in the storage they
    /// have when it is large enough.
    mutating func copyPairs(from new: [PairState]) {
        pairs.removeAll(keepingCapacity: true)
        pairs.append(contentsOf: new)
        heldKeys = Self.keyBits(new.lazy.map(\.fence))
    }

    /// Adds a pair whose fence key is above every one held (the order stays ascending).
    mutating func appendPair(_ pair: PairState) {
        assert(pairs.last.map { $0.fence < pair.fence } ?? true, "pairs out of key order")
        pairs.append(pair)
        heldKeys |= Self.keyBit(pair.fence)
    }

    /// Changes pair `k` in place; its fence key stays what it is.
    @inline(__always)
    mutating func updatePair<R>(_ k: Int, _ body: (inout PairState) -> R) -> R {
        let key = pairs[k].fence
        defer { assert(pairs[k].fence == key, "a pair's fence key changed in place") }
        return body(&pairs[k])
    }
}

/// The devices whose id hashes to one partition: each partition's state is touched by one
/// worker at a time, and partitions are independent of the thread count.
///
/// Ids are found through an open-addressing table keyed by the id's 64-bit FNV-1a hash, which
/// the batch computes once per fix on all workers; a match is confirmed by comparing the ids.
/// Swift keeps ids of up to 15 bytes inside the `String` itself, and those compare there. A
/// longer id is one heap object, spread over the heap with every other: comparing against it
/// was a cache miss per fix (about 7% of `fence eval` with UUID device ids). So the partition
/// also keeps a copy of every long id, back to back (`longIDBytes`), a few hundred kilobytes
/// that stay hot while a worker applies the partition, and a batch's long ids arrive as bytes
/// (`PartitionedFixes`) to be compared with them.
struct DevicePartition: Sendable {
    var states: ContiguousArray<DeviceState> = []
    var hashes: ContiguousArray<UInt64> = []
    /// Device index + 1 per slot, 0 for empty; the size is a power of two, at most half full.
    var table: ContiguousArray<Int32> = ContiguousArray(repeating: 0, count: 16)
    /// The UTF-8 of every id over `inlineBytes`, in device order: device d's is
    /// `longIDBytes[longIDEnds[d - 1] ..< longIDEnds[d]]` (from 0 for the first), empty for a
    /// short id.
    var longIDBytes: ContiguousArray<UInt8> = []
    var longIDEnds: ContiguousArray<Int> = []

    /// The longest id a `String` holds inline.
    static let inlineBytes = 15

    /// The device's index, or nil.
    ///
    /// Identity is the id's bytes (`ExactID`), not `String ==`, which would also accept a
    /// canonically equivalent spelling (NFC against NFD) whose 64-bit FNV-1a hash is the same:
    /// rare by chance, but FNV is no defence against a made one. The usual match is an id of up
    /// to 15 bytes held in the `String` itself, confirmed by two word compares.
    func find(_ id: String, hash: UInt64) -> Int32? {
        let mask = table.count - 1
        var i = Int(truncatingIfNeeded: hash >> 6) & mask
        while true {
            let d = table[i]
            if d == 0 { return nil }
            if hashes[Int(d - 1)] == hash && ExactID.sameBytes(states[Int(d - 1)].id, id) { return d - 1 }
            i = (i + 1) & mask
        }
    }

    /// The index of the device whose id is these UTF-8 bytes, more than `inlineBytes` of
    /// them, or nil.
    /// - Complexity: O(bytes) expected.
    func find(long id: UnsafeBufferPointer<UInt8>, hash: UInt64) -> Int32? {
        assert(id.count > Self.inlineBytes, "a short id is found as a String")
        let mask = table.count - 1
        var i = Int(truncatingIfNeeded: hash >> 6) & mask
        return longIDBytes.withUnsafeBufferPointer { bytes -> Int32? in
            while true {
                let d = Int(table[i])
                if d == 0 { return nil }
                if hashes[d - 1] == hash {
                    let lo = d == 1 ? 0 : longIDEnds[d - 2]
                    let n = longIDEnds[d - 1] - lo
                    if n == id.count && memcmp(bytes.baseAddress! + lo, id.baseAddress!, n) == 0 { return Int32(d - 1) }
                }
                i = (i + 1) & mask
            }
        }
    }

    /// Devices evicted (`EventEngine.evictIdle`) and not yet dropped, one bit each: their
    /// states are fresh (no fix, no pairs) and their ids still in the table, so that an
    /// eviction costs O(1) here instead of a rebuild of the partition. Every reader treats one
    /// as absent: `intern` makes it a new device again, `EventEngine.state(of:)`, `deviceCount`
    /// and `snapshot` skip it, and `dropDormantIfMany` removes them all (`dormantShare`).
    var dormantBits: ContiguousArray<UInt64> = []
    var dormantCount = 0

    /// The devices by last fix time, for idle eviction (`IdleQueue`); empty until eviction
    /// runs, and again once it is turned off (`EventEngine.updateSettings`).
    var idle = IdleQueue()

    /// Dormant devices are dropped once they are this share of the partition or more: each
    /// rebuild follows as many evictions as a quarter of what it copies, O(1) amortised.
    static let dormantShare = 4

    @inline(__always)
    func isDormant(_ d: Int) -> Bool {
        dormantCount > 0 && d >> 6 < dormantBits.count && dormantBits[d >> 6] & (1 << UInt64(d & 63)) != 0
    }

    /// Marks device `d` evicted: its state becomes a fresh one of the same id.
    mutating func makeDormant(_ d: Int) {
        states[d] = DeviceState(id: states[d].id)
        if d >> 6 >= dormantBits.count { dormantBits.append(contentsOf: repeatElement(0, count: (d >> 6) + 1 - dormantBits.count)) }
        dormantBits[d >> 6] |= 1 << UInt64(d & 63)
        dormantCount += 1
    }

    /// Drops every dormant device, when they are `dormantShare` of the partition or more.
    /// - Complexity: O(d) for d devices when it drops, O(1) otherwise.
    mutating func dropDormantIfMany() {
        guard dormantCount > 0 && dormantCount * Self.dormantShare >= states.count else { return }
        dropDormant()
    }

    /// Drops every dormant device: the partition rebuilt without them (and its `idle` queue
    /// started again, the devices renumbered).
    /// - Complexity: O(d) for d devices.
    mutating func dropDormant() {
        guard dormantCount > 0 else { return }
        var kept = DevicePartition()
        kept.states.reserveCapacity(states.count - dormantCount)
        for d in states.indices where !isDormant(d) {
            _ = kept.intern(states[d].id, hash: hashes[d])
            kept.states[kept.states.count - 1] = states[d]
        }
        self = kept
    }

    /// A found device: a dormant one becomes a new device again (its state is already fresh).
    @inline(__always)
    private mutating func revived(_ d: Int32) -> Int32 {
        if isDormant(Int(d)) {
            dormantBits[Int(d) >> 6] &= ~(1 << UInt64(Int(d) & 63))
            dormantCount -= 1
            idle.revive(d)
        }
        return d
    }

    /// The device's index, adding it with an empty state when it is new (or dormant).
    mutating func intern(_ id: String, hash: UInt64) -> Int32 {
        if let d = find(id, hash: hash) { return revived(d) }
        return add(id, hash: hash)
    }

    /// The index of the device whose id is these UTF-8 bytes (valid UTF-8, more than
    /// `inlineBytes` of them), adding it with an empty state when it is new: only then is a
    /// `String` made.
    mutating func intern(long id: UnsafeBufferPointer<UInt8>, hash: UInt64) -> Int32 {
        if let d = find(long: id, hash: hash) { return revived(d) }
        return add(String(decoding: id, as: UTF8.self), hash: hash)
    }

    mutating func intern(_ id: String) -> Int32 { intern(id, hash: stableHash64(id)) }

    private mutating func add(_ id: String, hash: UInt64) -> Int32 {
        let d = Int32(states.count)
        if id.utf8.count > Self.inlineBytes { longIDBytes.append(contentsOf: id.utf8) }
        longIDEnds.append(longIDBytes.count)
        states.append(DeviceState(id: id))
        hashes.append(hash)
        if states.count * 2 > table.count {
            table = ContiguousArray(repeating: 0, count: table.count * 2)
            for k in 0..<(states.count - 1) { place(Int32(k), hashes[k]) }
        }
        place(d, hash)
        return d
    }

    private mutating func place(_ d: Int32, _ hash: UInt64) {
        let mask = table.count - 1
        var i = Int(truncatingIfNeeded: hash >> 6) & mask
        while table[i] != 0 { i = (i + 1) & mask }
        table[i] = d + 1
    }
}

/// A device's status against one fence (Baidu's four).
public enum FenceStatus: String, Sendable, Hashable {
    /// The device has no applied fix yet; or, with hysteresis, every fix of it so far was
    /// within the margin of the fence's boundary.
    case unknown
    case inside
    case outside
    /// Inside for at least the dwell time (the dwell event fired).
    case stayed
}

/// Stable 64-bit FNV-1a of a device id's UTF-8 (`FNV1a`): its partition among the engine's
/// 64 and its table key. (The NATS deployment's partitions are the server's own subject
/// mapping, not this.)
/// - Complexity: O(bytes).
@inline(__always)
func stableHash64(_ s: String) -> UInt64 { FNV1a.hash(s) }
