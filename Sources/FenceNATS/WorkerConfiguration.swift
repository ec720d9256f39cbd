import FenceEngine

/// Everything a worker runs with. Settings, lateness, step and the base fences are folded into
/// a fingerprint kept in every checkpoint: a partition resumes only under the same ones.
public struct WorkerConfiguration: Sendable {
    /// Server URLs (several for a cluster).
    public var servers: [String]
    public var topology: Topology
    /// The partitions this worker runs, each on its own connection and thread.
    public var partitions: [Int]
    public var settings = EventSettings()
    /// Seconds of event time a fix may arrive after later fixes of its partition. Must cover
    /// the producers' batching window (`fence publish --window`).
    public var lateness: Double = 60
    /// The horizon moves in multiples of this many seconds of event time.
    public var step: Double = 1
    /// Wall seconds between checkpoints while busy (an idle partition checkpoints at once).
    public var checkpointInterval: Double = 1
    /// Messages per fetch.
    public var fetchBatch = 256
    /// Seconds before the server redelivers an unacknowledged message. Messages stay
    /// unacknowledged while they hold fixes (up to `lateness` of event time) and until the
    /// next checkpoint.
    public var ackWait: Double = 120
    /// Delivered-but-unacknowledged messages a partition may have at once; must exceed the
    /// messages of `lateness` seconds of event time plus a checkpoint interval.
    public var maxAckPending = 1_000_000
    /// The fences every partition starts from (before the changes in the stream).
    public var baseFences: [Fence] = []
    /// A digest of where the base fences came from (the file's bytes), for the fingerprint.
    public var baseFencesDigest: UInt64 = 0
    /// Repair invalid base polygons with GEOS MakeValid instead of rejecting them.
    public var repair = false
    /// Where progress and problems are reported (one line each).
    public var log: @Sendable (String) -> Void = { _ in }

    public init(servers: [String], topology: Topology, partitions: [Int]) {
        self.servers = servers
        self.topology = topology
        self.partitions = partitions
    }

    /// FNV-64 over the settings, lateness, step and base fence digest, in a fixed byte layout.
    public var fingerprint: UInt64 {
        var w = ByteWriter()
        w.u8(settings.actions.rawValue)
        w.f64(settings.dwell)
        w.u8(settings.initialEvents ? 1 : 0)
        w.f64(settings.hysteresisMargin)
        w.f64(settings.exitDelay)
        w.u8(settings.crossDetection ? 1 : 0)
        w.f64(lateness)
        w.f64(step)
        w.u64(baseFencesDigest)
        w.u8(repair ? 1 : 0)
        return FNV64.hash(w.bytes)
    }

    /// The digest `baseFencesDigest` expects of a fence file's bytes.
    public static func digest(of bytes: some Sequence<UInt8>) -> UInt64 { FNV64.hash(bytes) }
}
