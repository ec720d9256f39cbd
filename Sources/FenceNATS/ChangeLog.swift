/// The fence changes in the fix stream, as a worker knows them.
///
/// Changes are chained: each names the sequence of the message before it on the control
/// subject, and `ChangePublisher` only publishes with `ExpectLastSubjectSeq` set to that
/// sequence, so the chain has no gaps. `refresh` asks the stream's leader for the last message
/// on the subject (one request) and, when it is new, reads every message on the subject after
/// the last one known, in stream order (one request each: `NATSConnection.nextMessage`). A fix
/// message at sequence s was stored after every change below s, so after a refresh made once s
/// has been received, every change a partition must apply before s is known.
///
/// A message on the subject that is no fence change (published there by something else) is
/// skipped and reported once (`refresh`'s result), and the chain goes on through it: a change
/// published after it names it as the one before. Walking the chain backwards from the last
/// change, as this did before, stopped at such a message for good: every partition retried it
/// forever (found by an audit).
final class ChangeLog {
    let connection: NATSConnection
    let topology: Topology
    /// Known changes by stream sequence.
    private(set) var changes: [UInt64: FenceChange] = [:]
    /// The last message on the control subject read: every change up to it is in `changes`.
    private(set) var latest: UInt64 = 0

    init(connection: NATSConnection, topology: Topology) {
        self.connection = connection
        self.topology = topology
    }

    /// Learns the changes published since the last refresh.
    /// - Returns: the messages on the control subject that are no fence change, with why.
    /// - Throws: when a change names a message after the last one read as the one before it:
    ///   that message is no longer in the stream. (One naming an earlier message was not
    ///   published by `fence change`: skipped, as a message that is no fence change.)
    /// - Complexity: one request, plus one per new message on the control subject and one more.
    @discardableResult
    func refresh() throws -> [(sequence: UInt64, reason: String)] {
        guard let last = try connection.lastMessage(stream: topology.fixStream, subject: topology.controlSubject),
            let seq = last.sequences?.stream
        else { return [] }
        guard seq > latest else { return [] }
        var found: [(UInt64, FenceChange)] = []
        var skipped: [(sequence: UInt64, reason: String)] = []
        var previous = latest
        var cursor = latest + 1
        while cursor <= seq,
            let (s, data) = try connection.nextMessage(stream: topology.fixStream, subject: topology.controlSubject, from: cursor), s <= seq
        {
            cursor = s + 1
            let change: FenceChange
            do {
                change = try data.withUnsafeBytes { raw throws(FixBatchError) in try FenceChange(decoding: raw) }
            } catch {
                skipped.append((s, "\(error)"))
                previous = s
                continue
            }
            if change.previous > previous {
                // The message it follows is gone (the stream's limits removed it): the fences
                // cannot be rebuilt exactly.
                throw NATSError("fence changes", text: "change \(change.previous) (before \(s)) is no longer in \(topology.fixStream)")
            }
            if change.previous < previous {
                // `fence change` publishes only after the message it names: this one came from
                // something else.
                skipped.append((s, "a fence change naming \(change.previous) as the message before it, which is \(previous): not published by fence change"))
                previous = s
                continue
            }
            found.append((s, change))
            previous = s
        }
        for (s, c) in found { changes[s] = c }
        latest = max(previous, latest)
        return skipped
    }

    /// Changes with `after < sequence < before`, in stream order.
    func changes(after: UInt64, before: UInt64) -> [(sequence: UInt64, change: FenceChange)] {
        guard before > after + 1, latest > after else { return [] }
        return changes.filter { $0.key > after && $0.key < before }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}
