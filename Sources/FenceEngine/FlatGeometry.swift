import Synchronization

/// How a fence's geometry is laid out in the store's one array of doubles.
///
/// A fence's record is contiguous, so testing a candidate touches one slot word and one run of
/// memory (after the index, the first cache miss is the last one for a 16-vertex polygon).
///
/// - Circle (`CircleGeometry.stride` doubles): lon, lat, radius, unit-vector x, y, z, inner and
///   outer squared chord thresholds.
/// - Polygon: `[ringCount, ±end of ring 1, ..., ±end of ring k, x0, y0, x1, y1, ...]`, where
///   the end of ring r is the running sum of the positions of rings 1 ... r (ring r holds
///   positions `end(r - 1) ..< end(r)`, end(0) = 0); a positive end marks an exterior ring (it
///   starts a new polygon), a negative one a hole of the polygon before it. Rings are closed, so
///   the last position repeats the first. Running sums, not lengths, so that where the
///   coordinates end (`coordinatesEnd`) and which ring holds a position (`EdgeTree.RingEnds`)
///   are read, not summed: summed from lengths on every test, they made a polygon of 50,000
///   holes cost 55 µs a containment test (an audit). The ends are read through `ringEnd` (or
///   `ringPositions`, `positionCount`), never raw; `FenceStore.shapeDigest` still hashes lengths.
enum FlatGeometry {
    enum Kind: Int {
        /// `polygon`: a polygon record followed by a small grid (`SmallPolygonGrid`);
        /// `indexedPolygon`: a polygon record followed by a cell grid and an edge index.
        case free = 0, circle = 1, polygon = 2, indexedPolygon = 3
    }

    /// Polygons with more positions than this get an edge index.
    static let indexThreshold = 64

    /// Where what follows a polygon record's coordinates starts, in doubles from the record's
    /// start: a `.polygon` record's small grid (`SmallPolygonGrid`), an `.indexedPolygon`
    /// record's cell grid (`insertCellGrid`).
    /// - Complexity: O(1): the ring count and the last ring's end.
    @inline(__always)
    static func coordinatesEnd(of record: UnsafePointer<Double>) -> Int {
        1 + Int(record[0]) + 2 * positionCount(of: record)
    }

    /// The number of rings of a polygon record.
    @inline(__always)
    static func ringCount(of record: UnsafePointer<Double>) -> Int { Int(record[0]) }

    /// Where ring `r` (from 0) of a polygon record ends: one past its last position, counted
    /// in positions from the record's first (the header's running sum, unsigned). Every read
    /// of the ring header goes through here; debug builds count them (`headerReads`).
    /// - Complexity: O(1).
    @inline(__always)
    static func ringEnd(_ r: Int, of record: UnsafePointer<Double>) -> Int {
        #if FENCE_INTERNAL_CHECKS
            headerReads.add(1, ordering: .relaxed)
        #endif
        return Int(abs(record[1 &+ r]))
    }

    /// The positions of ring `r` of a polygon record, counted from the record's first.
    /// - Complexity: O(1).
    @inline(__always)
    static func ringPositions(_ r: Int, of record: UnsafePointer<Double>) -> Range<Int> {
        (r == 0 ? 0 : ringEnd(r &- 1, of: record))..<ringEnd(r, of: record)
    }

    /// Whether ring `r` of a polygon record is an exterior ring (it starts a polygon).
    @inline(__always)
    static func isExterior(_ r: Int, of record: UnsafePointer<Double>) -> Bool { record[1 &+ r] > 0 }

    /// The positions of all rings of a polygon record: the last ring's end.
    /// - Complexity: O(1).
    @inline(__always)
    static func positionCount(of record: UnsafePointer<Double>) -> Int {
        let k = Int(record[0])
        return k > 0 ? ringEnd(k &- 1, of: record) : 0
    }

    /// The positions of every ring of a polygon record, in order: for the builders, which
    /// visit every ring anyway.
    /// - Complexity: O(rings).
    static func ringRanges(of record: [Double]) -> [Range<Int>] {
        record.withUnsafeBufferPointer { r in (0..<ringCount(of: r.baseAddress!)).map { ringPositions($0, of: r.baseAddress!) } }
    }

    /// `positionCount` of a record being built.
    static func positionCount(of record: [Double]) -> Int { record.withUnsafeBufferPointer { positionCount(of: $0.baseAddress!) } }

    #if FENCE_INTERNAL_CHECKS
        /// Reads of ring ends (`ringEnd`) so far, on every thread: tests hold what a
        /// containment or distance test reads of the header to a bound that does not grow with
        /// the rings (debug builds only).
        static let headerReads = Atomic<Int>(0)
    #endif

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

    /// Appends an edge index to a polygon record (see `RingLocator.locateIndexedBySlab`; the
    /// cell grid goes in before it, `insertCellGrid`):
    /// `[slabs, minY, scale]`, then, as packed Int32, `slabs + 1` offsets and the edge list
    /// (each edge named by the position index of its first end; within a slab, easternmost
    /// east end first, then by edge), padded to whole doubles.
    ///
    /// An edge is filed under every slab its latitude range reaches, so a zig-zag boundary
    /// (edges spanning much of the height) would be filed many times over. The slab count is
    /// therefore one per two edges, but at most 3n·H/D for total vertical travel D over height
    /// H, which bounds the entries by about 4n (16 bytes per position); at most 4096.
    ///
    /// Built in place: the slabs' entries are counted, then written straight into the index
    /// (a counting sort, so each slab's edges arrive ascending), then each slab is ordered by
    /// east end, by insertion for the usual handful of edges. A list per slab, the obvious way,
    /// made one allocation per slab: over a third of a 1,000-vertex ring's build (callgrind).
    /// - Complexity: O(n + entries) plus the slabs' sorts, entries <= about 4n.
    static func appendEdgeIndex(to record: inout [Double]) {
        let k = Int(record[0])
        let c = 1 + k
        let header = record.count
        // Every edge's index (its first position), ring by ring: a ring's last position
        // closes it and starts no edge.
        let rings = ringRanges(of: record)
        func forEachEdge(_ body: (Int) -> Void) {
            for ring in rings {
                for i in ring.lowerBound..<(ring.upperBound - 1) { body(i) }
            }
        }
        let n = rings.last?.upperBound ?? 0
        var slabs = 1
        var minY = Double.infinity
        var scale = 0.0
        // The slabs of each edge's two ends, and each slab's count of edges (at s + 1: the
        // offsets are their running sums).
        var lowSlab = [Int32](repeating: 0, count: n)
        var highSlab = [Int32](repeating: 0, count: n)
        var counts: [Int32] = []
        record.withUnsafeBufferPointer { r in
            let coords = r.baseAddress! + c
            var maxY = -Double.infinity
            for i in 0..<n {
                minY = min(minY, coords[2 * i + 1])
                maxY = max(maxY, coords[2 * i + 1])
            }
            var travel = 0.0
            forEachEdge { i in travel += abs(coords[2 * i + 3] - coords[2 * i + 1]) }
            let height = maxY - minY
            let bound = travel > 0 ? 3 * Double(n) * height / travel : Double(n)
            slabs = max(1, min(4096, n / 2, Int(bound.rounded(.down))))
            scale = maxY > minY ? Double(slabs) / (maxY - minY) : 0
            counts = [Int32](repeating: 0, count: slabs + 1)
            forEachEdge { i in
                let y1 = coords[2 * i + 1]
                let y2 = coords[2 * i + 3]
                let lo = slab(min(y1, y2), minY: minY, scale: scale, slabs: slabs)
                let hi = slab(max(y1, y2), minY: minY, scale: scale, slabs: slabs)
                lowSlab[i] = Int32(lo)
                highSlab[i] = Int32(hi)
                for s in lo...hi { counts[s + 1] += 1 }
            }
        }
        for s in 0..<slabs { counts[s + 1] += counts[s] }
        // Offsets and entries as Int32, padded to an even count, in whole doubles.
        let ints = slabs + 1 + Int(counts[slabs])
        let doubles = (ints + 1) / 2
        record.append(Double(slabs))
        record.append(minY)
        record.append(scale)
        record.append(contentsOf: repeatElement(0, count: doubles))
        record.withUnsafeMutableBufferPointer { r in
            let coords = UnsafePointer(r.baseAddress! + c)
            // The Int32s are written and read as raw bytes: the memory stays bound to Double.
            let raw = UnsafeMutableRawPointer(r.baseAddress! + header + 3)
            for s in 0...slabs { raw.storeBytes(of: counts[s], toByteOffset: 4 * s, as: Int32.self) }
            let list = raw + 4 * (slabs + 1)
            @inline(__always) func entry(_ p: Int) -> Int32 { list.load(fromByteOffset: 4 * p, as: Int32.self) }
            @inline(__always) func setEntry(_ p: Int, _ e: Int32) { list.storeBytes(of: e, toByteOffset: 4 * p, as: Int32.self) }
            // Each slab's run filled from its start, so every slab's edges arrive ascending.
            var fill = counts
            forEachEdge { i in
                for s in Int(lowSlab[i])...Int(highSlab[i]) {
                    setEntry(Int(fill[s]), Int32(i))
                    fill[s] += 1
                }
            }
            // Each slab's edges by their east end, easternmost first, ties by edge: the count of
            // a ray to the east stops at the first edge wholly west of the point
            // (`locateIndexedBySlab`). Each edge's east end is taken once, in edge order.
            var eastEnd = [Double](repeating: 0, count: n)
            for i in 0..<(n - 1) { eastEnd[i] = max(coords[2 * i], coords[2 * i + 2]) }
            @inline(__always) func before(_ a: Int32, _ b: Int32) -> Bool {
                let ea = eastEnd[Int(a)]
                let eb = eastEnd[Int(b)]
                return ea > eb || (ea == eb && a < b)
            }
            var keys: [(Double, Int32)] = []
            for s in 0..<slabs {
                let lo = Int(counts[s])
                let hi = Int(counts[s + 1])
                if hi - lo <= 1 { continue }
                if hi - lo <= 16 {
                    for p in (lo + 1)..<hi {
                        let e = entry(p)
                        var q = p
                        while q > lo && before(e, entry(q - 1)) {
                            setEntry(q, entry(q - 1))
                            q -= 1
                        }
                        setEntry(q, e)
                    }
                } else {
                    // (east end, edge) keys: the sort compares them without reaching back.
                    keys.removeAll(keepingCapacity: true)
                    for p in lo..<hi { keys.append((eastEnd[Int(entry(p))], entry(p))) }
                    keys.sort { a, b in a.0 > b.0 || (a.0 == b.0 && a.1 < b.1) }
                    for (q, key) in keys.enumerated() { setEntry(lo + q, key.1) }
                }
            }
        }
    }

    /// Cells per side of the grid `insertCellGrid` lays over a polygon of `n` positions:
    /// about one cell per position, 8 to 64 a side.
    static func gridSide(positions n: Int) -> Int { max(8, min(64, Int(Double(n).squareRoot().rounded(.up)))) }

    /// How far (in cells) every edge is from a pure cell, and how far past a cell an edge may
    /// pass and still be filed under it. Mapping a point or vertex of the box to scaled
    /// coordinates errs by below 1e-13 cells (64 cells a side), and the filing arithmetic by
    /// below 1e-11: the margin covers both with room.
    static let cellMargin = 1e-9

    /// Boxes narrower than this (degrees) get an all-mixed grid without edge lists: their
    /// scale could overflow.
    static let minimumCellExtent = 1e-280

    /// At most this many list entries in a grid: a cell word holds `start << 3`.
    static let maxCellEntries = 1 << 28

    /// Doubles before the cell words: `[side, minX, minY, maxX, maxY, scaleX, scaleY, widthX,
    /// widthY, wide, doubles]`.
    static let cellHeaderCount = 11

    /// The codes of the cell words (low 3 bits; see `insertCellGrid`).
    enum CellCode {
        static let exterior: UInt32 = 0
        static let interior: UInt32 = 1
        /// Mixed, the cell's reference point exterior / interior: count crossings from it.
        static let mixedFromExterior: UInt32 = 2
        static let mixedFromInterior: UInt32 = 3
        /// Mixed without a reference point: count the slab.
        static let mixed: UInt32 = 4
    }

    /// The reference point of cell `c` on one axis: its centre, computed by this one formula at
    /// build and at query so it is the same double. `width` is the stored `1 / scale`.
    @inline(__always)
    static func cellCentre(_ c: Int, min: Double, width: Double) -> Double { min + (Double(c) + 0.5) * width }

    /// Puts a grid of cells over the polygon's bounding box into a record that ends with an
    /// edge index (`appendEdgeIndex`, which locates the cells at build), between the
    /// coordinates and the edge index (see `RingLocator.locateIndexed`): right after the
    /// coordinates, a query finds it from the ring count and the last ring's end (the record's
    /// first line for up to 7 rings), without reading the edge index's header and offsets (two
    /// dependent cache misses at scale).
    ///
    /// Layout: the header `[side, minX, minY, maxX, maxY, scaleX, scaleY, widthX, widthY,
    /// wide, doubles]` (width = 1 / scale; `wide` 1 when edge numbers are UInt32, 0 when
    /// UInt16; `doubles` the grid's length, header included), then `side² + 1` UInt32 cell
    /// words, row by row, and the cells' edge lists, padded to whole doubles. A point maps to
    /// cell `(slab(x), slab(y))` on the scaled coordinates `(x - minX) · scaleX`,
    /// `(y - minY) · scaleY`.
    ///
    /// A cell word is `start << 3 | code`; the cell's edges are list entries `start ..<` the
    /// next word's start (the last word only ends the list). Codes: 0 every point that maps to
    /// the cell is exterior, 1 every one is interior (no edges listed); 2 or 3 mixed, with the
    /// cell's edges listed and its centre (`cellCentre`) exterior or interior; 4 mixed
    /// without a reference (boundary or uncertain centre, a centre that maps to another cell,
    /// or no edge lists at all): count the slab. An edge is named by the position index of
    /// its first end, ascending within a cell, so a ring's run of edges shares cache lines.
    ///
    /// Exactness: every edge that comes within `cellMargin` of a cell is filed under it
    /// (`forEachCell`). The points that map to a cell lie within 1e-13 cells of it, so an
    /// edge that touches the segment from the centre to such a point is in the cell's list,
    /// and a cell with no edges is pure: all its points are on its centre's side. Every centre
    /// is located exactly (`centreLocations`; a boundary or uncertain one leaves its cell
    /// code 4), and must map to its own cell.
    ///
    /// Memory: 4 bytes a cell, and 2 (UInt16, under 65 536 positions) or 4 bytes an entry;
    /// an edge is filed in about `|dx| + |dy| + 1` cells. Lists of over `8n + side²` entries in
    /// all (edges that cross much of the box) are dropped: every mixed cell is then code 4.
    /// - Complexity: O(n + entries + side²), and a slab count (O(e) for e edges in a slab)
    ///   per row and per centre the crossing count from its neighbour leaves undecided.
    static func insertCellGrid(into record: inout [Double]) {
        let k = Int(record[0])
        let n = positionCount(of: record)
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
        let cellCount = side * side
        var scaleX = maxX - minX >= minimumCellExtent ? Double(side) / (maxX - minX) : 0
        var scaleY = maxY - minY >= minimumCellExtent ? Double(side) / (maxY - minY) : 0
        if !scaleX.isFinite || !scaleY.isFinite || scaleX == 0 || scaleY == 0 { (scaleX, scaleY) = (0, 0) }
        let widthX = scaleX > 0 ? 1 / scaleX : 0
        let widthY = scaleY > 0 ? 1 / scaleY : 0
        var codes = [UInt32](repeating: CellCode.mixed, count: cellCount)
        var start = [UInt32](repeating: 0, count: cellCount + 1)
        var entries: [UInt32] = []
        if scaleX > 0 {
            (start, entries) = fileEdges(record, side: side, minX: minX, minY: minY, scaleX: scaleX, scaleY: scaleY)
            let centres = centreLocations(
                record: record, index: c + 2 * n, start: start, entries: entries, side: side, minX: minX, minY: minY, scaleX: scaleX,
                scaleY: scaleY, widthX: widthX, widthY: widthY)
            // Edges that cross much of the box: no lists, mixed cells count the slab.
            let keepLists = entries.count <= min(8 * n + cellCount, maxCellEntries)
            for cell in 0..<cellCount {
                let pure = start[cell + 1] == start[cell]
                switch centres[cell] {
                case .interior: codes[cell] = pure ? CellCode.interior : (keepLists ? CellCode.mixedFromInterior : CellCode.mixed)
                case .exterior: codes[cell] = pure ? CellCode.exterior : (keepLists ? CellCode.mixedFromExterior : CellCode.mixed)
                case .boundary, .uncertain: codes[cell] = CellCode.mixed
                }
            }
            // Keep only the lists of cells with a reference.
            var kept: [UInt32] = []
            var keptStart = [UInt32](repeating: 0, count: cellCount + 1)
            for cell in 0..<cellCount {
                if codes[cell] == CellCode.mixedFromExterior || codes[cell] == CellCode.mixedFromInterior {
                    kept.append(contentsOf: entries[Int(start[cell])..<Int(start[cell + 1])])
                }
                keptStart[cell + 1] = UInt32(kept.count)
            }
            (start, entries) = (keptStart, kept)
        }
        let wide = n > Int(UInt16.max)
        var words = (0..<cellCount).map { start[$0] << 3 | codes[$0] }
        words.append(start[cellCount] << 3)
        var bytes: [UInt8] = []
        words.withUnsafeBytes { bytes.append(contentsOf: $0) }
        if wide {
            entries.withUnsafeBytes { bytes.append(contentsOf: $0) }
        } else {
            entries.map { UInt16($0) }.withUnsafeBytes { bytes.append(contentsOf: $0) }
        }
        while bytes.count % 8 != 0 { bytes.append(0) }
        var grid = [Double(side), minX, minY, maxX, maxY, scaleX, scaleY, widthX, widthY, wide ? 1 : 0, 0]
        grid[cellHeaderCount - 1] = Double(cellHeaderCount + bytes.count / 8)
        bytes.withUnsafeBytes { raw in
            for d in 0..<(raw.count / 8) { grid.append(raw.load(fromByteOffset: 8 * d, as: Double.self)) }
        }
        record.insert(contentsOf: grid, at: c + 2 * n)
    }

    /// Files every edge of a polygon record under the cells it comes within `cellMargin` of
    /// (`forEachCell`), as a compressed list: cell `i`'s edges are `entries[start[i] ..<
    /// start[i + 1]]`, ascending (edges are filed in order).
    /// - Complexity: O(n + side² + entries).
    static func fileEdges(_ record: [Double], side: Int, minX: Double, minY: Double, scaleX: Double, scaleY: Double)
        -> (start: [UInt32], entries: [UInt32])
    {
        let k = Int(record[0])
        let c = 1 + k
        // (cell, edge) pairs in edge order, then a counting sort by cell, which keeps each
        // cell's edges ascending.
        var cells: [UInt32] = []
        var edges: [UInt32] = []
        cells.reserveCapacity(8 * record.count / 2)
        edges.reserveCapacity(8 * record.count / 2)
        record.withUnsafeBufferPointer { r in
            for ring in 0..<k {
                let positions = ringPositions(ring, of: r.baseAddress!)
                for i in positions.lowerBound..<(positions.upperBound - 1) {
                    let ux1 = (r[c + 2 * i] - minX) * scaleX
                    let uy1 = (r[c + 2 * i + 1] - minY) * scaleY
                    let ux2 = (r[c + 2 * i + 2] - minX) * scaleX
                    let uy2 = (r[c + 2 * i + 3] - minY) * scaleY
                    forEachCell(ux1, uy1, ux2, uy2, side: side) { cell in
                        cells.append(UInt32(cell))
                        edges.append(UInt32(i))
                    }
                }
            }
        }
        var start = [UInt32](repeating: 0, count: side * side + 1)
        var entries = [UInt32](repeating: 0, count: cells.count)
        start.withUnsafeMutableBufferPointer { start in
            for cell in cells { start[Int(cell) + 1] += 1 }
            for cell in 0..<(side * side) { start[cell + 1] += start[cell] }
            var fill = Array(start[0..<(side * side)])
            entries.withUnsafeMutableBufferPointer { entries in
                fill.withUnsafeMutableBufferPointer { fill in
                    for (cell, edge) in zip(cells, edges) {
                        entries[Int(fill[Int(cell)])] = edge
                        fill[Int(cell)] += 1
                    }
                }
            }
        }
        return (start, entries)
    }

    /// Calls `body` with every cell (row-major index) that the segment between scaled points
    /// (ux1, uy1) and (ux2, uy2) comes within `cellMargin` of, and maybe a few more; each
    /// once (a row's cells are one range).
    ///
    /// Row by row (rows the y-range reaches, widened by the margin), the x-range of the
    /// segment's part within the row's band widened by the margin, by interpolation at the
    /// band's ends. Rounding: the scaled ends err by below 1e-13 cells from the exact images
    /// of the vertices (the map is affine, so the exact edge maps to the exact segment; a
    /// point of it maps within 1e-13 cells of the point at the same parameter on the computed
    /// segment), and when the segment spans at least one row the slope |dx / dy| is at most
    /// `side`, so the interpolated x errs by below 1e-11: the margin covers both. A segment
    /// spanning less than a row (nearly horizontal: no division by a tiny or zero dy) takes
    /// its whole x-range on each of the at most three rows it reaches.
    /// - Complexity: O(rows + cells) of the segment, about `|dx| + |dy| + 1` cells.
    @inline(__always)
    static func forEachCell(_ ux1: Double, _ uy1: Double, _ ux2: Double, _ uy2: Double, side: Int, _ body: (Int) -> Void) {
        let m = cellMargin
        let lowY = min(uy1, uy2)
        let highY = max(uy1, uy2)
        let lowX = min(ux1, ux2)
        let highX = max(ux1, ux2)
        let steep = highY - lowY >= 1
        for row in clampedIndex(lowY - m, count: side)...clampedIndex(highY + m, count: side) {
            var x0 = lowX
            var x1 = highX
            if steep {
                // Where the segment enters and leaves the band, clamped to the segment.
                let b0 = max(lowY, Double(row) - m)
                let b1 = min(highY, Double(row + 1) + m)
                let xa = ux1 + (b0 - uy1) / (uy2 - uy1) * (ux2 - ux1)
                let xb = ux1 + (b1 - uy1) / (uy2 - uy1) * (ux2 - ux1)
                x0 = max(lowX, min(xa, xb))
                x1 = min(highX, max(xa, xb))
            }
            for cx in clampedIndex(x0 - m, count: side)...clampedIndex(x1 + m, count: side) { body(row * side + cx) }
        }
    }

    /// The location of every cell centre (`cellCentre`), or `uncertain` for a centre that
    /// maps to another cell (a box so small or far from 0 that the centre rounds across a
    /// border): a pure cell takes its centre's location, a mixed cell counts from it.
    ///
    /// Row by row: the first centre by the slab count on the edge index at `record[index...]`,
    /// each next one from the one before by the crossings of the segment between them
    /// (`horizontalCrossings`) with the edges listed in either cell. Both centres map to
    /// their own cells, so the segment lies in the two cells and every edge that meets it is
    /// listed in one of them (`fileEdges`). When the crossing count cannot decide, or the
    /// centre before is boundary or uncertain, the slab count decides.
    /// - Complexity: O(side² + entries), plus one slab count per row and per undecided step.
    static func centreLocations(
        record: [Double], index: Int, start: [UInt32], entries: [UInt32], side: Int, minX: Double, minY: Double, scaleX: Double,
        scaleY: Double, widthX: Double, widthY: Double
    ) -> [PointLocation] {
        var out = [PointLocation](repeating: .uncertain, count: side * side)
        // An empty list still needs an address to pass (never read through).
        let list = entries.isEmpty ? [0] : entries
        record.withUnsafeBufferPointer { r in
            list.withUnsafeBufferPointer { list in
                start.withUnsafeBufferPointer { start in
                    let base = r.baseAddress!
                    for cy in 0..<side {
                        let y = cellCentre(cy, min: minY, width: widthY)
                        let rowOK = slab(y, minY: minY, scale: scaleY, slabs: side) == cy
                        for cx in 0..<side where rowOK {
                            let cell = cy * side + cx
                            let x = cellCentre(cx, min: minX, width: widthX)
                            guard slab(x, minY: minX, scale: scaleX, slabs: side) == cx else { continue }
                            let before = cx > 0 ? out[cell - 1] : .uncertain
                            if before == .interior || before == .exterior,
                                let flips = horizontalCrossings(
                                    list.baseAddress!, Int(start[cell - 1])..<Int(start[cell]), Int(start[cell])..<Int(start[cell + 1]),
                                    from: cellCentre(cx - 1, min: minX, width: widthX), to: x, y: y, coords: base + 1 + Int(r[0]))
                            {
                                out[cell] = (before == .interior) != (flips & 1 == 1) ? .interior : .exterior
                                continue
                            }
                            out[cell] = RingLocator.locateBySlab(x: x, y: y, coords: base + 1 + Int(r[0]), index: base + index)
                        }
                    }
                }
            }
        }
        return out
    }

    /// How many edges of the two ascending lists `entries[a]` and `entries[b]` (an edge in
    /// both counts once) cross the horizontal segment from (x0, y) to (x1, y), x0 < x1, at a
    /// point inside both; nil when an edge might touch it otherwise (an end on the line y, a
    /// segment end on the edge's line, or an orientation the filter cannot decide).
    ///
    /// An edge with its ends strictly either side of the line y meets the line once, and that
    /// point lies strictly between the segment's ends exactly when they are strictly on
    /// opposite sides of the edge's line: two orientations, where `RingLocator.crossings`
    /// takes four.
    /// - Complexity: O(|a| + |b|).
    @inline(__always)
    static func horizontalCrossings(
        _ entries: UnsafePointer<UInt32>, _ a: Range<Int>, _ b: Range<Int>, from x0: Double, to x1: Double, y: Double,
        coords: UnsafePointer<Double>
    ) -> Int? {
        var flips = 0
        var i = a.lowerBound
        var j = b.lowerBound
        while i < a.upperBound || j < b.upperBound {
            let e: Int
            if j == b.upperBound || (i < a.upperBound && entries[i] < entries[j]) {
                e = Int(entries[i])
                i += 1
            } else {
                if i < a.upperBound && entries[i] == entries[j] { i += 1 }
                e = Int(entries[j])
                j += 1
            }
            let ay = coords[2 * e + 1]
            let by = coords[2 * e + 3]
            if (ay < y && by < y) || (ay > y && by > y) { continue }
            if ay == y || by == y { return nil }
            let ax = coords[2 * e]
            let bx = coords[2 * e + 2]
            if (ax < x0 && bx < x0) || (ax > x1 && bx > x1) { continue }
            let o1 = Orientation.indexFilter(ax, ay, bx, by, x0, y)
            let o2 = Orientation.indexFilter(ax, ay, bx, by, x1, y)
            if o1 == 0 || o1 == 2 || o2 == 0 || o2 == 2 { return nil }
            if o1 != o2 { flips += 1 }
        }
        return flips
    }

    /// A polygon record from flat coordinates and per-ring (positions, isExterior), with room
    /// for `extra` more doubles. Every ring holds at least one position (a checked fence's
    /// hold four), so each ring's end carries its sign.
    static func polygonRecord(coords: [Double], rings: [(count: Int, isExterior: Bool)], extra: Int = 0) -> [Double] {
        var record: [Double] = []
        record.reserveCapacity(1 + rings.count + coords.count + extra)
        record.append(Double(rings.count))
        var end = 0
        for r in rings {
            precondition(r.count > 0, "a ring without positions")
            end += r.count
            record.append(Double(r.isExterior ? end : -end))
        }
        record.append(contentsOf: coords)
        return record
    }

    /// The rings of a polygon record, as (positions, isExterior), and the offset of its first
    /// coordinate within the record.
    /// - Complexity: O(rings).
    static func rings(of record: UnsafePointer<Double>) -> (rings: [(count: Int, isExterior: Bool)], coordinates: Int) {
        let k = ringCount(of: record)
        let rings = (0..<k).map { i -> (count: Int, isExterior: Bool) in (ringPositions(i, of: record).count, isExterior(i, of: record)) }
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
