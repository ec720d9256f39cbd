import FenceEngine
import Foundation

/// Writes a scenario for the peer (`Benchmarks/peers/shapely_bench.py`) as NumPy `.npy` files:
/// `fences.npy` (N x (V+1) x 2 float64, closed rings), `positions.npy` (M x 2 float64) and
/// `pairs.npy` (K x 2 int64: position index, fence index), our containment result, which the
/// peer must reproduce before any time counts.
enum Export {
    static func write(fences: [Fence], positions: [LonLat], coverage: Coverage, store: FenceStore, to dir: String) throws {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        var rings: [Double] = []
        var vertices = -1
        for f in fences {
            guard case .polygons(let p) = f.shape, p.count == 1, p[0].holes.isEmpty else {
                throw ExportError("--export needs polygon-only scenarios (--circles 0)")
            }
            if vertices < 0 { vertices = p[0].exterior.count }
            guard p[0].exterior.count == vertices else { throw ExportError("fences differ in vertex count") }
            for q in p[0].exterior { rings += [q.lon, q.lat] }
        }
        try npy(doubles: rings, shape: [fences.count, vertices, 2], to: dir + "/fences.npy")
        try npy(doubles: positions.flatMap { [$0.lon, $0.lat] }, shape: [positions.count, 2], to: dir + "/positions.npy")
        var index: [String: Int] = [:]
        for (i, f) in fences.enumerated() { index[f.id] = i }
        var pairs: [Int64] = []
        for i in 0..<coverage.count {
            for h in coverage[i] { pairs += [Int64(i), Int64(index[store.id(of: h)]!)] }
        }
        try npy(int64s: pairs, shape: [pairs.count / 2, 2], to: dir + "/pairs.npy")
    }

    struct ExportError: Error, CustomStringConvertible {
        var description: String
        init(_ d: String) { description = d }
    }

    static func header(_ descr: String, _ shape: [Int]) -> Data {
        let dims = shape.count == 1 ? "(\(shape[0]),)" : "(" + shape.map(String.init).joined(separator: ", ") + ")"
        var dict = "{'descr': '\(descr)', 'fortran_order': False, 'shape': \(dims), }"
        let unpadded = 10 + dict.utf8.count + 1
        dict += String(repeating: " ", count: (64 - unpadded % 64) % 64) + "\n"
        var out = Data([0x93] + Array("NUMPY".utf8) + [1, 0])
        let n = UInt16(dict.utf8.count)
        out.append(contentsOf: [UInt8(n & 0xFF), UInt8(n >> 8)])
        out.append(contentsOf: Array(dict.utf8))
        return out
    }

    static func npy(doubles: [Double], shape: [Int], to path: String) throws {
        var data = header("<f8", shape)
        doubles.withUnsafeBytes { data.append(contentsOf: $0) }
        try data.write(to: URL(fileURLWithPath: path))
    }

    static func npy(int64s: [Int64], shape: [Int], to path: String) throws {
        var data = header("<i8", shape)
        int64s.withUnsafeBytes { data.append(contentsOf: $0) }
        try data.write(to: URL(fileURLWithPath: path))
    }
}
