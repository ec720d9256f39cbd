/// The fence changes in the fix stream, as a worker knows them.
///
/// Changes are chained: each names the sequence of the message before it on the control
/// subject, and `fence change` (`Deployment.publishChange`) only publishes with
/// `ExpectLastSubjectSeq` set to that sequence, so the chain has no gaps. `refresh` asks the
/// stream's leader for the last message on the subject (one request) and, when it is new,
/// reads every message on the subject after the last one known, in stream order (one request
/// each: `NATSConnection.nextMessage`). A fix message at sequence s was stored after every
/// change below s, so after a refresh made once s has been received, every change a partition
/// must apply before s is known.
///
/// A message on the subject that is no fence change, or a change that does not name the
/// message before it on the subject (so `fence change` did not publish it), is skipped and
/// reported (`refresh`'s result), and the chain goes on through it: the next change names it.
/// Walking the chain backwards from the last change, as this did before, stopped at such a
/// message for good: every partition retried it forever (found by an audit). Every decision
/// depends only on a message and the one before it, so every partition, running or restarted,
/// decides alike, as long as the stream keeps the subject's messages (`--max-age` 0); when it
/// does not, a change naming a message no longer there stops the worker, and so does a first
/// message that is no change naming nothing before it in a stream that has lost messages.
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
    /// - Returns: the messages on the control subject skipped, with why.
    /// - Throws: when the stream no longer holds a message the chain needs, or a request fails.
    /// - Complexity: one request, plus one per new message on the control subject (and one per
    ///   change naming a message not read before it).
    @discardableResult
    func refresh() throws -> [(sequence: UInt64, reason: String)] {
        guard let last = try connection.lastMessage(stream: topology.fixStream, subject: topology.controlSubject),
            let seq = last.sequences?.stream
        else { return [] }
        guard seq > latest else { return [] }
        var found: [(UInt64, FenceChange)] = []
        var skipped: [(sequence: UInt64, reason: String)] = []
        var previous = latest
        while previous < seq {
            guard let (s, data) = try connection.nextMessage(stream: topology.fixStream, subject: topology.controlSubject, from: previous + 1)
            else {
                throw NATSError("fence changes", text: "message \(seq) on \(topology.controlSubject) is no longer in \(topology.fixStream)")
            }
            let decoded = data.withUnsafeBytes { raw in Result { () throws(FixBatchError) in try FenceChange(decoding: raw) } }
            if previous == 0, (try? decoded.get())?.previous != 0, try streamHasLostMessages() {
                // The first message read, in a stream that no longer holds its first messages:
                // whether changes went before it cannot be told.
                throw NATSError(
                    "fence changes",
                    text: "the first message on \(topology.controlSubject), \(s), is no change naming nothing before it, and "
                        + "\(topology.fixStream) no longer holds its first messages: changes before it may be gone")
            }
            defer { previous = s }
            let change: FenceChange
            switch decoded {
            case .failure(let error):
                skipped.append((s, "\(error)"))
                continue
            case .success(let c): change = c
            }
            if change.previous == previous {
                found.append((s, change))
                continue
            }
            let followsAMessageGone =
                change.previous > previous && change.previous < s
                ? try connection.message(stream: topology.fixStream, sequence: change.previous) == nil : false
            if followsAMessageGone {
                // The message it follows is gone (the stream's limits removed it): the fences
                // cannot be rebuilt exactly.
                throw NATSError("fence changes", text: "change \(change.previous) (before \(s)) is no longer in \(topology.fixStream)")
            }
            // Names a message that is not the one before it on the subject: `fence change`
            // publishes only right after the message it names; this came from something else.
            skipped.append((s, "a fence change naming \(change.previous) as the message before it, which is \(previous): not published by fence change"))
        }
        for (s, c) in found { changes[s] = c }
        latest = previous
        return skipped
    }

    /// Whether the fix stream's first message is past sequence 1 (its limits or a purge
    /// removed messages). Asked only when reading the control subject from its start.
    private func streamHasLostMessages() throws -> Bool {
        guard let state = try connection.streamState(topology.fixStream) else { return true }
        return state.firstSequence > 1
    }

    /// Changes with `after < sequence < before`, in stream order.
    func changes(after: UInt64, before: UInt64) -> [(sequence: UInt64, change: FenceChange)] {
        guard before > after + 1, latest > after else { return [] }
        return changes.filter { $0.key > after && $0.key < before }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}
