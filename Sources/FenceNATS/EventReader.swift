import Foundation

/// Reads the events stream back: every stored event message, in stream order, as the NDJSON
/// bytes the workers wrote.
public enum EventReader {
    /// Calls `body` with each event message's bytes, from the first stored message to the last
    /// one stored when the call began. A failure (a cluster electing a leader) is retried from
    /// the message after the last one read, so no message is read twice or skipped.
    /// - Returns: the number of messages read.
    /// - Complexity: one consumer per attempt, one fetch per 1,000 messages.
    @discardableResult
    public static func read(connection: NATSConnection, topology: Topology, _ body: (UnsafeRawBufferPointer) throws -> Void) throws
        -> Int
    {
        var state: StreamState?
        try Deployment.retrying { state = try connection.streamState(topology.eventStream) }
        guard let state else { throw NATSError("events", text: "no stream \(topology.eventStream): run `fence setup` first") }
        guard state.messages > 0 else { return 0 }
        let filter = topology.eventPrefix + ".*"
        var next: UInt64 = 1
        var count = 0
        try Deployment.retrying(attempts: 20) {
            let name = "reader-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
            try connection.createPullConsumer(
                stream: topology.eventStream, name: name, filter: filter, startSequence: next, ackWait: 60, maxAckPending: 0,
                acknowledged: false)
            defer { try? connection.deleteConsumer(stream: topology.eventStream, name: name) }
            let subscription = try connection.pullSubscription(stream: topology.eventStream, consumer: name)
            var idle = 0
            while next <= state.lastSequence {
                let messages = try subscription.fetch(batch: 1000, timeoutMs: 1000)
                if messages.isEmpty {
                    idle += 1
                    if idle >= 5 { throw NATSError("events", text: "\(topology.eventStream) stopped delivering after message \(next - 1)") }
                    continue
                }
                idle = 0
                for m in messages {
                    guard let seq = m.sequences?.stream, seq >= next else { continue }
                    if seq > state.lastSequence { break }
                    try m.withBytes { raw in try body(raw) }
                    count += 1
                    next = seq + 1
                }
            }
        }
        return count
    }
}
