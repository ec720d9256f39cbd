import CNATS
import Foundation

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

    /// Stream sequence, consumer sequence and delivery count of a consumer's delivery, read
    /// from its acknowledgement subject (`$JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.
    /// <consumer seq>.<time>.<pending>`, or the longer form with domain and account hash), and
    /// when the server stored the message (nanoseconds since 1970; nil when the token is not a
    /// number); for a message read by `js_GetMsg`, the stream sequence and its stored time.
    public var sequences: (stream: UInt64, consumer: UInt64, delivered: UInt64, stored: UInt64?)? {
        if let reply = natsMsg_GetReply(msg) {
            let length = strlen(reply)
            let found = UnsafeRawPointer(reply).withMemoryRebound(to: UInt8.self, capacity: max(1, length)) { p in
                Self.ackSequences(UnsafeBufferPointer(start: p, count: length))
            }
            if let found { return found }
        }
        let seq = knownSequence ?? natsMsg_GetSequence(msg)
        let time = natsMsg_GetTime(msg)
        return seq > 0 ? (seq, 0, 0, time > 0 ? UInt64(time) : nil) : nil
    }

    /// Delivered count, stream and consumer sequence from a `$JS.ACK.` subject's bytes, read
    /// in place: 9 tokens (the original form) or 12 and more (with domain and account hash),
    /// the three numbers the 5th to 7th or the 7th to 9th, and the stored time the token after
    /// them (nil when that one is not a number). Nil for any other subject or a sequence token
    /// that is not a decimal number below 2^64. Every delivery is asked this (a split into
    /// strings cost a fifth of a worker's time on small messages).
    /// - Complexity: O(length), no allocation.
    static func ackSequences(_ subject: UnsafeBufferPointer<UInt8>) -> (stream: UInt64, consumer: UInt64, delivered: UInt64, stored: UInt64?)? {
        let prefix: StaticString = "$JS.ACK."
        let n = subject.count
        guard n >= prefix.utf8CodeUnitCount, memcmp(subject.baseAddress!, prefix.utf8Start, prefix.utf8CodeUnitCount) == 0 else {
            return nil
        }
        // Token k starts after the k-th dot; the first 9 starts are kept.
        var starts: (Int, Int, Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var tokens = 1
        withUnsafeMutableBytes(of: &starts) { raw in
            let s = raw.bindMemory(to: Int.self)
            for i in 0..<n where subject[i] == 46 {
                if tokens < s.count { s[tokens] = i + 1 }
                tokens += 1
            }
        }
        let base = tokens == 9 ? 4 : tokens >= 12 ? 6 : -1
        guard base > 0 else { return nil }
        func number(_ k: Int) -> UInt64? {
            let start = withUnsafeBytes(of: starts) { $0.bindMemory(to: Int.self)[k] }
            var end = start
            while end < n && subject[end] != 46 { end += 1 }
            guard end > start else { return nil }
            var v: UInt64 = 0
            for i in start..<end {
                let d = subject[i] &- 48
                guard d < 10 else { return nil }
                let (m, o1) = v.multipliedReportingOverflow(by: 10)
                let (a, o2) = m.addingReportingOverflow(UInt64(d))
                guard !o1 && !o2 else { return nil }
                v = a
            }
            return v
        }
        guard let d = number(base), let s = number(base + 1), let c = number(base + 2) else { return nil }
        return (s, c, d, number(base + 3))
    }

    /// A status message's code and description (`NATS/1.0 408 Request Timeout`): no payload,
    /// a `Status` header. Nil for an ordinary message.
    var status: (code: String, description: String)? {
        guard natsMsg_GetDataLength(msg) == 0 else { return nil }
        if natsMsg_IsNoResponders(msg) { return ("503", "No Responders") }
        guard let code = header("Status") else { return nil }
        return (code, header("Description") ?? "")
    }
}

/// A pull consumer read through the JetStream pull protocol directly: a synchronous
/// subscription on a private inbox, and one `CONSUMER.MSG.NEXT` request read at a time, each
/// with its own reply subject (`<inbox>.<n>`, as the NATS clients do), read until it is
/// complete: all its messages, or the server's terminal status for it (404, 408, 409). The
/// next request is sent as soon as one has brought messages, so it is served while they are
/// applied.
///
/// Why not `natsSubscription_Fetch`: in nats.c 3.4.1 (Debian 12), a fetch that returns on its
/// timeout leaves its request's late messages queued, and the next fetch can then collect more
/// messages than its batch into an array sized for the batch, corrupting the heap (found with
/// AddressSanitizer: a read one past that array; glibc then aborted on the damage).
///
/// Deliveries are taken whichever request they answer, in the order they arrive (the worker
/// checks the consumer sequence, so none can be lost unnoticed); a status ends a fetch only
/// when it answers that fetch's own request, so a late status of an earlier request never
/// cuts a later one short.
public final class NATSPullSubscription: @unchecked Sendable {
    let sub: OpaquePointer
    let connection: NATSConnection
    let name: String
    let inbox: String
    let nextSubject: String
    private var requests = 0

    init(connection: NATSConnection, stream: String, consumer: String) throws(NATSError) {
        self.connection = connection
        name = consumer
        inbox = "_INBOX.fence." + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        nextSubject = "$JS.API.CONSUMER.MSG.NEXT.\(stream).\(consumer)"
        var s: OpaquePointer?
        try check(natsConnection_SubscribeSync(&s, connection.nc, inbox + ".*"), "subscribe \(inbox)")
        sub = s!
        // A request's messages are read as they come; the limits only bound a burst.
        try check(natsSubscription_SetPendingLimits(sub, 1 << 20, 1 << 30), "pending limits of \(inbox)")
    }

    deinit {
        // Unsubscribed now; destroyed once the connection is closed (nats.c before 3.6 can
        // crash destroying a subscription while its read loop delivers to it).
        natsSubscription_Unsubscribe(sub)
        connection.retire(sub)
    }

    /// The request whose deliveries are being read: its reply subject and how many of its
    /// `batch` messages are still to come.
    private var outstanding: (reply: String, remaining: Int)?

    /// Sends one pull request for `batch` messages that the server holds `timeoutMs` at most.
    private func request(batch: Int, timeoutMs: Int64) throws(NATSError) {
        requests += 1
        let reply = "\(inbox).\(requests)"
        let expires = max(timeoutMs, 20) * 1_000_000
        let body = Array("{\"batch\":\(batch),\"expires\":\(expires)}".utf8)
        let s = body.withUnsafeBytes { raw in
            natsConnection_PublishRequest(connection.nc, nextSubject, reply, raw.baseAddress, Int32(raw.count))
        }
        try check(s, "pull request to \(name)")
        outstanding = (reply, batch)
    }

    /// Up to `batch` messages, in delivery order: those of the outstanding pull request (sent
    /// by the previous fetch, or now when none is), read until the request is complete: all its
    /// messages, or the server's terminal status for it. Empty when nothing came in `timeoutMs`.
    /// Messages already read are always returned, even when the request then fails.
    ///
    /// Pipelined: a fetch that returns messages sends the next request before it returns, so
    /// the server fills it while the caller works on these (one request in flight per
    /// partition otherwise leaves server and worker waiting on each other). A request left
    /// outstanding when the subscription ends only leaves its messages unacknowledged: the next
    /// session recreates the consumer at its checkpoint anyway.
    /// - Throws: when the client is not connected, or nothing was read and the consumer is
    ///   gone, JetStream does not answer or the connection failed.
    /// - Complexity: at most one request; the messages come back on the inbox.
    public func fetch(batch: Int, timeoutMs: Int64) throws(NATSError) -> [NATSMessage] {
        // While the client reconnects, nats.c buffers a request and a wait would only time out:
        // say so, so a worker that has nothing to checkpoint still notices the lost server.
        guard connection.isConnected else {
            outstanding = nil
            throw NATSError("fetch from \(name)", text: "not connected (the client is reconnecting)")
        }
        if outstanding == nil { try request(batch: batch, timeoutMs: timeoutMs) }
        var out: [NATSMessage] = []
        out.reserveCapacity(batch)
        // The server ends a request by `expires`. nats-server 2.9 does not always say so: a
        // request it stopped serving part-way (about 220 of 256 messages, once per partition
        // in a run) got no 408. So 200 ms past that (counted from now: a pipelined request's
        // messages wait in the inbox) the request counts as over; waiting a whole second for
        // the missing status cost a second per partition and run. What it brought is returned, never dropped: a delivery that comes
        // later still arrives on the inbox, in order, and is taken by the next fetch.
        let deadline = Date().addingTimeInterval(Double(max(timeoutMs, 20)) / 1000 + 0.2)
        reading: while out.count < batch, let current = outstanding {
            let left = Int64(deadline.timeIntervalSinceNow * 1000)
            guard left > 0 else {
                outstanding = nil
                break
            }
            var m: OpaquePointer?
            let r = natsSubscription_NextMsg(&m, sub, left)
            if r == NATS_TIMEOUT { continue }
            if r != NATS_OK {
                outstanding = nil
                // Hand over what came; the error shows again on the next fetch if it lasts.
                if !out.isEmpty { return out }
                try check(r, "fetch from \(name)")
            }
            let msg = NATSMessage(m!, knownSequence: nil)
            guard let status = msg.status else {
                out.append(msg)
                // Deliveries are counted against the outstanding request whichever request
                // they answer (a late one of an earlier request only ends this one sooner).
                outstanding = current.remaining > 1 ? (current.reply, current.remaining - 1) : nil
                continue
            }
            guard msg.subject == current.reply else { continue }  // the end of an earlier request
            switch status.code {
            case "100":
                continue  // idle heartbeat or flow control: not the end
            case "404", "408":
                outstanding = nil  // no messages now / the request expired: complete
                break reading
            case "409":
                // Leadership change, exceeded limits: the request is over; a deleted consumer
                // is the caller's business.
                outstanding = nil
                if status.description.lowercased().contains("deleted") && out.isEmpty {
                    throw NATSError("fetch from \(name)", text: "409 \(status.description)")
                }
                break reading
            default:
                outstanding = nil
                if !out.isEmpty { return out }
                throw NATSError(
                    "fetch from \(name)",
                    text: status.code == "503" ? "no responders: JetStream or the consumer is not there" : "\(status.code) \(status.description)")
            }
        }
        // The next request goes out now, while the caller works on these. (After an empty
        // fetch none does: an idle partition sends one request per fetch timeout.)
        if !out.isEmpty && outstanding == nil { try? request(batch: batch, timeoutMs: timeoutMs) }
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
        try entry(key).map { ($0.value, $0.revision) }
    }

    /// A key's value, revision and the server's time of that write (nanoseconds since 1970,
    /// `kvEntry_Created`); nil when the key does not exist or was deleted.
    public func entry(_ key: String) throws(NATSError) -> (value: [UInt8], revision: UInt64, written: Int64)? {
        var entry: OpaquePointer?
        let s = kvStore_Get(&entry, kv, key)
        if s == NATS_NOT_FOUND { return nil }
        try check(s, "get \(bucket)/\(key)")
        defer { kvEntry_Destroy(entry) }
        let n = Int(kvEntry_ValueLen(entry))
        let bytes: [UInt8] = n > 0 ? [UInt8](UnsafeRawBufferPointer(start: kvEntry_Value(entry), count: n)) : []
        return (bytes, kvEntry_Revision(entry), kvEntry_Created(entry))
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

    /// Deletes a key only if its revision is still `last` (> 0): the delete marker `delete`
    /// writes, refused when someone wrote since.
    ///
    /// nats.c 3.4 has no conditioned delete (`kvStore_Delete` takes no revision), so this
    /// publishes the message `kvStore_Delete` publishes (kv.c `_delete`: subject
    /// `$KV.<bucket>.<key>`, header `KV-Operation: DEL`, no data) with
    /// `Nats-Expected-Last-Subject-Sequence` set, as nats.go's `Delete(key, LastRevision(n))`
    /// does; `kvStore_Get` reads the marker as no key. That subject is the bucket's own: not
    /// for a bucket that mirrors another, nor through a JetStream domain (the state bucket
    /// `fence setup` makes is neither).
    /// - Throws: `NATSError` with `isWrongLastSequence` when someone wrote in between.
    /// - Complexity: one JetStream publish and its acknowledgement.
    public func delete(_ key: String, last: UInt64) throws(NATSError) {
        precondition(last > 0, "a conditioned delete needs the revision it expects")
        var msg: OpaquePointer?
        try check(natsMsg_Create(&msg, "$KV.\(bucket).\(key)", nil, nil, 0), "delete \(bucket)/\(key)")
        // "Messages need to be destroyed with natsMsg_Destroy()" (nats.h, natsMsg_Create);
        // js_PublishMsg does not take the message over (kv.c destroys its own after it).
        defer { natsMsg_Destroy(msg) }
        try check(natsMsgHeader_Set(msg, "KV-Operation", "DEL"), "delete \(bucket)/\(key)")
        var po = jsPubOptions()
        jsPubOptions_Init(&po)
        po.MaxWait = connection.timeoutMs
        po.ExpectLastSubjectSeq = last
        var code = jsErrCode(rawValue: 0)
        try check(js_PublishMsg(nil, connection.js, msg, &po, &code), "delete \(bucket)/\(key) at revision \(last)", code: code)
    }
}
