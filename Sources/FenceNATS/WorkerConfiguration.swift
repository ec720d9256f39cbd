import FenceEngine

/// Everything a worker runs with. Settings, lateness, step, the lead bound and the base fences are folded into
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
    /// Seconds a fix may be dated after the server stored its message; later ones are refused
    /// (`PartitionStream.maxLead`). Infinity for no bound.
    public var maxLead: Double = 3600
    /// Wall seconds between checkpoints while busy (an idle partition checkpoints at once).
    public var checkpointInterval: Double = 1
    /// Messages per fetch.
    public var fetchBatch = 256
    /// Seconds before the server redelivers an unacknowledged message. Messages stay
    /// unacknowledged while they hold fixes (up to `lateness` of event time) and until the
    /// next checkpoint.
    public var ackWait: Double = 120
    /// Delivered-but-unacknowledged messages a partition may have at once; must exceed the
    /// messages of `lateness` seconds of event time plus a checkpoint interval, or the
    /// partition stops with `invalid-setting` once it finds itself unable to move on.
    public var maxAckPending = WorkerConfiguration.defaultMaxAckPending
    public static let defaultMaxAckPending = 1_000_000
    /// The fences every partition starts from (before the changes in the stream).
    public var baseFences: [Fence] = []
    /// A digest of the base fences as read (`digest(of:limits:)`), for the fingerprint.
    public var baseFencesDigest: UInt64 = 0
    /// Limits the store applies to each base fence (`--max-fence-positions`, ...).
    public var fenceLimits = FenceLimits()
    /// Repair invalid base polygons with GEOS MakeValid instead of rejecting them.
    public var repair = false
    /// For crash tests only: once a partition has received K fix messages in this session (a
    /// reconnect starts a new one; replayed messages count), the
    /// process kills itself (SIGKILL) at the first point it would write a checkpoint that
    /// follows published events: after the events stream has stored them, before the
    /// checkpoint is written (`FENCE_TEST_KILL_AFTER_MESSAGES=K`). So that there is a
    /// checkpoint to resume from, one is written as soon as it may be after K / 2 messages.
    /// Counted in messages, not checkpoints (time), so where in the stream the kill lands does
    /// not move with the speed of the machine or the engine.
    public var killAfterMessages: Int?
    /// For tests only: every acknowledgement a checkpoint would send is dropped, as if lost on
    /// the way (a consumer leader dying with it), so the partition depends on sending it again
    /// while idle (`FENCE_TEST_DROP_CHECKPOINT_ACKS=1`), or with `dropReacknowledgements` as
    /// well (`=all`), on acknowledging the redeliveries.
    public var dropCheckpointAcknowledgements = false
    public var dropReacknowledgements = false
    /// For tests only: a stalled process (`FENCE_TEST_STALL_FILE=PATH`). Once a partition has
    /// written a checkpoint, at its next one, after the events are stored and before the
    /// checkpoint is written, it waits while the file exists (doing nothing: no renewal of its
    /// lease), as a process stopped, swapped out or waiting on a disk would.
    public var stallFile: String?
    /// Sessions mark their partitions `consuming`, and `stopped` at a clean stop
    /// (`SessionMarker`). For tests only, off: a worker from before markers
    /// (`FENCE_TEST_NO_SESSION_MARKERS=1`).
    public var writesSessionMarkers = true
    /// Where progress and problems are reported (one line each).
    public var log: @Sendable (String) -> Void = { _ in }

    public init(servers: [String], topology: Topology, partitions: [Int]) {
        self.servers = servers
        self.topology = topology
        self.partitions = partitions
    }

    /// FNV-1a over the settings, lateness, step, base fence digest, repair and lead bound, in a
    /// fixed byte layout.
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
        w.f64(maxLead)
        return FNV1a.hash(w.bytes)
    }

    /// The digest `baseFencesDigest` expects: FNV-1a over every fence read, in order, in a fixed
    /// byte layout (properties by name), and the store limits. It depends on what was loaded,
    /// not on the source's format or bytes: the same fences from GeoJSON or a GeoPackage, or
    /// with the properties in another order, give the same digest.
    /// - Complexity: O(total vertices and property bytes).
    public static func digest(of fences: [Fence], limits: FenceLimits = FenceLimits()) -> UInt64 {
        var w = ByteWriter()
        func optional(_ v: Double?) {
            w.u8(v == nil ? 0 : 1)
            w.f64(v ?? 0)
        }
        w.u64(UInt64(limits.maxPositions))
        w.u64(UInt64(limits.maxPolygons))
        w.u64(UInt64(fences.count))
        var h = FNV1a.offset
        for f in fences {
            w.string(f.id)
            w.u8(f.group == nil ? 0 : 1)
            w.string(f.group ?? "")
            w.string(f.coord.rawValue)
            w.u8(f.actions == nil ? 0 : 1)
            w.u8(f.actions?.rawValue ?? 0)
            optional(f.dwell)
            optional(f.expires)
            switch f.shape {
            case .circle(let center, let radius):
                w.u8(1)
                w.f64(center.lon)
                w.f64(center.lat)
                w.f64(radius)
            case .polygons(let polygons):
                w.u8(2)
                w.u32(UInt32(polygons.count))
                for p in polygons {
                    w.u32(UInt32(p.holes.count + 1))
                    for ring in p.rings {
                        w.u32(UInt32(ring.count))
                        for v in ring {
                            w.f64(v.lon)
                            w.f64(v.lat)
                        }
                    }
                }
            }
            w.u32(UInt32(f.properties.count))
            for (k, v) in f.properties.sorted(by: { $0.key < $1.key }) {
                w.string(k)
                w.string(v)
            }
            // Hash per fence, so a million fences never sit in one byte buffer.
            h = FNV1a.hash(w.bytes, seed: h)
            w.bytes.removeAll(keepingCapacity: true)
        }
        return FNV1a.hash(w.bytes, seed: h)
    }
}
