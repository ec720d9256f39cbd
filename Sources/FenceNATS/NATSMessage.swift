import CNATS

/// A message the client handed over: destroyed with this object (nats.h: the application owns
/// messages returned by fetches and gets and must call `natsMsg_Destroy`).
public final class NATSMessage: @unchecked Sendable {
    let msg: OpaquePointer
    private let knownSequence: UInt64?

    init(_ msg: OpaquePointer, knownSequence: UInt64?) {
        self.msg = msg
        self.knownSequence = knownSequence
    }

    deinit { natsMsg_Destroy(msg) }

    public var subject: String { String(cString: natsMsg_GetSubject(msg)) }

    /// The reply subject: for a consumer's delivery, where its acknowledgement goes.
    public var reply: String? { natsMsg_GetReply(msg).map { String(cString: $0) } }

    /// Calls `body` with the payload, without copying it.
    public func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let n = Int(natsMsg_GetDataLength(msg))
        guard n > 0, let p = natsMsg_GetData(msg) else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return try body(UnsafeRawBufferPointer(start: p, count: n))
    }

    public var bytes: [UInt8] { withBytes { [UInt8]($0) } }

    /// A header's first value.
    public func header(_ name: String) -> String? {
        var value: UnsafePointer<CChar>?
        guard natsMsgHeader_Get(msg, name, &value) == NATS_OK, let value else { return nil }
        return String(cString: value)
    }

    /// Stream sequence, consumer sequence and delivery count of a consumer's delivery (from
    /// its reply subject); for a message read by `js_GetMsg`, the stream sequence alone.
    public var sequences: (stream: UInt64, consumer: UInt64, delivered: UInt64)? {
        var s: UInt64 = 0
        var c: UInt64 = 0
        var d: UInt64 = 0
        if CNATS_messageSequences(msg, &s, &c, &d) == NATS_OK { return (s, c, d) }
        let seq = knownSequence ?? natsMsg_GetSequence(msg)
        return seq > 0 ? (seq, 0, 0) : nil
    }
}

/// A pull subscription bound to a durable consumer.
public final class NATSPullSubscription: @unchecked Sendable {
    let sub: OpaquePointer
    let connection: NATSConnection
    let name: String

    init(_ sub: OpaquePointer, connection: NATSConnection, name: String) {
        self.sub = sub
        self.connection = connection
        self.name = name
    }

    deinit {
        // Unsubscribing leaves the durable consumer on the server; destroying frees the handle.
        natsSubscription_Unsubscribe(sub)
        natsSubscription_Destroy(sub)
    }

    /// Up to `batch` messages, waiting at most `timeoutMs` for the first; empty on timeout.
    /// - Complexity: one request to the server; the messages come back in one reply stream.
    public func fetch(batch: Int, timeoutMs: Int64) throws(NATSError) -> [NATSMessage] {
        var list = natsMsgList()
        var code = jsErrCode(rawValue: 0)
        let s = natsSubscription_Fetch(&list, sub, Int32(batch), timeoutMs, &code)
        if s == NATS_TIMEOUT { return [] }
        try check(s, "fetch from \(name)", code: code)
        var out: [NATSMessage] = []
        out.reserveCapacity(Int(list.Count))
        for i in 0..<Int(list.Count) {
            if let m = list.Msgs[i] {
                out.append(NATSMessage(m, knownSequence: nil))
                list.Msgs[i] = nil  // now owned by the wrapper
            }
        }
        natsMsgList_Destroy(&list)
        return out
    }

    /// Acknowledges a delivery by its reply subject; under `AckAll` this acknowledges every
    /// earlier delivery of the consumer too. Fire and forget, as `natsMsg_Ack` is: a lost
    /// acknowledgement only means a redelivery, which the worker skips by sequence.
    public func acknowledge(reply: String) throws(NATSError) {
        try connection.publishCore(reply, "+ACK")
    }
}

/// A JetStream key-value bucket.
public final class NATSKeyValue: @unchecked Sendable {
    let kv: OpaquePointer
    let connection: NATSConnection
    public let bucket: String

    init(_ kv: OpaquePointer, connection: NATSConnection, bucket: String) {
        self.kv = kv
        self.connection = connection
        self.bucket = bucket
    }

    deinit { kvStore_Destroy(kv) }

    /// A key's value and revision; nil when the key does not exist or was deleted.
    public func get(_ key: String) throws(NATSError) -> (value: [UInt8], revision: UInt64)? {
        var entry: OpaquePointer?
        let s = kvStore_Get(&entry, kv, key)
        if s == NATS_NOT_FOUND { return nil }
        try check(s, "get \(bucket)/\(key)")
        defer { kvEntry_Destroy(entry) }
        let n = Int(kvEntry_ValueLen(entry))
        let bytes: [UInt8] = n > 0 ? [UInt8](UnsafeRawBufferPointer(start: kvEntry_Value(entry), count: n)) : []
        return (bytes, kvEntry_Revision(entry))
    }

    /// Writes a value whatever the key holds. - Returns: the new revision.
    @discardableResult
    public func put(_ key: String, _ value: [UInt8]) throws(NATSError) -> UInt64 {
        var rev: UInt64 = 0
        let s = value.withUnsafeBytes { kvStore_Put(&rev, kv, key, $0.baseAddress, Int32($0.count)) }
        try check(s, "put \(bucket)/\(key)")
        return rev
    }

    /// Writes a value only if the key's revision is still `last` (0: only if the key does not
    /// exist). - Throws: `NATSError` with `isWrongLastSequence` when someone wrote in between.
    public func update(_ key: String, _ value: [UInt8], last: UInt64) throws(NATSError) -> UInt64 {
        var rev: UInt64 = 0
        let s = value.withUnsafeBytes { raw in
            last == 0
                ? kvStore_Create(&rev, kv, key, raw.baseAddress, Int32(raw.count))
                : kvStore_Update(&rev, kv, key, raw.baseAddress, Int32(raw.count), last)
        }
        if s != NATS_OK {
            var e = NATSError("update \(bucket)/\(key)", status: s)
            // nats.c reports the JetStream code only in its error text.
            if e.text.contains("10071") || e.text.contains("wrong last sequence") || e.text.contains("key exists") {
                e.jetStreamCode = 10071
            }
            throw e
        }
        return rev
    }

    /// Deletes a key (a delete marker; `get` then returns nil).
    public func delete(_ key: String) throws(NATSError) {
        try check(kvStore_Delete(kv, key), "delete \(bucket)/\(key)")
    }
}
