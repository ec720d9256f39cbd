import FenceEngine
import FenceIO

/// Who is inside each fence across a cluster of workers: the visits each partition's last
/// checkpoint holds (`fence inside --nats`). A device belongs to one partition, so the
/// partitions' visits together are the cluster's, each as of its partition's checkpoint
/// (`fence status` shows their ages), not of the live workers.
///
/// Checkpoints record no fences (`EventEngine.snapshot(fenceRecords: false)`: the digests
/// would cost O(vertices) at every checkpoint), so a visit's group comes from the fences the
/// worker held: its base fences, given again by the caller, with the fence changes the
/// checkpoint has applied (`groups(for:base:connection:topology:)`).
public enum ClusterVisits {
    /// One partition and its last checkpoint: nil while no worker has written one.
    public struct Partition: Sendable {
        public var partition: Int
        public var checkpoint: PartitionCheckpoint?
    }

    /// Every partition's last checkpoint, read whole and checked (length, CRC-32, format).
    ///
    /// A worker writing a new checkpoint while one is read can reuse the chunks being read
    /// (it writes into the slot the head does not point at, so the one read two writes ago):
    /// the read then fails its checks and is made again from the new head, up to `attempts`
    /// times, as long as the head has moved; a checkpoint that fails with its head unmoved is
    /// damaged, and that is thrown.
    /// - Throws: `FenceError` for a damaged checkpoint (naming its key), `NATSError` when the
    ///   bucket cannot be read, or when the head moved at each of `attempts` reads.
    /// - Complexity: one key-value get per partition head and per 512 KiB of checkpoint (a
    ///   head read again after a failed read).
    public static func checkpoints(connection: NATSConnection, topology: Topology, attempts: Int = 5) throws -> [Partition] {
        let store = CheckpointStore(kv: try connection.keyValue(bucket: topology.stateBucket))
        var out: [Partition] = []
        for p in 0..<topology.partitions {
            let key = topology.checkpointKey(p)
            var tries = 0
            while true {
                guard let (head, revision) = try store.head(key: key) else {
                    out.append(Partition(partition: p, checkpoint: nil))
                    break
                }
                do {
                    out.append(Partition(partition: p, checkpoint: try store.read(key: key, head: head)))
                    break
                } catch let error as FenceError {
                    // Moved on since: read again from the new head.
                    tries += 1
                    guard try store.head(key: key)?.revision != revision else { throw error }
                    guard tries < attempts else {
                        throw NATSError(
                            "read checkpoint",
                            text: "checkpoint \(key) was replaced by its worker each of \(attempts) times it was read: try again")
                    }
                }
            }
        }
        return out
    }

    /// The group of every fence the pairs of each checkpoint name, as the worker that wrote
    /// it knew them: `base` (the workers' base fences, read as `fence worker --fences` reads
    /// them) with the fence changes on the control subject up to the checkpoint's
    /// `lastChangeSequence`, applied as a restore applies them. A fence the worker held that
    /// `base` lacks (other base fences than the workers') has no group here, nor has a fence
    /// without one.
    /// - Returns: one table per checkpoint, in the order given (fence id -> group).
    /// - Throws: `NATSError` when the control subject cannot be read, or when a checkpoint has
    ///   applied a change the stream no longer holds.
    /// - Complexity: one read of the control subject, then each change applied once (the
    ///   checkpoints taken in the order of their last change), plus O(pairs) lookups.
    public static func groups(
        for checkpoints: [PartitionCheckpoint], base: EventEngine, connection: NATSConnection, topology: Topology
    ) throws -> [IDTable<String>] {
        let log = ChangeLog(connection: connection, topology: topology)
        try log.refresh()
        var engine = base
        var applied: UInt64 = 0
        var errors: [String] = []
        var out = [IDTable<String>](repeating: IDTable(), count: checkpoints.count)
        for i in checkpoints.indices.sorted(by: { checkpoints[$0].lastChangeSequence < checkpoints[$1].lastChangeSequence }) {
            let cp = checkpoints[i]
            guard log.latest >= cp.lastChangeSequence else {
                throw NATSError(
                    "fence changes",
                    text: "partition \(cp.partition)'s checkpoint has applied the change at \(cp.lastChangeSequence), but the last "
                        + "message read on \(topology.controlSubject) is \(log.latest)")
            }
            for (_, change) in log.changes(after: applied, before: cp.lastChangeSequence + 1) {
                _ = change.apply(to: &engine, errors: &errors)
            }
            applied = max(applied, cp.lastChangeSequence)
            var table = IDTable<String>()
            for device in cp.snapshot.devices {
                for pair in device.pairs where table[pair.fence] == nil {
                    if let h = engine.store.handle(id: pair.fence), let g = engine.store.group(of: h) { table[pair.fence] = g }
                }
            }
            out[i] = table
        }
        return out
    }
}
