import FenceEngine
import FenceIO
import FuzzDriver
import FuzzSupport

/// The NDJSON position path: the input is a file as a user would pass it. Read three ways
/// (a 64 KiB line limit in large batches, the same in batches of one, a 48-byte line limit
/// so the long-line path runs); the first two must agree exactly. What it reads goes on through
/// the event engine, the event writers and a checkpoint round trip (`FuzzSupport.evaluate`). A
/// fourth read sniffs the format from the first line; two more read times in `--time-format`
/// layouts.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPositionsNDJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let whole = FuzzSupport.readPositions(bytes, format: .ndjson, maxLineBytes: 1 << 16, batch: 1 << 16)
    let single = FuzzSupport.readPositions(bytes, format: .ndjson, maxLineBytes: 1 << 16, batch: 1)
    FuzzSupport.check(whole == single, "batch size changed the result")
    FuzzSupport.evaluate(whole.positions)
    _ = FuzzSupport.readPositions(bytes, format: .ndjson, maxLineBytes: 48, batch: 7)
    _ = FuzzSupport.readPositions(bytes, format: nil, maxLineBytes: 1 << 16, batch: 1 << 16)
    // Times in strptime layouts (`--time-format`), as strings and as numbers' text.
    for format in FuzzSupport.timeFormats {
        _ = FuzzSupport.readPositions(bytes, format: .ndjson, maxLineBytes: 1 << 16, batch: 1 << 16, timeFormat: format)
    }
    return 0
}

/// The program's entry (SwiftPM's name for `main`): libFuzzer's driver with the target above.
@_cdecl("FuzzPositionsNDJSON_main")
public func fuzzPositionsNDJSONMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzPositionsNDJSON(data ?? FuzzSupport.empty, size) }
}
