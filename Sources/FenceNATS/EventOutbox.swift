import FenceEngine
import FenceIO

/// Events as JetStream messages: NDJSON records exactly as `fence eval` writes them, many per
/// message, each message with a `Nats-Msg-Id` derived from its events.
///
/// The id is `<partition>:<cause>:<chunk>:<FNV-1a of the bytes>`, where `cause` is the stream
/// sequence of the message whose processing released the events (a fix message or a fence
/// change) and `chunk` numbers the messages of one release (at most 256 KiB each). Releases are
/// deterministic, so a partition replayed from a checkpoint produces the same messages with
/// the same ids, and the events stream drops the second copy of any it already stored within
/// its duplicate window.
struct EventOutbox {
    let writer = EventWriter(format: .ndjson)
    static let maxMessageBytes = 256 * 1024
    private var buffer: [UInt8] = []

    /// Publishes the events of one release asynchronously; `NATSConnection.waitForPublishes`
    /// collects the acknowledgements.
    /// - Returns: the number of messages published.
    mutating func publish(_ events: [FenceEvent], partition: Int, cause: UInt64, subject: String, via connection: NATSConnection)
        throws(NATSError) -> Int
    {
        guard !events.isEmpty else { return 0 }
        var chunk = 0
        buffer.removeAll(keepingCapacity: true)
        for e in events {
            writer.append(e, to: &buffer)
            if buffer.count >= Self.maxMessageBytes {
                try send(partition: partition, cause: cause, chunk: chunk, subject: subject, via: connection)
                chunk += 1
                buffer.removeAll(keepingCapacity: true)
            }
        }
        if !buffer.isEmpty {
            try send(partition: partition, cause: cause, chunk: chunk, subject: subject, via: connection)
            chunk += 1
        }
        return chunk
    }

    static func messageID(partition: Int, cause: UInt64, chunk: Int, bytes: [UInt8]) -> String {
        let h = String(FNV1a.hash(bytes), radix: 16)
        return "\(partition):\(cause):\(chunk):\(h)"
    }

    private func send(partition: Int, cause: UInt64, chunk: Int, subject: String, via connection: NATSConnection) throws(NATSError) {
        let id = Self.messageID(partition: partition, cause: cause, chunk: chunk, bytes: buffer)
        try connection.publishAsync(subject, buffer, msgId: id)
    }
}
