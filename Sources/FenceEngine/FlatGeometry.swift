/// How a fence's geometry is laid out in the store's one array of doubles.
///
/// A fence's record is contiguous, so testing a candidate touches one slot word and one run of
/// memory (after the index, the first cache miss is the last one for a 16-vertex polygon).
///
/// - Circle (`CircleGeometry.stride` doubles): lon, lat, radius, unit-vector x, y, z, inner and
///   outer squared chord thresholds.
/// - Polygon: `[ringCount, ±positions of ring 1, ..., ±positions of ring k, x0, y0, x1, y1, ...]`;
///   a positive count marks an exterior ring (it starts a new polygon), a negative one a hole of
///   the polygon before it. Rings are closed, so the last position repeats the first.
enum FlatGeometry {
    enum Kind: Int {
        /// `indexedPolygon`: a polygon record followed by an edge index.
        case free = 0, circle = 1, polygon = 2, indexedPolygon = 3
    }

    /// Polygons with more positions than this get an edge index.
    static let indexThreshold = 64

    /// The slab of a latitude: monotonic in `y` (subtraction and multiplication by a positive
    /// number round monotonically), so an edge filed under the slabs of its two ends is found
    /// from every latitude between them.
    @inline(__always)
    static func slab(_ y: Double, minY: Double, scale: Double, slabs: Int) -> Int {
        let v = (y - minY) * scale
        guard v > 0 else { return 0 }  // also NaN
        return v >= Double(slabs - 1) ? slabs - 1 : Int(v)
    }

    /// Appends an edge index to a polygon record (see `RingLocator.locateIndexed`):
    /// `[slabs, minY, scale]`, then, as packed Int32, `slabs + 1` offsets and the edge list
    /// (each edge named by the position index of its first end), padded to whole doubles.
    ///
    /// An edge is filed under every slab its latitude range reaches, so a zig-zag boundary
    /// (edges spanning much of the height) would be filed many times over. The slab count is
    /// therefore one per two edges, but at most 3n·H/D for total vertical travel D over height
    /// H, which bounds the entries by about 4n (16 bytes per position); at most 4096.
    /// - Complexity: O(n + entries), entries <= about 4n.
    static func appendEdgeIndex(to record: inout [Double]) {
        let k = Int(record[0])
        let n = (0..<k).reduce(0) { $0 + Int(abs(record[1 + $1])) }
        let c = 1 + k
        var minY = Double.infinity
        var maxY = -Double.infinity
        for i in 0..<n {
            minY = min(minY, record[c + 2 * i + 1])
            maxY = max(maxY, record[c + 2 * i + 1])
        }
        var travel = 0.0
        var at = 0
        for r in 0..<k {
            let len = Int(abs(record[1 + r]))
            for i in at..<(at + len - 1) { travel += abs(record[c + 2 * i + 3] - record[c + 2 * i + 1]) }
            at += len
        }
        let height = maxY - minY
        let bound = travel > 0 ? 3 * Double(n) * height / travel : Double(n)
        let slabs = max(1, min(4096, n / 2, Int(bound.rounded(.down))))
        let scale = maxY > minY ? Double(slabs) / (maxY - minY) : 0
        var lists = [[Int32]](repeating: [], count: slabs)
        var start = 0
        for r in 0..<k {
            let len = Int(abs(record[1 + r]))
            for i in start..<(start + len - 1) {
                let y1 = record[c + 2 * i + 1]
                let y2 = record[c + 2 * i + 3]
                let lo = slab(min(y1, y2), minY: minY, scale: scale, slabs: slabs)
                let hi = slab(max(y1, y2), minY: minY, scale: scale, slabs: slabs)
                for s in lo...hi { lists[s].append(Int32(i)) }
            }
            start += len
        }
        var ints: [Int32] = [0]
        for l in lists { ints.append(ints[ints.count - 1] + Int32(l.count)) }
        for l in lists { ints.append(contentsOf: l) }
        if ints.count % 2 == 1 { ints.append(0) }
        record.append(Double(slabs))
        record.append(minY)
        record.append(scale)
        ints.withUnsafeBytes { raw in
            for d in 0..<(raw.count / 8) { record.append(raw.load(fromByteOffset: 8 * d, as: Double.self)) }
        }
    }

    /// A polygon record from flat coordinates and per-ring (positions, isExterior).
    static func polygonRecord(coords: [Double], rings: [(count: Int, isExterior: Bool)]) -> [Double] {
        var record: [Double] = []
        record.reserveCapacity(1 + rings.count + coords.count)
        record.append(Double(rings.count))
        for r in rings { record.append(Double(r.isExterior ? r.count : -r.count)) }
        record.append(contentsOf: coords)
        return record
    }

    /// The rings of a polygon record, as (positions, isExterior), and the offset of its first
    /// coordinate within the record.
    static func rings(of record: UnsafePointer<Double>) -> (rings: [(count: Int, isExterior: Bool)], coordinates: Int) {
        let k = Int(record[0])
        let rings = (0..<k).map { i -> (count: Int, isExterior: Bool) in
            let v = record[1 + i]
            return (Int(abs(v)), v > 0)
        }
        return (rings, 1 + k)
    }

    /// The polygons of a record, as values.
    static func polygons(of record: UnsafePointer<Double>) -> [Polygon] {
        let (rings, start) = rings(of: record)
        var polygons: [Polygon] = []
        var offset = start
        for r in rings {
            let ring = (0..<r.count).map { LonLat(lon: record[offset + 2 * $0], lat: record[offset + 2 * $0 + 1]) }
            if r.isExterior || polygons.isEmpty {
                polygons.append(Polygon(exterior: ring))
            } else {
                polygons[polygons.count - 1].holes.append(ring)
            }
            offset += 2 * r.count
        }
        return polygons
    }
}
