/// One (device, fence) pair whose status is not the default `outside`: the device is inside
/// (or stayed), possibly with an exit pending under the exit delay.
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

    var isStayed: Bool { flags & Self.stayed != 0 }
    var isExitPending: Bool { flags & Self.exitPending != 0 }
}

/// What the tracker knows about one device. Sparse: a device inside 2 of a million fences
/// holds 2 pairs.
struct DeviceState: Sendable, Hashable {
    var id: String
    /// Event time of the last applied fix; -infinity before the first.
    var lastTime: Double = -.infinity
    var lastLon: Double = .nan
    var lastLat: Double = .nan
    /// Inside / stayed / exit-pending pairs, ascending by fence key.
    var pairs: [PairState] = []

    var hasFix: Bool { lastTime > -.infinity }
}

/// The devices whose id hashes to one partition: each partition's state is touched by one
/// worker at a time, and partitions are independent of the thread count.
struct DevicePartition: Sendable {
    var byID: [String: Int32] = [:]
    var states: ContiguousArray<DeviceState> = []

    mutating func intern(_ id: String) -> Int32 {
        if let d = byID[id] { return d }
        let d = Int32(states.count)
        byID[id] = d
        states.append(DeviceState(id: id))
        return d
    }
}

/// A device's status against one fence (Baidu's four).
public enum FenceStatus: String, Sendable, Hashable {
    /// The device has no applied fix yet.
    case unknown
    case inside
    case outside
    /// Inside for at least the dwell time (the dwell event fired).
    case stayed
}

/// Stable 32-bit FNV-1a of a device id: which worker owns a device's state.
@inline(__always)
func stableHash(_ s: String) -> UInt32 {
    var h: UInt32 = 2_166_136_261
    for b in s.utf8 {
        h ^= UInt32(b)
        h = h &* 16_777_619
    }
    return h
}
