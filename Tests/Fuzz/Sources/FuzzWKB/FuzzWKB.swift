import FenceEngine
import FuzzDriver
import FuzzSupport
import Foundation

/// The WKB fence path without GDAL: the input bytes, as they are, through `WKBShapeReader`
/// (the header walk of `WKBLayout`, then GEOS's WKB reader) with the default limits and with
/// tight ones, then into a `FenceStore` (exact simplicity test, GEOS `isValid`) and a second one
/// with repair (GEOS MakeValid), and a few containment and nearest-boundary queries on each.
///
/// Checks besides "no crash, no ASan report":
/// - what the reader accepts is what an independent decoder (below, the OGC layout read
///   directly, strict about type codes) makes of the same bytes, coordinate for coordinate;
/// - the tight limits never accept more than the default ones, and give the same shape;
/// - every fence the store accepts covers the point that defines it (a circle its centre, a
///   polygon its first vertex), and a batch query agrees with the one-point query.
nonisolated(unsafe) let defaultReader = WKBShapeReader()
nonisolated(unsafe) let tightReader: WKBShapeReader = {
    var limits = FenceLimits()
    limits.maxPositions = 64
    limits.maxPolygons = 3
    return WKBShapeReader(limits: limits)
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWKB(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    // A Point needs a radius; derive one from the input so circles of many sizes are tried.
    let radius = size > 0 ? Double(data[size - 1]) * 40 + 1 : 1
    let expected = ReferenceWKB.decode(bytes)
    let shape: FenceShape
    do throws(FenceError) {
        shape = try defaultReader.shape(bytes, radius: radius)
    } catch {
        do throws(FenceError) {
            _ = try tightReader.shape(bytes, radius: radius)
            FuzzSupport.check(false, "the tight limits accept what the default ones refuse (\(error))")
        } catch {}
        return 0
    }
    guard let expected else {
        FuzzSupport.check(false, "the reader accepted bytes the reference decoder refuses: \(shape)")
        return 0
    }
    FuzzSupport.check(ReferenceWKB.same(shape, expected), "the reader's shape \(shape) differs from the bytes' \(expected)")
    if let tight = try? tightReader.shape(bytes, radius: radius) {
        FuzzSupport.check(ReferenceWKB.same(tight, shape), "the tight limits give another shape")
    }

    let fence = Fence(id: "wkb", shape: shape)
    var probes: [LonLat] = [LonLat(lon: 0, lat: 0), LonLat(lon: 180, lat: 0), LonLat(lon: 0.5, lat: 0.5)]
    switch shape {
    case .circle(let center, _):
        probes.append(center)
    case .polygons(let parts):
        for part in parts.prefix(4) {
            let ring = part.exterior
            probes.append(ring[0])
            probes.append(LonLat(lon: (ring[0].lon + ring[1].lon) / 2, lat: (ring[0].lat + ring[1].lat) / 2))
            let lons = ring.map(\.lon)
            let lats = ring.map(\.lat)
            if let a = lons.min(), let b = lons.max(), let c = lats.min(), let d = lats.max() {
                probes.append(LonLat(lon: (a + b) / 2, lat: (c + d) / 2))
            }
        }
    }
    for repair in [false, true] {
        var store = FenceStore()
        let result = store.add([fence], repair: repair, threads: 1)
        FuzzSupport.check(result.count == 1, "one result per fence")
        guard result[0].error == nil else { continue }
        if !repair {
            switch shape {
            case .circle(let center, _):
                FuzzSupport.check(store.ids(covering: center) == ["wkb"], "the circle does not cover its centre \(center)")
            case .polygons(let parts):
                for part in parts {
                    let first = part.exterior[0]
                    FuzzSupport.check(store.ids(covering: first) == ["wkb"], "the polygon does not cover its first vertex \(first)")
                }
            }
        }
        let batch = store.covering(probes, threads: 1)
        FuzzSupport.check(batch.count == probes.count, "one coverage row per probe")
        let handle = store.handle(id: "wkb")
        for (i, p) in probes.enumerated() {
            let one = store.ids(covering: p)
            FuzzSupport.check(one.count <= 1 && batch[i].count == one.count, "batch and single queries disagree at \(p)")
            if let handle {
                FuzzSupport.check(store.fence(handle, covers: p) == !one.isEmpty, "the index and the direct test disagree at \(p)")
            }
            _ = store.nearestBoundary(to: p)
        }
        _ = store.remove(id: "wkb")
    }
    return 0
}

/// The program's entry (SwiftPM's name for `main`): libFuzzer's driver with the target above.
@_cdecl("FuzzWKB_main")
public func fuzzWKBMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzWKB(data ?? FuzzSupport.empty, size) }
}
