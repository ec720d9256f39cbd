import FenceIO
import FuzzDriver
import FuzzSupport

// Testable for the internals it fuzzes; FenceEngine too, for CRC32 (package access).
@testable import FenceEngine
@testable import FenceNATS

/// What a fence worker decodes off the network, every decoder on every input: a fix batch
/// (`FixBatch.decode`), a fence change (`FenceChange(decoding:)`), a partition checkpoint
/// (`PartitionCheckpoint(decoding:)`, raw and with its header's version, length and CRC-32 made
/// right so mutations reach the payload) and a checkpoint head (`CheckpointStore.Head`).
/// Whatever decodes is used as the worker uses it: fixes go through a `PartitionStream`, a
/// change is applied at its stream position, a checkpoint is restored and fed fixes, and each
/// one's encoding must decode to the same encoding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzNATSMessages(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let raw = UnsafeRawBufferPointer(start: data, count: size)
    let bytes = [UInt8](raw)
    fixBatch(raw)
    fenceChange(raw)
    checkpoint(bytes)
    // The same bytes behind a made-right checkpoint header: magic, version, length, CRC-32.
    let header = PartitionCheckpoint.magic.count + 4 + 8 + 4
    if bytes.count >= header {
        var fixed = bytes
        let payload = bytes[header...]
        fixed.replaceSubrange(0..<PartitionCheckpoint.magic.count, with: PartitionCheckpoint.magic)
        put(&fixed, at: 9, UInt64(PartitionCheckpoint.formatVersion), bytes: 4)
        put(&fixed, at: 13, UInt64(payload.count), bytes: 8)
        put(&fixed, at: 21, UInt64(CRC32.checksum(payload)), bytes: 4)
        checkpoint(fixed)
    }
    head(bytes)
    return 0
}

/// The base fences of every stream here: the seed fences (a 1 km circle "port" at 0,0 in group
/// "harbor", a square "yard" east of it).
nonisolated(unsafe) let base: EventEngine = {
    var engine = EventEngine()
    _ = engine.add([
        .circle(id: "port", lon: 0, lat: 0, radius: 1000, group: "harbor"),
        .polygon(id: "yard", exterior: [
            LonLat(lon: 0.02, lat: 0), LonLat(lon: 0.04, lat: 0), LonLat(lon: 0.04, lat: 0.02), LonLat(lon: 0.02, lat: 0.02),
            LonLat(lon: 0.02, lat: 0),
        ]),
    ], threads: 1)
    return engine
}()

/// Fixes of two devices crossing the port and the yard, at sequence 1: state for a change to act on.
let warmup: [Position] = (0..<6).flatMap { k in
    ["a", "b"].map { Position(device: $0, time: Double(10 * k), lon: 0.006 * Double(k), lat: 0.001) }
}

func fixBatch(_ raw: UnsafeRawBufferPointer) {
    var fixes: [Position] = []
    guard let n = try? FixBatch.decode(raw, into: &fixes) else {
        FuzzSupport.check(fixes.isEmpty, "a refused fix batch left fixes behind")
        return
    }
    FuzzSupport.check(n == fixes.count, "decode returned \(n) for \(fixes.count) fixes")
    if let device = fixes.first?.device {
        FuzzSupport.check(fixes.allSatisfy { $0.device == device }, "a fix batch of several devices")
        let encoded = FixBatch.encode(device: device, fixes: fixes)
        var again: [Position] = []
        let decoded = encoded.withUnsafeBytes { try? FixBatch.decode($0, into: &again) }
        FuzzSupport.check(decoded == n, "a fix batch's own encoding does not decode")
        FuzzSupport.check(FixBatch.encode(device: device, fixes: again) == encoded, "fix batch round trip changed the bytes")
    }
    // As a partition takes it: a message after the warm-up, then the end of input.
    var stream = PartitionStream(engine: base, lateness: 30, step: 1)
    _ = stream.receive(warmup, sequence: 1)
    let before = stream.counters.received
    var events = stream.receive(fixes, sequence: 2)
    var errors: [String] = []
    events += stream.apply(FenceChange(.flush, previous: 0), sequence: 3, errors: &errors) ?? []
    FuzzSupport.check(stream.counters.received == before + fixes.count, "received count is off")
    FuzzSupport.check(stream.pendingCount == 0, "fixes still held after the flush")
    let c = stream.counters
    FuzzSupport.check(c.applied + c.late + c.rejected + c.duplicates == c.received, "fixes neither applied, late, rejected nor duplicate: \(c)")
    roundTrip(stream.checkpoint(partition: 0, fingerprint: 1, owner: "fuzz"))
}

func fenceChange(_ raw: UnsafeRawBufferPointer) {
    guard let change = try? FenceChange(decoding: raw) else { return }
    let encoded = change.encoded()
    let again = encoded.withUnsafeBytes { try? FenceChange(decoding: $0) }
    FuzzSupport.check(again == change, "a fence change's own encoding decodes to another change")
    // Applied as every partition applies it: after the warm-up, at the next stream position,
    // then the same change again (already applied: nothing), then a fix.
    var stream = PartitionStream(engine: base, lateness: 30, step: 1)
    _ = stream.receive(warmup, sequence: 1)
    var errors: [String] = []
    let events = stream.apply(change, sequence: 2, errors: &errors)
    FuzzSupport.check(events != nil, "a change after the last one was not applied")
    FuzzSupport.check(stream.apply(change, sequence: 2, errors: &errors) == nil, "a change applied twice")
    FuzzSupport.check(stream.pendingCount == 0, "held fixes not released before a change")
    _ = stream.receive([Position(device: "a", time: 1000, lon: 0, lat: 0)], sequence: 3)
    roundTrip(stream.checkpoint(partition: 1, fingerprint: 2, owner: "fuzz"))
}

func checkpoint(_ bytes: [UInt8]) {
    guard let cp = try? PartitionCheckpoint(decoding: bytes) else { return }
    roundTrip(cp)
    // Resumed as a worker resumes: restore, re-read from replayFrom, go on.
    var (stream, _) = try! PartitionStream.restored(from: cp, engine: base, lateness: 30, step: 1)
    FuzzSupport.check(stream.replayFrom == cp.replayFrom, "a restored stream replays from \(stream.replayFrom), not \(cp.replayFrom)")
    var sequence = cp.replayFrom
    for fix in warmup.prefix(4) {
        guard sequence < UInt64.max - 2 else { break }
        let base = cp.latestSeen.isFinite && abs(cp.latestSeen) < 1e12 ? cp.latestSeen : 0
        _ = stream.receive([Position(device: fix.device, time: base + fix.time, lon: fix.lon, lat: fix.lat)], sequence: sequence)
        sequence += 1
    }
    var errors: [String] = []
    if sequence < UInt64.max, sequence > cp.lastChangeSequence {
        _ = stream.apply(FenceChange(.remove(ids: ["port"]), previous: 0), sequence: sequence, errors: &errors)
    }
    if stream.isCaughtUp { roundTrip(stream.checkpoint(partition: cp.partition, fingerprint: cp.fingerprint, owner: cp.owner)) }
}

func head(_ bytes: [UInt8]) {
    guard let h = try? CheckpointStore.Head(decoding: bytes) else { return }
    FuzzSupport.check(h.chunks >= 1 && h.length <= UInt64(h.chunks) * UInt64(CheckpointStore.chunkSize), "a head whose chunks cannot hold it")
    let encoded = h.encoded()
    guard let again = try? CheckpointStore.Head(decoding: encoded) else {
        FuzzSupport.check(false, "a head's own encoding does not decode")
        return
    }
    FuzzSupport.check(again.encoded() == encoded, "head round trip changed the bytes")
}

/// A checkpoint's encoding decodes, and encodes to the same bytes again.
func roundTrip(_ cp: PartitionCheckpoint) {
    let encoded = cp.encoded()
    guard let again = try? PartitionCheckpoint(decoding: encoded) else {
        FuzzSupport.check(false, "a checkpoint's own encoding does not decode")
        return
    }
    FuzzSupport.check(again.encoded() == encoded, "checkpoint round trip changed the bytes")
}

func put(_ bytes: inout [UInt8], at offset: Int, _ value: UInt64, bytes count: Int) {
    for k in 0..<count { bytes[offset + k] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(k))) }
}

/// The program's entry (SwiftPM's name for `main`): libFuzzer's driver with the target above.
@_cdecl("FuzzNATSMessages_main")
public func fuzzNATSMessagesMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzNATSMessages(data ?? FuzzSupport.empty, size) }
}
