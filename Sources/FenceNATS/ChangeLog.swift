/// The fence changes in the fix stream, as a worker knows them.
///
/// Changes are chained: each names the sequence of the one before, and `ChangePublisher`
/// only publishes with `ExpectLastSubjectSeq` set to that sequence, so the chain has no gaps.
/// `refresh` asks the stream's leader for the last change (one request) and walks back to the
/// last one already known. A fix message at sequence s was stored after every change below s,
/// so after a refresh made once s has been received, every change a partition must apply
/// before s is known.
final class ChangeLog {
    let connection: NATSConnection
    let topology: Topology
    /// Known changes by stream sequence.
    private(set) var changes: [UInt64: FenceChange] = [:]
    /// The last change known: every change up to it is in `changes`.
    private(set) var latest: UInt64 = 0

    init(connection: NATSConnection, topology: Topology) {
        self.connection = connection
        self.topology = topology
    }

    /// Learns the changes published since the last refresh.
    /// - Complexity: one request, plus one per new change.
    func refresh() throws {
        guard let last = try connection.lastMessage(stream: topology.fixStream, subject: topology.controlSubject),
            let seq = last.sequences?.stream
        else { return }
        guard seq > latest else { return }
        var found: [(UInt64, FenceChange)] = []
        var cursor: (UInt64, NATSMessage)? = (seq, last)
        while let (s, m) = cursor, s > latest {
            let change = try m.withBytes { raw throws(FixBatchError) in try FenceChange(decoding: raw) }
            found.append((s, change))
            // The chain runs backwards; a link that does not is damage (and would loop).
            guard change.previous < s else {
                throw NATSError("fence changes", text: "change \(s) names \(change.previous) as its previous change: the chain is broken")
            }
            if change.previous == 0 || change.previous <= latest {
                cursor = nil
            } else {
                guard let prev = try connection.message(stream: topology.fixStream, sequence: change.previous) else {
                    throw NATSError("fence changes", text: "change \(change.previous) (before \(s)) is no longer in \(topology.fixStream)")
                }
                cursor = (change.previous, prev)
            }
        }
        for (s, c) in found { changes[s] = c }
        latest = seq
    }

    /// Changes with `after < sequence < before`, in stream order.
    func changes(after: UInt64, before: UInt64) -> [(sequence: UInt64, change: FenceChange)] {
        guard before > after + 1, latest > after else { return [] }
        return changes.filter { $0.key > after && $0.key < before }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}
