import FenceEngine

/// What a partition needs to resume exactly: its stream positions, horizon, counters and the
/// tracker's state, as one value (so position and state can never disagree).
///
/// Binary form: magic `FENCEPART` (9 bytes), version (u32) = 2, payload length (u64), CRC-32 of
/// the payload (u32), then the payload: partition (u32); last fix message, replay-from and last
/// change sequences (u64); horizon and latest fix time (f64); the counters (7 x u64); the
/// configuration fingerprint (u64); owner (u32 length + UTF-8); then the tracker snapshot in
/// its own `FENCESTATE` form (u64 length + bytes, with its own CRC). A truncated or altered
/// value fails the length or checksum test and is refused, never read as an empty state.
public struct PartitionCheckpoint: Sendable, Hashable {
    public var partition: Int
    /// The last fix message applied: the checkpoint covers every message up to it.
    public var lastSequence: UInt64
    /// The oldest message holding a fix not yet applied; a restart reads again from here.
    public var replayFrom: UInt64
    /// The last fence change applied.
    public var lastChangeSequence: UInt64
    public var horizon: Double
    public var latestSeen: Double
    public var counters: PartitionStream.Counters
    /// Settings, lateness, step and base fences this state was computed with.
    public var fingerprint: UInt64
    /// The worker instance that wrote it.
    public var owner: String
    public var snapshot: TrackerSnapshot

    public init(
        partition: Int, lastSequence: UInt64, replayFrom: UInt64, lastChangeSequence: UInt64, horizon: Double, latestSeen: Double,
        counters: PartitionStream.Counters, fingerprint: UInt64, owner: String, snapshot: TrackerSnapshot
    ) {
        self.partition = partition
        self.lastSequence = lastSequence
        self.replayFrom = replayFrom
        self.lastChangeSequence = lastChangeSequence
        self.horizon = horizon
        self.latestSeen = latestSeen
        self.counters = counters
        self.fingerprint = fingerprint
        self.owner = owner
        self.snapshot = snapshot
    }

    static let magic = Array("FENCEPART".utf8)
    /// 2 since fixes at the horizon are held (late is before it); a version 1 checkpoint's
    /// horizon H meant that fixes at H were released or late, and is read as the next Double
    /// above H, which means the same under the new rule.
    public static let formatVersion: UInt32 = 2

    public func encoded() -> [UInt8] {
        var p = ByteWriter()
        p.u32(UInt32(partition))
        p.u64(lastSequence)
        p.u64(replayFrom)
        p.u64(lastChangeSequence)
        p.f64(horizon)
        p.f64(latestSeen)
        for c in [
            counters.received, counters.applied, counters.late, counters.rejected, counters.duplicates, counters.events,
            counters.badMessages,
        ] { p.u64(UInt64(c)) }
        p.u64(fingerprint)
        p.string(owner)
        p.block(snapshot.encoded())
        return ByteWriter.framed(magic: Self.magic, version: Self.formatVersion, payload: p.bytes)
    }

    /// Decodes and verifies a checkpoint.
    /// - Throws: `FenceError` (`malformedInput`) naming what is wrong.
    public init(decoding bytes: [UInt8]) throws(FenceError) {
        func fail(_ why: String) -> FenceError { FenceError(.malformedInput, reason: "partition checkpoint: \(why)") }
        let decoded: Result<PartitionCheckpoint, FenceError> = bytes.withUnsafeBytes { raw in
            let payload: UnsafeRawBufferPointer
            let version: UInt32
            switch ByteReader.unframed(
                raw, magic: Self.magic, versions: [1, Self.formatVersion], current: Self.formatVersion, what: "partition checkpoint")
            {
            case .failure(let problem): return .failure(fail(problem.reason))
            case .success(let frame):
                payload = frame.payload
                version = frame.version
            }
            var r = ByteReader(payload)
            guard let part = r.u32(), let s = r.u64(), let from = r.u64(), let change = r.u64(), let hz = r.f64(),
                let latest = r.f64()
            else { return .failure(fail("truncated payload")) }
            // A damaged record that still passes its CRC (or a forged one) must be refused here,
            // not trap later: a replay start of 0 or past the next message, a NaN time, a
            // counter beyond Int.
            guard from >= 1, from - 1 <= s else {
                return .failure(fail("replay start \(from) is not within 1...\(s)+1 (last applied message)"))
            }
            guard !hz.isNaN, !latest.isNaN else { return .failure(fail("horizon or latest fix time is NaN")) }
            var c = PartitionStream.Counters()
            var values: [Int] = []
            for _ in 0..<7 {
                guard let x = r.u64() else { return .failure(fail("truncated counters")) }
                guard x <= UInt64(Int.max) else { return .failure(fail("counter \(x) out of range")) }
                values.append(Int(x))
            }
            (c.received, c.applied, c.late, c.rejected, c.duplicates, c.events, c.badMessages) =
                (values[0], values[1], values[2], values[3], values[4], values[5], values[6])
            guard let fp = r.u64(), let owner = r.string(), let snap = r.block(), r.remaining == 0 else {
                return .failure(fail("truncated or padded payload"))
            }
            do throws(FenceError) {
                let snapshot = try TrackerSnapshot(decoding: snap)
                return .success(
                    PartitionCheckpoint(
                        partition: Int(part), lastSequence: s, replayFrom: from, lastChangeSequence: change,
                        horizon: version == 1 ? hz.nextUp : hz,
                        latestSeen: latest, counters: c, fingerprint: fp, owner: owner, snapshot: snapshot))
            } catch {
                return .failure(error)
            }
        }
        self = try decoded.get()
    }
}
