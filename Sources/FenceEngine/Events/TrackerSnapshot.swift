/// The tracker's whole state as a value: every device's last fix and its non-outside pairs,
/// with fences named by id so a snapshot outlives the process that made it.
public struct TrackerSnapshot: Sendable, Hashable {
    public struct Pair: Sendable, Hashable {
        public var fence: String
        public var stayed: Bool
        public var exitPending: Bool
        public var enterTime: Double
        public var pendingSince: Double
    }
    public struct Device: Sendable, Hashable {
        public var id: String
        public var lastTime: Double
        public var lastLon: Double
        public var lastLat: Double
        public var pairs: [Pair]
    }
    public var watermark: Double
    public var devices: [Device]
}

extension EventEngine {
    /// The tracker's state (not the fences, not the settings).
    /// - Complexity: O(devices + pairs).
    public func snapshot() -> TrackerSnapshot {
        var out: [TrackerSnapshot.Device] = []
        out.reserveCapacity(deviceCount)
        for state in partitions.flatMap(\.states) {
            let pairs = state.pairs.compactMap { pair -> TrackerSnapshot.Pair? in
                guard let slot = store.slot(ofKey: pair.fence) else { return nil }
                return TrackerSnapshot.Pair(
                    fence: store.slotSettings[Int(slot)].id, stayed: pair.isStayed, exitPending: pair.isExitPending,
                    enterTime: pair.enterTime, pendingSince: pair.pendingSince)
            }
            out.append(
                TrackerSnapshot.Device(
                    id: state.id, lastTime: state.lastTime, lastLon: state.lastLon, lastLat: state.lastLat, pairs: pairs))
        }
        out.sort { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
        return TrackerSnapshot(watermark: watermark, devices: out)
    }

    /// Replaces the tracker's state with a snapshot, against the fences now in the store.
    /// - Returns: the number of pairs dropped because their fence is not in the store.
    @discardableResult
    public mutating func restore(_ snapshot: TrackerSnapshot) -> Int {
        partitions = [DevicePartition](repeating: DevicePartition(), count: Self.partitionCount)
        watermark = snapshot.watermark
        evictedBefore =
            settings.idleEviction > 0 ? watermark - max(settings.idleEviction, settings.exitDelay) : -.infinity
        var dropped = 0
        for device in snapshot.devices {
            let p = Self.partition(of: device.id)
            let d = partitions[p].intern(device.id)
            var state = DeviceState(id: device.id, lastTime: device.lastTime, lastLon: device.lastLon, lastLat: device.lastLat, pairs: [])
            for pair in device.pairs {
                guard let slot = store.slotByID[pair.fence] else {
                    dropped += 1
                    continue
                }
                state.pairs.append(
                    PairState(
                        fence: store.key(ofSlot: slot),
                        flags: (pair.stayed ? PairState.stayed : 0) | (pair.exitPending ? PairState.exitPending : 0),
                        enterTime: pair.enterTime, pendingSince: pair.pendingSince))
            }
            state.pairs.sort { $0.fence < $1.fence }
            partitions[p].states[Int(d)] = state
        }
        return dropped
    }
}
