import Foundation

/// Reads the events stream back: every stored event message, in stream order, as the NDJSON
/// bytes the workers wrote.
public enum EventReader {
    /// Calls `body` with each event message's bytes, from the first stored message to the last
    /// one stored when the call began.
    /// - Returns: the number of messages read.
    /// - Complexity: one consumer created and deleted, one fetch per 1,000 messages.
    @discardableResult
    public static func read(connection: NATSConnection, topology: Topology, _ body: (UnsafeRawBufferPointer) throws -> Void) throws
        -> Int
    {
        guard let state = try connection.streamState(topology.eventStream) else {
            throw NATSError("events", text: "no stream \(topology.eventStream): run `fence setup` first")
        }
        guard state.messages > 0 else { return 0 }
        let name = "reader-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        try connection.createPullConsumer(
            stream: topology.eventStream, name: name, filter: topology.eventPrefix + ".*", startSequence: 1, ackWait: 60,
            maxAckPending: 0, acknowledged: false)
        defer { try? connection.deleteConsumer(stream: topology.eventStream, name: name) }
        let subscription = try connection.pullSubscription(stream: topology.eventStream, consumer: name, filter: topology.eventPrefix + ".*")
        var count = 0
        var idle = 0
        while true {
            let messages = try subscription.fetch(batch: 1000, timeoutMs: 1000)
            if messages.isEmpty {
                idle += 1
                if idle >= 5 { throw NATSError("events", text: "stream \(topology.eventStream) stopped delivering at message \(count)") }
                continue
            }
            idle = 0
            var last: UInt64 = 0
            for m in messages {
                try m.withBytes { raw in try body(raw) }
                count += 1
                last = m.sequences?.stream ?? last
            }
            if last >= state.lastSequence { return count }
        }
    }
}
