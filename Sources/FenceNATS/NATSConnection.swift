import CNATS
import FenceIO
import Foundation

/// One connection to a NATS server (or cluster) and its JetStream context: the one door
/// through which FenceNATS calls the nats.c client. Every other file speaks in Swift values.
///
/// Ownership (nats.h): the connection and the context are destroyed in `deinit`; messages
/// returned by fetches and gets are wrapped at once in `NATSMessage`, which destroys them;
/// strings the client returns inside structures are copied before the structure is destroyed.
/// Asynchronous publish outcomes are counted by the C handler in the shim (`CNATS_ackHandler`).
///
/// Thread safety: nats.c connections are thread-safe; the worker still gives each partition
/// its own connection, so one partition's rewind never disturbs another's publishes.
public final class NATSConnection: @unchecked Sendable {
    let nc: OpaquePointer
    let js: OpaquePointer
    private let tally: UnsafeMutablePointer<CNATSPublishTally>
    private var tallyBase = (acked: Int64(0), duplicates: Int64(0), failed: Int64(0))
    /// nats.c builds its table of pending publishes on the first asynchronous publish; its
    /// pending-list call dereferences that table, so it is only called once one exists.
    private var publishedAsync = false
    /// Milliseconds a JetStream API call or publish waits for its reply.
    public let timeoutMs: Int64

    /// Connects, retrying for `connectWait` seconds while no server answers.
    /// - Parameters:
    ///   - servers: URLs such as `nats://127.0.0.1:4222`; every one of a cluster may be given.
    ///   - name: the connection name the server shows in its monitoring.
    ///   - reconnect: let the client reconnect by itself (forever, every 250 ms) after a loss.
    public init(servers: [String], name: String, timeoutMs: Int64 = 5000, connectWait: Double = 10, reconnect: Bool = true)
        throws(NATSError)
    {
        self.timeoutMs = timeoutMs
        var opts: OpaquePointer?
        try check(natsOptions_Create(&opts), "natsOptions_Create")
        defer { natsOptions_Destroy(opts) }
        let urls = CStrings(servers)
        try check(urls.withPointers { natsOptions_SetServers(opts, $0, Int32(servers.count)) }, "servers \(servers)")
        try check(natsOptions_SetName(opts, name), "natsOptions_SetName")
        try check(natsOptions_SetNoRandomize(opts, true), "natsOptions_SetNoRandomize")
        try check(natsOptions_SetTimeout(opts, 2000), "natsOptions_SetTimeout")
        try check(natsOptions_SetAllowReconnect(opts, reconnect), "natsOptions_SetAllowReconnect")
        try check(natsOptions_SetMaxReconnect(opts, -1), "natsOptions_SetMaxReconnect")
        try check(natsOptions_SetReconnectWait(opts, 250), "natsOptions_SetReconnectWait")
        try check(natsOptions_SetPingInterval(opts, 2000), "natsOptions_SetPingInterval")
        try check(natsOptions_SetMaxPingsOut(opts, 3), "natsOptions_SetMaxPingsOut")
        try check(natsOptions_SetIOBufSize(opts, 1 << 20), "natsOptions_SetIOBufSize")
        try check(natsOptions_SetReconnectBufSize(opts, 64 << 20), "natsOptions_SetReconnectBufSize")
        var conn: OpaquePointer?
        let deadline = Date().addingTimeInterval(connectWait)
        var status = natsConnection_Connect(&conn, opts)
        while status != NATS_OK && Date() < deadline {
            usleep(200_000)
            status = natsConnection_Connect(&conn, opts)
        }
        try check(status, "connect to \(servers.joined(separator: ","))")
        nc = conn!
        tally = .allocate(capacity: 1)
        tally.initialize(to: CNATSPublishTally())
        var jsOpts = jsOptions()
        jsOptions_Init(&jsOpts)
        jsOpts.Wait = timeoutMs
        jsOpts.PublishAsync.MaxPending = 4096
        jsOpts.PublishAsync.StallWait = timeoutMs
        CNATS_installAckHandler(&jsOpts, tally)
        var ctx: OpaquePointer?
        let s = natsConnection_JetStream(&ctx, nc, &jsOpts)
        guard s == NATS_OK, let ctx else {
            natsConnection_Destroy(nc)
            tally.deallocate()
            throw NATSError("JetStream context", status: s)
        }
        js = ctx
    }

    deinit {
        // No acknowledgement handler may run once the tally is gone: drop what is still in
        // flight (nats.c then ignores late replies), and wait for a handler already running.
        discardPendingPublishes()
        natsConnection_Close(nc)
        for sub in retiredLock.withLock({ retired }) { natsSubscription_Destroy(sub) }
        jsCtx_Destroy(js)
        natsConnection_Destroy(nc)
        tally.deallocate()
    }

    /// True while the client holds a live connection (not reconnecting, not closed).
    public var isConnected: Bool { natsConnection_Status(nc) == NATS_CONN_STATUS_CONNECTED }

    // MARK: - Publishing

    /// Publishes asynchronously to JetStream; the outcome is counted and collected by
    /// `waitForPublishes`. Blocks only when 4096 publishes are already in flight.
    /// - Parameter msgId: the `Nats-Msg-Id` header; the stream drops a second message with the
    ///   same id inside its duplicate window.
    public func publishAsync(_ subject: String, _ bytes: [UInt8], msgId: String?) throws(NATSError) {
        var po = jsPubOptions()
        jsPubOptions_Init(&po)
        po.MaxWait = timeoutMs
        publishedAsync = true
        let s: natsStatus = bytes.withUnsafeBytes { raw in
            subject.withCString { subj in
                if let msgId {
                    return msgId.withCString { id in
                        po.MsgId = id
                        return js_PublishAsync(js, subj, raw.baseAddress, Int32(raw.count), &po)
                    }
                }
                return js_PublishAsync(js, subj, raw.baseAddress, Int32(raw.count), &po)
            }
        }
        try check(s, "publish to \(subject)")
    }

    /// What became of the asynchronous publishes since the last call.
    public struct PublishOutcome: Sendable {
        public var acked: Int
        /// Acknowledged as duplicates: the stream already held a message with that id.
        public var duplicates: Int
    }

    /// Waits until every asynchronous publish is acknowledged.
    /// - Throws: when one failed (the server refused it or no reply came within the timeout)
    ///   or they are not all answered within `timeoutMs`; what was in flight is then dropped.
    public func waitForPublishes() throws(NATSError) -> PublishOutcome {
        var po = jsPubOptions()
        jsPubOptions_Init(&po)
        po.MaxWait = timeoutMs
        let s = js_PublishAsyncComplete(js, &po)
        if s != NATS_OK { discardPendingPublishes() }
        let acked = CNATS_load(&tally.pointee.acked)
        let duplicates = CNATS_load(&tally.pointee.duplicates)
        let failed = CNATS_load(&tally.pointee.failed)
        defer { tallyBase = (acked, duplicates, failed) }
        try check(s, "waiting for publish acknowledgements")
        if failed > tallyBase.failed {
            let text = withUnsafeBytes(of: &tally.pointee.lastText) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            throw NATSError(
                "publish", status: natsStatus(rawValue: UInt32(tally.pointee.lastStatus)),
                jetStreamCode: jsErrCode(rawValue: UInt32(tally.pointee.lastErrorCode)))
                .withText(
                    "\(failed - tallyBase.failed) publishes failed; last: \(text)"
                        // No stream took the subject: most often the server's configuration
                        // lacks the mapping `fence setup` printed, so fix.<device> reaches
                        // no partition's subject, or its mapping has more partitions than
                        // setup made (the fix stream takes only setup's partitions).
                        + (text.contains("No responders")
                            ? " (no stream took the message: does the server's configuration hold the subject mapping `fence setup` printed, with the same partition count?)"
                            : ""))
        }
        return PublishOutcome(acked: Int(acked - tallyBase.acked), duplicates: Int(duplicates - tallyBase.duplicates))
    }

    private func discardPendingPublishes() {
        guard publishedAsync else { return }
        var list = natsMsgList()
        if js_PublishAsyncGetPendingList(&list, js) == NATS_OK { natsMsgList_Destroy(&list) }
        var po = jsPubOptions()
        jsPubOptions_Init(&po)
        po.MaxWait = 1000
        _ = js_PublishAsyncComplete(js, &po)
    }

    /// Publishes and waits for the stream's acknowledgement.
    /// - Parameters:
    ///   - expectLastSubjectSeq: refuse (JetStream error 10071) unless the last message on this
    ///     subject has this sequence; 0 means no message on the subject yet.
    /// - Returns: the message's stream sequence, and whether it was a duplicate.
    @discardableResult
    public func publish(_ subject: String, _ bytes: [UInt8], msgId: String? = nil, expectLastSubjectSeq: UInt64? = nil)
        throws(NATSError) -> (sequence: UInt64, duplicate: Bool)
    {
        var po = jsPubOptions()
        jsPubOptions_Init(&po)
        po.MaxWait = timeoutMs
        if let e = expectLastSubjectSeq {
            if e == 0 { po.ExpectNoMessage = true } else { po.ExpectLastSubjectSeq = e }
        }
        var ack: UnsafeMutablePointer<jsPubAck>?
        var code = jsErrCode(rawValue: 0)
        let s: natsStatus = bytes.withUnsafeBytes { raw in
            subject.withCString { subj in
                (msgId ?? "").withCString { id in
                    if msgId != nil { po.MsgId = id }
                    return js_Publish(&ack, js, subj, raw.baseAddress, Int32(raw.count), &po, &code)
                }
            }
        }
        try check(s, "publish to \(subject)", code: code)
        defer { jsPubAck_Destroy(ack) }
        return (ack!.pointee.Sequence, ack!.pointee.Duplicate)
    }

    /// A plain (not JetStream) publish, as acknowledgements are sent.
    func publishCore(_ subject: String, _ text: String) throws(NATSError) {
        try check(natsConnection_PublishString(nc, subject, text), "publish to \(subject)")
    }

    /// Sends what the client has buffered and waits for the server's reply to a ping.
    public func flush() throws(NATSError) {
        try check(natsConnection_FlushTimeout(nc, timeoutMs), "flush")
    }

    // MARK: - Stream messages

    /// A stored message by sequence (served by the stream's leader).
    /// - Returns: nil when there is none at that sequence (deleted or never written).
    public func message(stream: String, sequence: UInt64) throws(NATSError) -> NATSMessage? {
        var msg: OpaquePointer?
        var code = jsErrCode(rawValue: 0)
        let s = js_GetMsg(&msg, js, stream, sequence, nil, &code)
        if s == NATS_NOT_FOUND || code.rawValue == 10037 { return nil }
        try check(s, "get message \(sequence) of \(stream)", code: code)
        return NATSMessage(msg!, knownSequence: sequence)
    }

    /// The last stored message on a subject (wildcards allowed), from the stream's leader.
    public func lastMessage(stream: String, subject: String) throws(NATSError) -> NATSMessage? {
        var msg: OpaquePointer?
        var code = jsErrCode(rawValue: 0)
        let s = js_GetLastMsg(&msg, js, stream, subject, nil, &code)
        if s == NATS_NOT_FOUND || code.rawValue == 10037 { return nil }
        try check(s, "get last message on \(subject) of \(stream)", code: code)
        return NATSMessage(msg!, knownSequence: nil)
    }

    /// The first stored message on `subject` at or after sequence `from`, from the stream's
    /// leader (JetStream's message get with `next_by_subj`, served since nats-server 2.9):
    /// its sequence and bytes, or nil when there is none.
    /// - Complexity: one request.
    public func nextMessage(stream: String, subject: String, from: UInt64) throws(NATSError) -> (sequence: UInt64, data: [UInt8])? {
        let request = "{\"seq\":\(max(1, from)),\"next_by_subj\":\(OutputEscaping.jsonString(subject))}"
        var reply: OpaquePointer?
        try check(
            natsConnection_RequestString(&reply, nc, "$JS.API.STREAM.MSG.GET.\(stream)", request, timeoutMs),
            "get the next message on \(subject) of \(stream) from \(from)")
        defer { natsMsg_Destroy(reply) }
        let length = Int(natsMsg_GetDataLength(reply))
        let body = natsMsg_GetData(reply).map { Data(bytes: $0, count: length) } ?? Data()
        guard let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] else {
            throw NATSError("message get", text: "the server's reply is not JSON: \(String(decoding: body.prefix(200), as: UTF8.self))")
        }
        if let error = object["error"] as? [String: Any] {
            // 10037: no message found (a missing stream is a 404 too, and an error).
            if (error["err_code"] as? NSNumber)?.intValue == 10037 { return nil }
            throw NATSError("message get", text: "\(error["description"] ?? error)")
        }
        guard let message = object["message"] as? [String: Any], let sequence = (message["seq"] as? NSNumber)?.uint64Value else {
            throw NATSError("message get", text: "the server's reply names no message: \(String(decoding: body.prefix(200), as: UTF8.self))")
        }
        // A server that does not know next_by_subj answers with the message at `from`.
        guard sequence >= from, message["subject"] as? String == subject else {
            throw NATSError("message get", text: "asked for the next message on \(subject) from \(from), the server gave \(sequence) "
                + "on \(message["subject"] ?? "?") (next_by_subj needs nats-server 2.9 or later)")
        }
        guard let text = message["data"] as? String else { return (sequence, []) }
        guard let data = Data(base64Encoded: text) else {
            throw NATSError("message get", text: "message \(sequence)'s data is not base64")
        }
        return (sequence, [UInt8](data))
    }

    // MARK: - Streams and consumers

    /// A stream's message count and sequence range; nil when the stream does not exist.
    public func streamState(_ name: String) throws(NATSError) -> StreamState? {
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var code = jsErrCode(rawValue: 0)
        let s = js_GetStreamInfo(&info, js, name, nil, &code)
        if s == NATS_NOT_FOUND || code.rawValue == 10059 { return nil }
        try check(s, "stream info \(name)", code: code)
        defer { jsStreamInfo_Destroy(info) }
        let st = info!.pointee.State
        let cfg = info!.pointee.Config!.pointee
        var subjects: [String] = []
        for i in 0..<Int(cfg.SubjectsLen) { subjects.append(String(cString: cfg.Subjects[i]!)) }
        return StreamState(
            messages: st.Msgs, bytes: st.Bytes, firstSequence: st.FirstSeq, lastSequence: st.LastSeq, subjects: subjects,
            replicas: Int(cfg.Replicas), duplicateWindow: Double(cfg.Duplicates) / 1e9,
            leader: info!.pointee.Cluster?.pointee.Leader.map { String(cString: $0) })
    }

    /// Creates a stream, or updates it when one of that name exists.
    /// - Parameters:
    ///   - duplicateWindow: seconds the stream remembers `Nats-Msg-Id`s (0: the server's 2 min).
    public func createStream(_ config: StreamConfig) throws(NATSError) {
        var cfg = jsStreamConfig()
        jsStreamConfig_Init(&cfg)
        let strings = CStrings(config.subjects)
        let s: (natsStatus, jsErrCode) = config.name.withCString { name in
            strings.withPointers { subjects in
                cfg.Name = name
                cfg.Subjects = UnsafeMutablePointer(mutating: subjects)
                cfg.SubjectsLen = Int32(config.subjects.count)
                cfg.Storage = config.memory ? js_MemoryStorage : js_FileStorage
                cfg.Replicas = Int64(config.replicas)
                cfg.Duplicates = Int64(config.duplicateWindow * 1e9)
                cfg.MaxAge = Int64(config.maxAge * 1e9)
                cfg.MaxMsgSize = Int32(config.maxMessageSize)
                var info: UnsafeMutablePointer<jsStreamInfo>?
                var code = jsErrCode(rawValue: 0)
                var st = js_AddStream(&info, js, &cfg, nil, &code)
                if code.rawValue == 10058 {
                    code = jsErrCode(rawValue: 0)
                    st = js_UpdateStream(&info, js, &cfg, nil, &code)
                }
                jsStreamInfo_Destroy(info)
                return (st, code)
            }
        }
        try check(s.0, "create stream \(config.name)", code: s.1)
    }

    /// Deletes a consumer; a missing one is not an error.
    public func deleteConsumer(stream: String, name: String) throws(NATSError) {
        var code = jsErrCode(rawValue: 0)
        let s = js_DeleteConsumer(js, stream, name, nil, &code)
        if s == NATS_NOT_FOUND || code.rawValue == 10014 { return }
        try check(s, "delete consumer \(name)", code: code)
    }

    /// Creates a durable pull consumer that delivers `filter` from `startSequence` on, with
    /// `AckAll` (acknowledging a message acknowledges every earlier one), or with no
    /// acknowledgements at all when `acknowledged` is false (a reader that keeps no position).
    /// - Parameters:
    ///   - ackWait: seconds before an unacknowledged message is delivered again.
    ///   - maxAckPending: delivered-but-unacknowledged messages allowed at once.
    public func createPullConsumer(
        stream: String, name: String, filter: String, startSequence: UInt64, ackWait: Double, maxAckPending: Int,
        acknowledged: Bool = true
    ) throws(NATSError) {
        var cc = jsConsumerConfig()
        jsConsumerConfig_Init(&cc)
        cc.AckPolicy = acknowledged ? js_AckAll : js_AckNone
        cc.AckWait = Int64(ackWait * 1e9)
        cc.MaxAckPending = Int64(maxAckPending)
        cc.MaxDeliver = -1
        if startSequence > 1 {
            cc.DeliverPolicy = js_DeliverByStartSequence
            cc.OptStartSeq = startSequence
        } else {
            cc.DeliverPolicy = js_DeliverAll
        }
        var info: UnsafeMutablePointer<jsConsumerInfo>?
        var code = jsErrCode(rawValue: 0)
        let s = name.withCString { n in
            filter.withCString { f in
                cc.Durable = n
                cc.FilterSubject = f
                return js_AddConsumer(&info, js, stream, &cc, nil, &code)
            }
        }
        jsConsumerInfo_Destroy(info)
        try check(s, "create consumer \(name) on \(stream)", code: code)
    }

    /// A consumer's backlog: messages not yet delivered, and delivered but not acknowledged;
    /// nil when the consumer does not exist.
    public func consumerState(stream: String, name: String) throws(NATSError) -> ConsumerState? {
        var info: UnsafeMutablePointer<jsConsumerInfo>?
        var code = jsErrCode(rawValue: 0)
        let s = js_GetConsumerInfo(&info, js, stream, name, nil, &code)
        if s == NATS_NOT_FOUND || code.rawValue == 10014 { return nil }
        try check(s, "consumer info \(name)", code: code)
        defer { jsConsumerInfo_Destroy(info) }
        let i = info!.pointee
        return ConsumerState(
            pending: i.NumPending, ackPending: UInt64(max(0, i.NumAckPending)), ackFloor: i.AckFloor.Stream,
            delivered: i.Delivered.Stream, created: i.Created, waiting: i.NumWaiting, deliveries: i.Delivered.Consumer)
    }

    /// A pull subscription on an existing durable consumer (see `NATSPullSubscription`).
    public func pullSubscription(stream: String, consumer: String) throws(NATSError) -> NATSPullSubscription {
        try NATSPullSubscription(connection: self, stream: stream, consumer: consumer)
    }

    /// Subscriptions unsubscribed but not yet destroyed: they are destroyed once the connection
    /// is closed, when no read loop can deliver to them any more.
    private let retiredLock = NSLock()
    private var retired: [OpaquePointer] = []

    func retire(_ sub: OpaquePointer) { retiredLock.withLock { retired.append(sub) } }

    // MARK: - Key-value

    /// Creates a key-value bucket (keeping one revision per key), or opens it if it exists.
    public func createKeyValue(bucket: String, replicas: Int, maxValueSize: Int, memory: Bool = false) throws(NATSError)
        -> NATSKeyValue
    {
        var cfg = kvConfig()
        kvConfig_Init(&cfg)
        var kv: OpaquePointer?
        let s = bucket.withCString { b in
            cfg.Bucket = b
            cfg.History = 1
            cfg.Replicas = Int32(replicas)
            cfg.MaxValueSize = Int32(maxValueSize)
            cfg.StorageType = memory ? js_MemoryStorage : js_FileStorage
            return js_CreateKeyValue(&kv, js, &cfg)
        }
        try check(s, "create key-value bucket \(bucket)")
        return NATSKeyValue(kv!, connection: self, bucket: bucket)
    }

    /// Opens an existing key-value bucket.
    public func keyValue(bucket: String) throws(NATSError) -> NATSKeyValue {
        var kv: OpaquePointer?
        try check(js_KeyValue(&kv, js, bucket), "open key-value bucket \(bucket)")
        return NATSKeyValue(kv!, connection: self, bucket: bucket)
    }
}

/// A stream's configuration as the worker sets it up.
public struct StreamConfig: Sendable {
    public var name: String
    public var subjects: [String]
    public var replicas = 1
    /// Seconds `Nats-Msg-Id`s are remembered for deduplication.
    public var duplicateWindow: Double = 120
    /// Seconds messages are kept (0: no age limit).
    public var maxAge: Double = 0
    public var maxMessageSize = -1
    public var memory = false

    public init(name: String, subjects: [String]) {
        self.name = name
        self.subjects = subjects
    }
}

/// A consumer's position, as `js_GetConsumerInfo` reports it.
public struct ConsumerState: Sendable {
    /// Messages matching the filter not yet delivered.
    public var pending: UInt64
    /// Delivered, not yet acknowledged.
    public var ackPending: UInt64
    /// Stream sequence up to which everything is acknowledged.
    public var ackFloor: UInt64
    /// Stream sequence of the last delivery.
    public var delivered: UInt64
    /// When the server made the consumer, nanoseconds since 1970.
    public var created: Int64 = 0
    /// Pull requests waiting on it (a worker's fetch, until it expires).
    public var waiting: Int64 = 0
    /// Deliveries made (the consumer's own sequence: redeliveries count).
    public var deliveries: UInt64 = 0
}

/// A stream's state, as `js_GetStreamInfo` reports it.
public struct StreamState: Sendable {
    public var messages: UInt64
    /// Bytes the stored messages take (subjects, headers and data).
    public var bytes: UInt64
    public var firstSequence: UInt64
    public var lastSequence: UInt64
    public var subjects: [String]
    public var replicas: Int
    public var duplicateWindow: Double
    /// The server leading the stream in a cluster (nil on a single server).
    public var leader: String?
}

extension NATSError {
    func withText(_ t: String) -> NATSError {
        var e = self
        e.text = t
        return e
    }
}

/// C copies of Swift strings, alive as long as this object, for the `const char **` arrays
/// that nats.c configuration structures take.
final class CStrings {
    let pointers: [UnsafeMutablePointer<CChar>?]
    init(_ strings: [String]) { pointers = strings.map { strdup($0) } }
    deinit { for p in pointers { free(p) } }
    func withPointers<R>(_ body: (UnsafeMutablePointer<UnsafePointer<CChar>?>) -> R) -> R {
        var consts = pointers.map { UnsafePointer($0) }
        return consts.withUnsafeMutableBufferPointer { body($0.baseAddress!) }
    }
}
