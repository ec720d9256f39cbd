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
        /// `polygon`: a polygon record followed by a small grid (`SmallPolygonGrid`);
        /// `indexedPolygon`: a polygon record followed by an edge index and a cell grid.
        case free = 0, circle = 1, polygon = 2, indexedPolygon = 3
    }

    /// Polygons with more positions than this get an edge index.
    static let indexThreshold = 64

    /// The slab of a latitude: monotonic in `y` (subtraction and multiplication by a positive
    /// number round monotonically), so an edge filed under the slabs of its two ends is found
    /// from every latitude between them.
    @inline(__always)
    static func slab(_ y: Double, minY: Double, scale: Double, slabs: Int) -> Int {
        clampedIndex((y - minY) * scale, count: slabs)
    }

    /// `Int(v)` clamped to `0 ..< count`; NaN gives 0. Monotonic in `v`. The slab and cell
    /// grids all map a scaled coordinate to its cell with this.
    @inline(__always)
    static func clampedIndex(_ v: Double, count: Int) -> Int {
        guard v > 0 else { return 0 }  // also NaN
        return v >= Double(count - 1) ? count - 1 : Int(v)
    }

    /// Appends an edge index to a polygon record (see `RingLocator.locateIndexed`):
    /// `[slabs, minY, scale]`, then, as packed Int32, `slabs + 1` offsets and the edge list
    /// (each edge named by the position index of its first end; within a slab, easternmost
    /// east end first), padded to whole doubles.
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
        // Each slab's edges by their east end, easternmost first: the count of a ray to the
        // east stops at the first edge wholly west of the point (`locateIndexedBySlab`).
        for s in lists.indices where lists[s].count > 1 {
            lists[s].sort { a, b in
                let ea = max(record[c + 2 * Int(a)], record[c + 2 * Int(a) + 2])
                let eb = max(record[c + 2 * Int(b)], record[c + 2 * Int(b) + 2])
                return ea > eb || (ea == eb && a < b)
            }
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

    /// Cells per side of the grid `appendCellGrid` lays over a polygon of `n` positions:
    /// about one cell per position, 8 to 64 a side (64 to 4096 bytes).
    static func gridSide(positions n: Int) -> Int { max(8, min(64, Int(Double(n).squareRoot().rounded(.up)))) }

    /// Appends a grid of cells over the polygon's bounding box to a record that has an edge
    /// index (see `RingLocator.locateIndexed`): `[side, minX, minY, maxX, maxY, scaleX,
    /// scaleY]`, then one byte per cell, row by row, padded to whole doubles: 0 when every
    /// point that maps to the cell is exterior, 1 when every one is interior, 2 otherwise.
    ///
    /// A cell is pure only when no edge's bounding box comes within 1e-9 cell widths of the
    /// cell. Mapping a point to its cell is `slab` on each axis, whose error in these units is
    /// below 1e-13 for a grid of at most 64 cells a side, so the points that map to a pure
    /// cell lie in a rectangle no edge touches: one side of the boundary. Which side is the
    /// cell centre's, located exactly by the ray count (an uncertain answer leaves the cell
    /// mixed). Conservative: a mixed cell costs only the slab count that would run anyway.
    /// - Complexity: O(n + marked cells) to mark, then one slab count (O(e) for e edges in a
    ///   slab) per run of pure cells in a row.
    static func appendCellGrid(to record: inout [Double]) {
        let k = Int(record[0])
        let n = (0..<k).reduce(0) { $0 + Int(abs(record[1 + $1])) }
        let c = 1 + k
        var minX = Double.infinity
        var minY = Double.infinity
        var maxX = -Double.infinity
        var maxY = -Double.infinity
        for i in 0..<n {
            minX = min(minX, record[c + 2 * i])
            maxX = max(maxX, record[c + 2 * i])
            minY = min(minY, record[c + 2 * i + 1])
            maxY = max(maxY, record[c + 2 * i + 1])
        }
        let side = gridSide(positions: n)
        let scaleX = maxX > minX ? Double(side) / (maxX - minX) : 0
        let scaleY = maxY > minY ? Double(side) / (maxY - minY) : 0
        var cells = [UInt8](repeating: 0, count: side * side)
        if scaleX == 0 || scaleY == 0 {
            for i in cells.indices { cells[i] = 2 }
        } else {
            // Mark every cell an edge's box reaches, with the margin.
            @inline(__always) func cellRange(_ lo: Double, _ hi: Double, min: Double, scale: Double) -> ClosedRange<Int> {
                clampedIndex((lo - min) * scale - 1e-9, count: side)...clampedIndex((hi - min) * scale + 1e-9, count: side)
            }
            var start = 0
            for r in 0..<k {
                let len = Int(abs(record[1 + r]))
                for i in start..<(start + len - 1) {
                    let x1 = record[c + 2 * i]
                    let y1 = record[c + 2 * i + 1]
                    let x2 = record[c + 2 * i + 2]
                    let y2 = record[c + 2 * i + 3]
                    for cy in cellRange(Swift.min(y1, y2), Swift.max(y1, y2), min: minY, scale: scaleY) {
                        for cx in cellRange(Swift.min(x1, x2), Swift.max(x1, x2), min: minX, scale: scaleX) {
                            cells[cy * side + cx] = 2
                        }
                    }
                }
                start += len
            }
            // The rest take the location of a centre. Neighbours in a row share a side no edge
            // comes near, so a run of pure cells is one side of the boundary: one count a run.
            record.withUnsafeBufferPointer { r in
                for cy in 0..<side {
                    var cx = 0
                    while cx < side {
                        guard cells[cy * side + cx] == 0 else {
                            cx += 1
                            continue
                        }
                        var end = cx + 1
                        while end < side && cells[cy * side + end] == 0 { end += 1 }
                        let x = minX + (Double(cx) + 0.5) / scaleX
                        let y = minY + (Double(cy) + 0.5) / scaleY
                        let code: UInt8
                        switch RingLocator.locateIndexedBySlab(x: x, y: y, record: r.baseAddress!) {
                        case .interior: code = 1
                        case .exterior: code = 0
                        case .boundary, .uncertain: code = 2
                        }
                        for k in cx..<end { cells[cy * side + k] = code }
                        cx = end
                    }
                }
            }
        }
        record.append(contentsOf: [Double(side), minX, minY, maxX, maxY, scaleX, scaleY])
        while cells.count % 8 != 0 { cells.append(2) }
        cells.withUnsafeBytes { raw in
            for d in 0..<(raw.count / 8) { record.append(raw.load(fromByteOffset: 8 * d, as: Double.self)) }
        }
    }

    /// A polygon record from flat coordinates and per-ring (positions, isExterior), with room
    /// for `extra` more doubles.
    static func polygonRecord(coords: [Double], rings: [(count: Int, isExterior: Bool)], extra: Int = 0) -> [Double] {
        var record: [Double] = []
        record.reserveCapacity(1 + rings.count + coords.count + extra)
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
