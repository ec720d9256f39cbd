/// What the latest worker on a partition says of itself, so that `fence status --wait-drained`
/// judges the running session and not what the one before left behind.
///
/// Kept in the state bucket under `p<N>.session` as one line of text, `starting <owner>`,
/// `consuming <owner>` or `stopped <owner>`. A worker writes `starting` for each of its partitions
/// once connected, before it loads its fences (seconds for a million), and each session writes
/// `consuming` once it has created its consumer. Until then the consumer the server shows is the
/// previous session's, whose counts say nothing of what the new one has consumed, so a partition
/// marked `starting` is not drained. A session that stops cleanly writes `stopped` over its own
/// `consuming` (`markStopped`), so that the marker does not name a process long gone as consuming;
/// `stopped` is judged as `consuming` is, by the session's consumer and checkpoint, which outlive
/// it: drained when nothing is pending. A worker killed, or one whose stop finds the connection
/// down, leaves `consuming`, judged the same way. A worker stopped or failing before any session
/// puts back the marker it replaced (`withdraw`), only where its own `starting` is still the key's
/// latest revision: the marker before, or a delete marker conditioned on that revision where there
/// was none (`NATSKeyValue.delete(_:last:)`; a key deleted reads as no marker, to `fence status` as
/// to `get`). A newer worker's marker stays, even one written while the withdraw runs. One killed
/// then leaves `starting` until the next worker's session. A partition without a marker (never run,
/// or run by a worker from before markers) is judged as before, by its checkpoint and consumer
/// alone.
public struct SessionMarker: Sendable, Hashable {
    public enum Phase: String, Sendable {
        /// The worker is loading its fences; it has no consumer yet.
        case starting
        /// A session of the worker has created the partition's consumer.
        case consuming
        /// That session stopped cleanly (applied what it fetched, checkpointed, acknowledged);
        /// its consumer stays.
        case stopped
    }

    public var phase: Phase
    /// The worker's owner name (as in its checkpoints).
    public var owner: String

    public init(_ phase: Phase, owner: String) {
        self.phase = phase
        self.owner = owner
    }

    public func encoded() -> [UInt8] { Array("\(phase.rawValue) \(owner)".utf8) }

    /// Nil for anything but `<phase> <owner>` with a known phase and a non-empty owner.
    public init?(decoding bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let space = text.firstIndex(of: " "), let phase = Phase(rawValue: String(text[..<space])) else { return nil }
        let owner = String(text[text.index(after: space)...])
        guard !owner.isEmpty else { return nil }
        self.init(phase, owner: owner)
    }

    /// What `announce` replaced on one partition, for `withdraw`.
    public struct Replaced: Sendable {
        let key: String
        let previous: [UInt8]?
        let revision: UInt64
    }

    /// Marks `partitions` `starting` for `owner`.
    /// - Returns: what each marker replaced, for `withdraw`.
    /// - Complexity: a key-value get and put per partition.
    public static func announce(_ kv: NATSKeyValue, topology: Topology, partitions: [Int], owner: String) throws -> [Replaced] {
        try partitions.map { p in
            let key = topology.sessionKey(p)
            let previous = try kv.get(key)?.value
            let revision = try kv.put(key, SessionMarker(.starting, owner: owner).encoded())
            return Replaced(key: key, previous: previous, revision: revision)
        }
    }

    /// Puts back what `announce` replaced, where nobody has written since (a newer worker's
    /// marker stays): one write per partition, conditioned on the revision `announce` wrote, so
    /// no check-then-write leaves a window for another worker's announce (a get then a delete
    /// did). Best effort: a failure leaves `starting`, which only keeps `fence status` from
    /// calling the partition drained until a worker's session runs. Skipped while the
    /// connection is down, so that a stop is not held up by a request timeout per partition.
    /// - Complexity: a key-value update or conditioned delete per partition.
    public static func withdraw(_ kv: NATSKeyValue, _ replaced: [Replaced]) { withdraw(kv, replaced, beforeWrite: { _ in }) }

    /// Marks the partition of `key` `stopped` by `owner`, where the session's own marker (its
    /// `revision`) is still the latest: a newer worker's marker stays. Best effort, and skipped
    /// while the connection is down, so that a stop is not held up by a request timeout.
    /// - Complexity: a key-value update.
    public static func markStopped(_ kv: NATSKeyValue, key: String, owner: String, revision: UInt64) {
        guard kv.connection.isConnected else { return }
        _ = try? kv.update(key, SessionMarker(.stopped, owner: owner).encoded(), last: revision)
    }

    /// `withdraw`, calling `beforeWrite` with each key just before its write: for the tests,
    /// to put a newer worker's announce where a race would.
    static func withdraw(_ kv: NATSKeyValue, _ replaced: [Replaced], beforeWrite: (String) -> Void) {
        for r in replaced where kv.connection.isConnected {
            beforeWrite(r.key)
            if let previous = r.previous {
                _ = try? kv.update(r.key, previous, last: r.revision)
            } else {
                try? kv.delete(r.key, last: r.revision)
            }
        }
    }
}
