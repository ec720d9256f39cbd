import FenceEngine
import FenceIO
import FuzzDriver
import FuzzSupport
import Foundation

/// The fence path: a GeoJSON document through `GeoJSONFences.read` and into a `FenceStore`
/// (validation by the exact simplicity test and GEOS `isValid`, repair by GEOS MakeValid on a
/// second store). Every fence the store accepts must cover the point that defines it: a
/// circle its centre, a WGS84 polygon its first vertex (the boundary is inside). The reader on
/// three threads (the `features` array cut into parts however small) must give what it gives
/// on one: the same fences, origins and rejections, or the same error.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFences(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(bytes: data, count: size)
    func read(threads: Int) -> Result<FenceReadResult, FenceError> {
        var options = FenceInputOptions()
        options.threads = threads
        options.parallelMinimumBytes = 0
        do { return .success(try GeoJSONFences.read(bytes, layer: "fuzz", options: options)) } catch { return .failure(error) }
    }
    switch (read(threads: 1), read(threads: 3)) {
    case (.success(let one), .success(let three)):
        FuzzSupport.check(one.fences == three.fences && one.origins == three.origins && one.rejected == three.rejected, "three threads read otherwise than one")
    case (.failure(let one), .failure(let three)):
        FuzzSupport.check(one == three, "three threads refuse otherwise than one: \(one) / \(three)")
    case (let one, let three):
        FuzzSupport.check(false, "one thread: \(one), three: \(three)")
    }
    let report: GeoJSONFences.Report
    do {
        report = try GeoJSONFences.read(bytes)
    } catch {
        return 0
    }
    var store = FenceStore()
    let results = store.add(report.fences, threads: 1)
    FuzzSupport.check(results.count == report.fences.count, "one result per fence")
    for (fence, result) in zip(report.fences, results) where result.error == nil && fence.coord == .wgs84 {
        switch fence.shape {
        case .circle(let center, _):
            FuzzSupport.check(store.ids(covering: center).contains(fence.id), "circle \(fence.id) does not cover its centre")
        case .polygons(let parts):
            for part in parts {
                guard let first = part.exterior.first else { continue }
                FuzzSupport.check(store.ids(covering: first).contains(fence.id), "polygon \(fence.id) does not cover its first vertex \(first)")
            }
        }
    }
    _ = store.nearestBoundary(to: LonLat(lon: 0.5, lat: 0.5))
    var repaired = FenceStore()
    _ = repaired.add(report.fences, repair: true, threads: 1)
    _ = repaired.covering([LonLat(lon: 0.5, lat: 0.5), LonLat(lon: 180, lat: 0)], threads: 1)
    return 0
}

/// The program's entry (SwiftPM's name for `main`): libFuzzer's driver with the target above.
@_cdecl("FuzzFences_main")
public func fuzzFencesMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzFences(data ?? FuzzSupport.empty, size) }
}
