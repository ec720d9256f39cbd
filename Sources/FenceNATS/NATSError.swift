import CNATS

/// A failed NATS or JetStream call: what was attempted, the client's status, JetStream's error
/// code where the server gave one, and the client's own text (`nats_GetLastError`).
public struct NATSError: Error, Sendable, CustomStringConvertible {
    /// What the worker was doing, e.g. "fetch from fence-p2".
    public var operation: String
    /// The `natsStatus` value (0 is success, 26 `NATS_TIMEOUT`, 12 `NATS_NOT_FOUND`).
    public var status: Int32
    /// JetStream's error code (e.g. 10071: wrong last sequence), 0 when none.
    public var jetStreamCode: Int32
    public var text: String

    init(_ operation: String, status s: natsStatus, jetStreamCode: jsErrCode = jsErrCode(rawValue: 0)) {
        self.operation = operation
        status = Int32(bitPattern: s.rawValue)
        self.jetStreamCode = Int32(bitPattern: jetStreamCode.rawValue)
        var last = NATS_OK
        let detail = nats_GetLastError(&last).map { String(cString: $0) } ?? ""
        let name = String(cString: natsStatus_GetText(s))
        text = detail.isEmpty ? name : detail.contains(name) ? detail : "\(name): \(detail)"
    }

    public init(_ operation: String, text: String) {
        self.operation = operation
        status = Int32(bitPattern: NATS_ERR.rawValue)
        jetStreamCode = 0
        self.text = text
    }

    public var description: String {
        "\(operation): \(text)" + (jetStreamCode != 0 ? " (JetStream error \(jetStreamCode))" : "")
    }

    /// The call ran out of time (nothing to fetch, or no reply in time).
    public var isTimeout: Bool { status == Int32(bitPattern: NATS_TIMEOUT.rawValue) }
    /// What was asked for does not exist (a key, a message, a consumer).
    public var isNotFound: Bool {
        status == Int32(bitPattern: NATS_NOT_FOUND.rawValue) || jetStreamCode == 10014 || jetStreamCode == 10037
            || jetStreamCode == 10059
    }
    /// An optimistic-concurrency check failed: someone else wrote first.
    public var isWrongLastSequence: Bool { jetStreamCode == 10071 }
}

/// Throws `NATSError` unless `s` is `NATS_OK`.
@inline(__always)
func check(_ s: natsStatus, _ operation: @autoclosure () -> String, code: jsErrCode = jsErrCode(rawValue: 0)) throws(NATSError) {
    if s != NATS_OK { throw NATSError(operation(), status: s, jetStreamCode: code) }
}
