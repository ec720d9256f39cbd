import FenceEngine
import FenceIO
import FuzzDriver
import FuzzSupport

/// The CSV position path: the input is a file as a user would pass it. Read three ways
/// (a 64 KiB line limit in large batches, the same in batches of one, a 48-byte line limit
/// so the long-line path runs); the first two must agree exactly. Then headerless, as
/// `--columns` reads it, in both batch sizes, with fields under other names, and with times in
/// two `--time-format` layouts. What it reads goes on through
/// the event engine, the event writers and a checkpoint round trip (`FuzzSupport.evaluate`).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPositionsCSV(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let whole = FuzzSupport.readPositions(bytes, format: .csv, maxLineBytes: 1 << 16, batch: 1 << 16)
    let single = FuzzSupport.readPositions(bytes, format: .csv, maxLineBytes: 1 << 16, batch: 1)
    FuzzSupport.check(whole == single, "batch size changed the result")
    FuzzSupport.evaluate(whole.positions)
    _ = FuzzSupport.readPositions(bytes, format: .csv, maxLineBytes: 48, batch: 7)
    // Headerless (`--columns`), and with a field under a name of its own (`--position-fields`):
    // the same checks, and batch size changes nothing either.
    let columns = ["device", "time", "lon", "lat", "accuracy"]
    let headerless = FuzzSupport.readPositions(bytes, format: nil, maxLineBytes: 1 << 16, batch: 1 << 16, columns: columns)
    let headerlessSingle = FuzzSupport.readPositions(bytes, format: nil, maxLineBytes: 1 << 16, batch: 1, columns: columns)
    FuzzSupport.check(headerless == headerlessSingle, "batch size changed the headerless result")
    _ = FuzzSupport.readPositions(bytes, format: .csv, maxLineBytes: 1 << 16, batch: 1 << 16, fields: [.device: "VendorID", .lon: "x"])
    // Times in strptime layouts (`--time-format`): US dates with names and zones, and one
    // with a fraction.
    for format in FuzzSupport.timeFormats { _ = FuzzSupport.readPositions(bytes, format: .csv, maxLineBytes: 1 << 16, batch: 1 << 16, timeFormat: format) }
    return 0
}

/// The program's entry (SwiftPM's name for `main`): libFuzzer's driver with the target above.
@_cdecl("FuzzPositionsCSV_main")
public func fuzzPositionsCSVMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzPositionsCSV(data ?? FuzzSupport.empty, size) }
}
