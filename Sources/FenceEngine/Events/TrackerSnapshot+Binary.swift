/// A versioned, checksummed binary form of `TrackerSnapshot`.
///
/// Layout (little-endian): magic `FENCESTATE` (10 bytes), format version (u32), payload length
/// (u64), CRC-32 (IEEE) of the payload (u32), then the payload: watermark (f64), device count
/// (u64), and per device: id (u32 length + UTF-8), last time, lon, lat (f64), pair count (u32),
/// per pair: fence id (u32 length + UTF-8), flags (u8: 1 stayed, 2 exit pending, 4
/// undetermined, which stands alone), enter time, pending-since (f64).
/// Version 2 adds, after the devices: the engine's action mask (u8), the fence record count
/// (u64), and per record: id (u32 length + UTF-8), whether it has a group (u8) and the group,
/// its own mask (u8; 0xFF the engine's), its shape digest (u64). Version 1 files still read.
/// A truncated or altered file fails the length or checksum test and is refused; it is never
/// read as an empty state.
extension TrackerSnapshot {
    static let magic = Array("FENCESTATE".utf8)
    public static let formatVersion: UInt32 = 2

    public func encoded() -> [UInt8] {
        var payload = ByteWriter()
        payload.f64(watermark)
        payload.u64(UInt64(devices.count))
        for d in devices {
            payload.string(d.id)
            payload.f64(d.lastTime)
            payload.f64(d.lastLon)
            payload.f64(d.lastLat)
            payload.u32(UInt32(d.pairs.count))
            for p in d.pairs {
                payload.string(p.fence)
                payload.u8((p.stayed ? 1 : 0) | (p.exitPending ? 2 : 0) | (p.undetermined ? 4 : 0))
                payload.f64(p.enterTime)
                payload.f64(p.pendingSince)
            }
        }
        payload.u8((engineActions ?? .standard).rawValue)
        payload.u64(UInt64(fences.count))
        for f in fences {
            payload.string(f.id)
            payload.u8(f.group == nil ? 0 : 1)
            if let g = f.group { payload.string(g) }
            payload.u8(f.actions)
            payload.u64(f.shapeDigest)
        }
        return ByteWriter.framed(magic: Self.magic, version: Self.formatVersion, payload: payload.bytes)
    }

    /// Decodes and verifies a snapshot.
    /// - Throws: `FenceError` (`malformedInput`) naming what is wrong: not a state file, an
    ///   unknown version, truncated, checksum mismatch, or inconsistent content.
    public init(decoding bytes: [UInt8]) throws(FenceError) {
        func fail(_ why: String) -> FenceError { FenceError(.malformedInput, reason: "state file: \(why)") }
        let decoded: Result<TrackerSnapshot, FenceError> = bytes.withUnsafeBytes { raw in
            let version: UInt32
            let payload: UnsafeRawBufferPointer
            switch ByteReader.unframed(
                raw, magic: Self.magic, versions: [1, Self.formatVersion], current: Self.formatVersion, what: "fence state file")
            {
            case .failure(let problem): return .failure(fail(problem.reason))
            case .success(let frame): (version, payload) = frame
            }
            var r = ByteReader(payload)
            // A record that ends early, or whose text is not UTF-8 (`ByteReader.string`).
            func cut(_ what: String) -> FenceError {
                fail(r.sawInvalidText ? "\(what) holds text that is not valid UTF-8" : "truncated \(what)")
            }
            guard let watermark = r.f64(), let count = r.u64() else { return .failure(fail("truncated payload")) }
            // Each device takes at least 32 bytes: a count beyond that is corruption, not a reason to allocate.
            guard count <= UInt64(payload.count / 32) else { return .failure(fail("device count \(count) does not fit the file")) }
            var devices: [Device] = []
            devices.reserveCapacity(Int(count))
            for _ in 0..<count {
                guard let id = r.string(), let t = r.f64(), let lon = r.f64(), let lat = r.f64(), let n = r.u32() else {
                    return .failure(cut("device record"))
                }
                guard UInt64(n) <= UInt64(payload.count / 21) else { return .failure(fail("pair count \(n) does not fit the file")) }
                let which = "device \(devices.count + 1) (\(id.debugDescription))"
                var pairs: [Pair] = []
                pairs.reserveCapacity(Int(n))
                for _ in 0..<n {
                    guard let fence = r.string(), let flags = r.u8(), let enter = r.f64(), let pending = r.f64() else {
                        return .failure(cut("pair record"))
                    }
                    // Bits a value cannot hold; the rest is checked on the value (`check`).
                    guard flags & ~7 == 0 else { return .failure(fail("\(which): fence \(fence.debugDescription) has unknown flags \(flags)")) }
                    pairs.append(
                        Pair(
                            fence: fence, stayed: flags & 1 != 0, exitPending: flags & 2 != 0, enterTime: enter, pendingSince: pending,
                            undetermined: flags & 4 != 0))
                }
                devices.append(Device(id: id, lastTime: t, lastLon: lon, lastLat: lat, pairs: pairs))
            }
            var fences: [FenceRecord] = []
            var engineActions: FenceActions?
            if version >= 2 {
                guard let mask = r.u8(), let n = r.u64() else { return .failure(cut("fence records")) }
                // Each record takes at least 14 bytes.
                guard n <= UInt64(payload.count / 14) else { return .failure(fail("fence record count \(n) does not fit the file")) }
                engineActions = FenceActions(rawValue: mask)
                for _ in 0..<n {
                    guard let id = r.string(), let hasGroup = r.u8() else { return .failure(cut("fence record")) }
                    var group: String?
                    if hasGroup != 0 {
                        guard let g = r.string() else { return .failure(cut("fence record")) }
                        group = g
                    }
                    guard let actions = r.u8(), let digest = r.u64() else { return .failure(cut("fence record")) }
                    fences.append(FenceRecord(id: id, group: group, actions: actions, shapeDigest: digest))
                }
            }
            guard r.remaining == 0 else { return .failure(fail("\(r.remaining) unexpected bytes after the last record")) }
            let snapshot = TrackerSnapshot(watermark: watermark, devices: devices, fences: fences, engineActions: engineActions)
            return Result { () throws(FenceError) in
                try snapshot.check(context: "state file")
                return snapshot
            }
        }
        self = try decoded.get()
    }
}

extension TrackerSnapshot {
    /// Refuses a snapshot whose values no engine writes: what `init(decoding:)` refuses in a
    /// state file whose checksum holds, and `EventEngine.restore` in a snapshot built or
    /// edited by hand (its fields are public): a watermark or last fix that is not a time in
    /// the years 1-9999, a last fix after the watermark or off the globe, an empty device or
    /// fence id, a device, pair or fence record twice, an enter (or a pending exit) outside its
    /// visit, undetermined with stayed or exit-pending, unknown mask bits.
    /// - Throws: `FenceError` (`malformedInput`), the reason starting `context` and naming
    ///   the device and the value.
    /// - Complexity: O(devices + pairs + records), a set of ids for the repeats.
    public func check(context: String = "snapshot") throws(FenceError) {
        func fail(_ why: String) -> FenceError { FenceError(.malformedInput, reason: "\(context): \(why)") }
        // A file whose checksum holds can still carry values no engine writes (a bug
        // elsewhere, or a hand-made file): they would reach the output as `nan`.
        guard !watermark.isNaN && watermark != .infinity else { throw fail("watermark \(watermark) is not a time") }
        guard watermark == -.infinity || Position.usableTimes.contains(watermark) else {
            throw fail("watermark \(watermark) is outside the years 1-9999")
        }
        // `snapshot()` writes devices ascending by id bytes, each once: checked in passing,
        // and a snapshot in another order (hand-made) is checked for repeats at the end.
        var ascending = true
        for (k, device) in devices.enumerated() {
            let (id, t, lon, lat) = (device.id, device.lastTime, device.lastLon, device.lastLat)
            let which = "device \(k + 1) (\(id.debugDescription))"
            guard t.isFinite || t == -.infinity else { throw fail("\(which): last fix time \(t) is not a time") }
            // The times a fix may have (Position.isUsable): a last fix in the year 1e292
            // would make every later fix of the device late, silently.
            guard !t.isFinite || Position.usableTimes.contains(t) else {
                throw fail("\(which): last fix time \(t) is outside the years 1-9999")
            }
            // An engine's devices all have ids (an empty one is refused as a fix), and no
            // fix after the watermark, the latest time it applied.
            guard !id.isEmpty else { throw fail("\(which): the device id is empty") }
            guard !t.isFinite || t <= watermark else { throw fail("\(which): last fix time \(t) is after the watermark \(watermark)") }
            if k > 0, UTF8Order.compare(devices[k - 1].id, id) >= 0 { ascending = false }
            guard !t.isFinite || (lon.isFinite && lat.isFinite && abs(lon) <= 180 && abs(lat) <= 90) else {
                throw fail("\(which): last position (\(lon), \(lat)) is not a WGS84 position")
            }
            guard t.isFinite || device.pairs.isEmpty else { throw fail("\(which): \(device.pairs.count) pairs but no last fix") }
            var pairSet = Set<ExactID>()
            for (j, pair) in device.pairs.enumerated() {
                let (fence, enter, pending) = (pair.fence, pair.enterTime, pair.pendingSince)
                guard enter.isFinite && pending.isFinite else {
                    throw fail("\(which): fence \(fence.debugDescription) has enter time \(enter) and pending time \(pending); both must be finite")
                }
                // An enter is a fix's time: one in the year -1e292 gave `inside_s` 1e300.
                guard Position.usableTimes.contains(enter) else {
                    throw fail("\(which): fence \(fence.debugDescription) has enter time \(enter), outside the years 1-9999")
                }
                // An enter (or a pending exit) after the device's last fix never happened:
                // its exit would carry a negative `inside_s`.
                guard enter <= t && (!pair.exitPending || (pending >= enter && pending <= t)) else {
                    throw fail("\(which): fence \(fence.debugDescription) has enter time \(enter) and pending time \(pending), not within its visit up to the last fix at \(t)")
                }
                // A fence without an id is refused at load: no engine pairs one.
                guard !fence.isEmpty else { throw fail("\(which): a pair names a fence with an empty id") }
                // Undetermined is a status not yet known: never stayed or exit-pending.
                guard !pair.undetermined || !(pair.stayed || pair.exitPending) else {
                    let flags = (pair.stayed ? 1 : 0) | (pair.exitPending ? 2 : 0) | 4
                    throw fail("\(which): fence \(fence.debugDescription) has flags \(flags): undetermined with stayed or exit-pending")
                }
                // A device is inside a few fences; a crafted file with a million pairs on one
                // device is checked by a set instead (quadratic, it took hours).
                let twice: Bool
                if j < 16 {
                    twice = device.pairs[..<j].contains { ExactID.sameBytes($0.fence, fence) }
                    if j == 15 { pairSet = Set(device.pairs[...j].map { ExactID($0.fence) }) }
                } else {
                    twice = !pairSet.insert(ExactID(fence)).inserted
                }
                guard !twice else { throw fail("\(which): fence \(fence.debugDescription) is paired twice") }
            }
        }
        if !ascending {
            var seen = Set<ExactID>(minimumCapacity: devices.count)
            for (k, d) in devices.enumerated() where !seen.insert(ExactID(d.id)).inserted {
                throw fail("device \(k + 1) (\(d.id.debugDescription)) appears twice")
            }
        }
        let known = FenceActions.all.rawValue
        if let mask = engineActions?.rawValue, mask & ~known != 0 { throw fail("engine action mask \(mask) has unknown bits") }
        // One record a loaded fence, each with an id, as `snapshot()` writes them.
        var recorded = Set<ExactID>()
        for (k, record) in fences.enumerated() {
            guard record.actions == 0xFF || record.actions & ~known == 0 else {
                throw fail("fence \(record.id.debugDescription): action mask \(record.actions) has unknown bits")
            }
            guard !record.id.isEmpty else { throw fail("fence record \(k + 1) has an empty id") }
            guard recorded.insert(ExactID(record.id)).inserted else { throw fail("fence \(record.id.debugDescription) is recorded twice") }
        }
    }
}
