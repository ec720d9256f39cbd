import FenceEngine
import Foundation

/// Loads fixes into the fix stream as a producer would: each device's fixes to
/// `<prefix>.<device>`, batched per device.
///
/// Fixes are grouped by event-time window (`FixWaves`): a message carries one device's fixes
/// of one window (at most `maxFixesPerMessage`), so within a partition no fix of time-ordered
/// input arrives more than one window after a later one, and a fix dated far ahead holds back
/// no one else. Workers' lateness must be at least the window.
///
/// Messages go out in waves, at most one message per device in a wave, all asynchronous;
/// a wave must be fully acknowledged before the next starts. A wave that fails is sent again
/// whole, under the same message ids (the stream drops the copies it already has), so a
/// device's messages are stored in the order they were read even across a leader failover.
public final class FixPublisher {
    let connection: NATSConnection
    let topology: Topology
    /// Seconds of event time per message (0: one fix per message).
    public var window: Double { waves.window }
    public var maxFixesPerMessage: Int { waves.maxFixesPerMessage }
    /// Prefix of this run's message ids.
    let run = String(UInt64.random(in: 0...UInt64.max), radix: 36)

    private var waves: FixWaves
    private var nextMessage = 0
    public private(set) var messages = 0
    public private(set) var fixes = 0
    /// Waves sent again after a failure.
    public private(set) var retries = 0

    public init(connection: NATSConnection, topology: Topology, window: Double = 60, maxFixesPerMessage: Int = 1000) {
        self.connection = connection
        self.topology = topology
        waves = FixWaves(window: window, maxFixesPerMessage: maxFixesPerMessage)
    }

    /// Takes fixes in input order.
    public func add(_ batch: [Position]) throws {
        for fix in batch {
            if waves.closesWave(before: fix) { try sendWave() }
            if waves.append(fix) { try sendWave() }
        }
    }

    /// Sends what is buffered.
    public func finish() throws { try sendWave() }

    private func sendWave() throws {
        guard !waves.isEmpty else { return }
        let wave = waves.take().map { m in
            defer { nextMessage += 1 }
            fixes += m.fixes.count
            return (subject: topology.subject(device: m.device), payload: FixBatch.encode(device: m.device, fixes: m.fixes), id: "\(run):\(nextMessage)")
        }
        var first = true
        try Deployment.retrying {
            if !first { retries += 1 }
            first = false
            for m in wave { try connection.publishAsync(m.subject, m.payload, msgId: m.id) }
            _ = try connection.waitForPublishes()
        }
        messages += wave.count
    }
}
