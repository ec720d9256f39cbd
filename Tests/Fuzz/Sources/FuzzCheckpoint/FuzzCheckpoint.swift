import FenceEngine
import FenceIO
import FuzzDriver
import FuzzSupport

/// The checkpoint reader: `TrackerSnapshot(decoding:)` on the raw bytes, and again with the
/// header's version, length and CRC-32 made right, so mutations of the payload get past the
/// checksum and reach the record parser. A snapshot that decodes must encode to bytes that
/// decode to the same encoding, and must restore into an engine that then evaluates fixes of
/// its devices.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCheckpoint(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let raw = Array(UnsafeBufferPointer(start: data, count: size))
    exercise(raw)
    let header = 10 + 4 + 8 + 4
    if raw.count >= header {
        var fixed = raw
        let payload = raw[header...]
        put(&fixed, at: 10, UInt64(1), bytes: 4)
        put(&fixed, at: 14, UInt64(payload.count), bytes: 8)
        put(&fixed, at: 22, UInt64(crc32(payload)), bytes: 4)
        exercise(fixed)
    }
    return 0
}

func exercise(_ bytes: [UInt8]) {
    guard let snapshot = try? TrackerSnapshot(decoding: bytes) else { return }
    let encoded = snapshot.encoded()
    guard let again = try? TrackerSnapshot(decoding: encoded) else {
        FuzzSupport.check(false, "a snapshot's own encoding does not decode")
        return
    }
    FuzzSupport.check(again.encoded() == encoded, "encode(decode(encode(s))) differs from encode(s)")
    var engine = EventEngine()
    _ = engine.add([
        // The fences of the seed checkpoints (Tests/Fuzz/corpus/fences/circles-polygons.geojson).
        .circle(id: "port", lon: 0, lat: 0, radius: 1000),
        .polygon(id: "yard", exterior: [
            LonLat(lon: 0.02, lat: 0), LonLat(lon: 0.04, lat: 0), LonLat(lon: 0.04, lat: 0.02), LonLat(lon: 0.02, lat: 0.02),
            LonLat(lon: 0.02, lat: 0),
        ]),
    ], threads: 1)
    try! engine.restore(snapshot)  // decoded: it passed the same check
    var fixes: [Position] = []
    for d in snapshot.devices.prefix(8) {
        for (k, t) in [0.0, 1, 700, 2000].enumerated() {
            let base = d.lastTime.isFinite ? d.lastTime : 0
            fixes.append(Position(device: d.id, time: base + t, lon: 0.03 * Double(k % 2), lat: 0.5 * Double(k / 3)))
        }
    }
    _ = engine.evaluate(fixes, threads: 1)
    _ = engine.snapshot().encoded()
    _ = engine.remove(id: "port")
}

func put(_ bytes: inout [UInt8], at offset: Int, _ value: UInt64, bytes count: Int) {
    for k in 0..<count { bytes[offset + k] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(k))) }
}

/// CRC-32 (IEEE, as zlib computes it), as the state file's header carries it.
func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
    var c: UInt32 = 0xFFFF_FFFF
    for b in bytes {
        c ^= UInt32(b)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
    }
    return c ^ 0xFFFF_FFFF
}

/// The program's entry (SwiftPM's name for `main`): libFuzzer's driver with the target above.
@_cdecl("FuzzCheckpoint_main")
public func fuzzCheckpointMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzCheckpoint(data ?? FuzzSupport.empty, size) }
}
