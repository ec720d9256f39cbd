/// A small grid over a polygon record of at most `FlatGeometry.indexThreshold` positions (kind
/// `.polygon`), so most points are located without counting crossings, and the rest count only
/// the edges of one row of the grid.
///
/// Appended after the coordinates (`FlatGeometry`), `columns` x `rows` cells over the record's
/// bounding box:
/// - `[minX, minY, scaleX, scaleY]`: a point maps to cell column `Int((x - minX) * scaleX)`,
///   row `Int((y - minY) * scaleY)`, both clamped to the grid (`row`; columns likewise). A
///   scale is 0 when that side of the box is below `minimumExtent`.
/// - per row, a mask of the edges whose latitude range reaches the row (bit i: the edge from
///   position i to i + 1), `maskBytes` bytes each, padded to whole doubles;
/// - per cell, 2 bits, row by row: 0 every point that maps to the cell is exterior, 1 every one
///   is interior, 2 mixed (count the row).
///
/// 10 doubles (80 bytes) for a polygon of up to 17 positions, 12 up to 33, 16 up to 64.
///
/// Exactness: the row masks are exact by monotonicity (the row of a latitude is monotonic in
/// it, so an edge filed under the rows of its two ends is in the row of every latitude between
/// them; edges elsewhere cannot touch the ray and count nothing). A cell is pure only when no
/// edge comes within `margin` cells of it (`markEdges`); every point that maps to a cell is
/// within 1e-7 cells of it, so the points of a pure cell lie in a rectangle the boundary does
/// not touch, all on the side of the cell centre, which is located exactly by the row count
/// (a boundary or uncertain answer leaves the cell mixed).
enum SmallPolygonGrid {
    /// At most 32 (a row's cells are bits of a UInt32 while building), and a divisor of 32.
    static let columns = 16
    static let rows = 8
    static let allColumns: UInt32 = columns == 32 ? ~0 : (1 << UInt32(columns)) - 1
    /// How far (in cells) a pure cell is from every edge. The arithmetic that maps points and
    /// edges to cells errs by less than 1e-12 cells for boxes of at least `minimumExtent`.
    static let margin = 1e-6
    /// Boxes narrower than this (degrees) get an all-mixed grid (one row when the height is
    /// below it): mapping subnormal differences to cells would lose the bound above.
    static let minimumExtent = 1e-280
    /// Doubles before the row masks.
    static let headerCount = 4
    /// Doubles of the cell codes: 2 bits a cell.
    static let cellDoubles = columns * rows * 2 / 64

    /// Bytes of one row's edge mask for a record of `n` positions (edges 0 ..< n - 1).
    @inline(__always)
    static func maskBytes(positions n: Int) -> Int { n <= 17 ? 2 : (n <= 33 ? 4 : 8) }

    /// Doubles the grid adds to a record of `n` positions.
    static func doubles(positions n: Int) -> Int { headerCount + (rows * maskBytes(positions: n) + 7) / 8 + cellDoubles }

    /// The row of a latitude: monotonic in `y`; `clampedIndex`, which for the points `locate`
    /// maps (`v` in 0 ... rows + 1e-7) is `min(Int(v), rows - 1)`.
    @inline(__always)
    static func row(_ y: Double, minY: Double, scaleY: Double) -> Int {
        FlatGeometry.clampedIndex((y - minY) * scaleY, count: rows)
    }

    /// Where a point lies against a `.polygon` record carrying this grid: the same answer as
    /// `RingLocator.locate`.
    ///
    /// A point outside the box is exterior; exact, as `(x - minX) * scaleX` is below 0 only
    /// for x below minX, and above `columns + 1e-7` only for x above maxX (which maps to
    /// `columns` within 1e-15 cells); likewise y. A point up to 1e-7 cells past the box maps
    /// to the last cell, within its margin.
    /// - Complexity: O(1) for a pure cell, else O(e) for the e edges of one row; no allocation.
    ///   For the benchmark's 16-vertex stars, a simulation of the marking put about 60% of the
    ///   points in a box in pure cells, and about 3.5 edges in a row.
    @inline(__always)
    static func locate(x: Double, y: Double, record: UnsafePointer<Double>) -> PointLocation {
        let ringCount = FlatGeometry.ringCount(of: record)
        let n = FlatGeometry.positionCount(of: record)
        let coords = record + 1 + ringCount
        let header = coords + 2 &* n
        let u = (x - header[0]) * header[2]
        let v = (y - header[1]) * header[3]
        guard u >= 0 && v >= 0 && u <= Double(columns) + 1e-7 && v <= Double(rows) + 1e-7 else { return .exterior }
        let cx = min(Int(u), columns &- 1)
        let cy = min(Int(v), rows &- 1)
        let masks = UnsafeRawPointer(header + headerCount)
        switch code(masks, cell: cy &* columns &+ cx, positions: n) {
        case 0: return .exterior
        case 1: return .interior
        default: return countEdges(rowMask(masks, row: cy, positions: n), x: x, y: y, coords: coords)
        }
    }

    /// A lower bound in metres on `PolygonDistance.screen`'s distance from (x, y) to every edge
    /// of a `.polygon` record carrying this grid (scales `kx`, `ky` metres a degree at the
    /// point): the projected distance to the sides of the largest square block of pure cells
    /// centred on the point's cell, up to 5 x 5 cells and inside the grid, and 0 when the
    /// point's cell is mixed or the point is outside the grid. Stops growing the block once the
    /// bound reaches `enough`.
    ///
    /// Exact as a bound: no edge comes within `margin` cells of a pure cell (the marking's
    /// guarantee), so none is inside the block, and a point inside a rectangle is at least the
    /// projected distance to its nearest side from everything outside it. Edges shifted by 360
    /// degrees (`screen`'s copies across the antimeridian) lie outside the record's box, which
    /// holds the block. The grid's mapping errs by under 1e-12 cells, far inside that margin.
    /// - Complexity: O(1): at most 25 cell codes read.
    @inline(__always)
    static func clearance(x: Double, y: Double, record: UnsafePointer<Double>, kx: Double, ky: Double, enough: Double) -> Double {
        let ringCount = FlatGeometry.ringCount(of: record)
        let n = FlatGeometry.positionCount(of: record)
        let header = record + 1 + ringCount + 2 &* n
        let scaleX = header[2]
        let scaleY = header[3]
        guard scaleX > 0 && scaleY > 0 else { return 0 }
        let u = (x - header[0]) * scaleX
        let v = (y - header[1]) * scaleY
        guard u >= 0 && v >= 0 && u <= Double(columns) && v <= Double(rows) else { return 0 }
        let cx = min(Int(u), columns &- 1)
        let cy = min(Int(v), rows &- 1)
        let masks = UnsafeRawPointer(header + headerCount)
        // Metres a cell is across, each way.
        let cellX = kx / scaleX
        let cellY = ky / scaleY
        var bound = 0.0
        for k in 0...2 {
            let (c0, c1, r0, r1) = (cx &- k, cx &+ k, cy &- k, cy &+ k)
            guard c0 >= 0 && r0 >= 0 && c1 < columns && r1 < rows else { break }
            // The ring of cells at Chebyshev distance k (the centre cell when k is 0).
            for r in r0...r1 {
                let step = (r == r0 || r == r1) ? 1 : max(1, 2 &* k)
                var c = c0
                while c <= c1 {
                    if code(masks, cell: r &* columns &+ c, positions: n) == 2 { return bound }
                    c &+= step
                }
            }
            let du = min(u - Double(c0), Double(c1 &+ 1) - u)
            let dv = min(v - Double(r0), Double(r1 &+ 1) - v)
            bound = max(0, min(du * cellX, dv * cellY))
            if bound >= enough { break }
        }
        return bound
    }

    /// The code of a cell (0, 1 or 2), from the masks' start.
    @inline(__always)
    static func code(_ masks: UnsafeRawPointer, cell: Int, positions n: Int) -> UInt64 {
        let bit = cell &* 2
        let word = masks.load(fromByteOffset: rows &* maskBytes(positions: n) &+ (bit >> 6) &* 8, as: UInt64.self)
        return (word >> UInt64(bit & 63)) & 3
    }

    /// A row's edge mask: 8 bytes from the row's start, the bytes past it (the next rows', or
    /// the cells') cut off by keeping bits 0 ..< n - 1 only.
    @inline(__always)
    static func rowMask(_ masks: UnsafeRawPointer, row: Int, positions n: Int) -> UInt64 {
        masks.loadUnaligned(fromByteOffset: row &* maskBytes(positions: n), as: UInt64.self) & ((1 &<< UInt64(n &- 1)) &- 1)
    }

    /// The ray count over the edges in `mask`: exact (or `uncertain`) for a point whose
    /// latitude is reached by no other edge.
    /// - Complexity: O(popcount(mask)).
    @inline(__always)
    static func countEdges(_ mask: UInt64, x: Double, y: Double, coords: UnsafePointer<Double>) -> PointLocation {
        var rest = mask
        var crossings = 0
        var uncertain = false
        while rest != 0 {
            let e = coords + 2 &* rest.trailingZeroBitCount
            rest &= rest &- 1
            if RingLocator.count(e[0], e[1], e[2], e[3], x: x, y: y, crossings: &crossings, uncertain: &uncertain) {
                return .boundary
            }
        }
        if uncertain { return .uncertain }
        return crossings & 1 == 1 ? .interior : .exterior
    }

    /// Appends the grid to a polygon record of at most 64 positions (reserve
    /// `doubles(positions:)` more for no reallocation). No allocation besides the record's.
    /// - Complexity: O(n + cells), plus one row count per run of pure cells in a row that
    ///   touches no pure cell of the row below.
    static func append(to record: inout [Double]) {
        let k = Int(record[0])
        let n = FlatGeometry.positionCount(of: record)
        precondition(n >= 2 && n <= 64, "small grid for 2 to 64 positions")
        let base = record.count
        record.append(contentsOf: repeatElement(0, count: doubles(positions: n)))
        record.withUnsafeMutableBufferPointer { r in
            let coords = UnsafePointer(r.baseAddress! + 1 + k)
            var minX = Double.infinity
            var minY = Double.infinity
            var maxX = -Double.infinity
            var maxY = -Double.infinity
            for i in 0..<n {
                minX = min(minX, coords[2 * i])
                maxX = max(maxX, coords[2 * i])
                minY = min(minY, coords[2 * i + 1])
                maxY = max(maxY, coords[2 * i + 1])
            }
            let scaleX = maxX - minX >= minimumExtent ? Double(columns) / (maxX - minX) : 0
            let scaleY = maxY - minY >= minimumExtent ? Double(rows) / (maxY - minY) : 0
            let header = r.baseAddress! + base
            header[0] = minX
            header[1] = minY
            header[2] = scaleX
            header[3] = scaleY
            let masks = UnsafeMutableRawPointer(header + headerCount)
            let w = maskBytes(positions: n)
            // Each edge under the rows of its ends and every row between.
            for ring in 0..<k {
                let positions = FlatGeometry.ringPositions(ring, of: r.baseAddress!)
                for i in positions.lowerBound..<(positions.upperBound - 1) {
                    let y1 = coords[2 * i + 1]
                    let y2 = coords[2 * i + 3]
                    for s in row(min(y1, y2), minY: minY, scaleY: scaleY)...row(max(y1, y2), minY: minY, scaleY: scaleY) {
                        let byte = s * w + i / 8
                        masks.storeBytes(of: masks.load(fromByteOffset: byte, as: UInt8.self) | 1 << UInt8(i % 8), toByteOffset: byte, as: UInt8.self)
                    }
                }
            }
            let cells = masks + rows * w
            // Per row, a bit per cell: near an edge, shown exterior, shown interior. A cell in
            // none of them stays mixed.
            withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 3 * rows) { bits in
                bits.initialize(repeating: 0)
                let near = bits.baseAddress!
                let outside = near + rows
                let inside = outside + rows
                if scaleX > 0 && scaleY > 0 {
                    markEdges(coords, record: UnsafePointer(r.baseAddress!), minX: minX, minY: minY, scaleX: scaleX, scaleY: scaleY, into: near)
                    // Row by row from the bottom; a run of pure cells in a row is one connected
                    // region the boundary does not touch, and so is a pure cell with the pure
                    // cell below it: such a run takes the location of a neighbour below, else of
                    // its first cell's centre.
                    for cy in 0..<rows {
                        var free = ~near[cy] & allColumns
                        while free != 0 {
                            let cx = free.trailingZeroBitCount
                            let length = (~(free >> UInt32(cx))).trailingZeroBitCount
                            let run = (length == 32 ? ~0 : (UInt32(1) << UInt32(length)) &- 1) << UInt32(cx)
                            free &= ~run
                            if cy > 0 && inside[cy - 1] & run != 0 {
                                inside[cy] |= run
                            } else if cy > 0 && outside[cy - 1] & run != 0 {
                                outside[cy] |= run
                            } else {
                                let x = minX + (Double(cx) + 0.5) / scaleX
                                let y = minY + (Double(cy) + 0.5) / scaleY
                                let mask = rowMask(UnsafeRawPointer(masks), row: row(y, minY: minY, scaleY: scaleY), positions: n)
                                switch countEdges(mask, x: x, y: y, coords: coords) {
                                case .interior: inside[cy] |= run
                                case .exterior: outside[cy] |= run
                                case .boundary, .uncertain: break
                                }
                            }
                        }
                    }
                }
                // 2 bits a cell, row by row (a row never straddles two words, as 2 x columns
                // divides 64): 1 interior, 0 exterior, 2 (the high bit) mixed.
                for cy in 0..<rows {
                    let mixed = ~(inside[cy] | outside[cy]) & allColumns
                    let bits = spread(inside[cy]) | spread(mixed) << 1
                    let at = 2 * columns * cy
                    let word = cells.load(fromByteOffset: 8 * (at / 64), as: UInt64.self)
                    cells.storeBytes(of: word | bits << UInt64(at % 64), toByteOffset: 8 * (at / 64), as: UInt64.self)
                }
            }
        }
    }

    /// Bit i of `v` to bit 2i.
    @inline(__always)
    static func spread(_ v: UInt32) -> UInt64 {
        var x = UInt64(v)
        x = (x | x << 16) & 0x0000_FFFF_0000_FFFF
        x = (x | x << 8) & 0x00FF_00FF_00FF_00FF
        x = (x | x << 4) & 0x0F0F_0F0F_0F0F_0F0F
        x = (x | x << 2) & 0x3333_3333_3333_3333
        return (x | x << 1) & 0x5555_5555_5555_5555
    }

    /// Sets, in `near[row]`, the bits of the cells some edge may come within `margin` of.
    ///
    /// Per row band widened by the margin, the edge's x extent within the band, clamped to the
    /// edge's own, widened by the margin and by the error of the interpolation (an error in y
    /// moves x by the slope times as much), then every cell of the band within twice the
    /// margin of that extent. Horizontal and near-horizontal edges take their whole extent.
    /// Mapping to cell units errs by below 1e-12 cells (`minimumExtent`), far inside the margin.
    static func markEdges(
        _ coords: UnsafePointer<Double>, record: UnsafePointer<Double>, minX: Double, minY: Double, scaleX: Double,
        scaleY: Double, into near: UnsafeMutablePointer<UInt32>
    ) {
        @inline(__always) func column(_ u: Double) -> Int { FlatGeometry.clampedIndex(u, count: columns) }
        @inline(__always) func band(_ v: Double) -> Int { FlatGeometry.clampedIndex(v, count: rows) }
        for r in 0..<FlatGeometry.ringCount(of: record) {
            let positions = FlatGeometry.ringPositions(r, of: record)
            for e in positions.lowerBound..<(positions.upperBound - 1) {
                let ux1 = (coords[2 * e] - minX) * scaleX
                let uy1 = (coords[2 * e + 1] - minY) * scaleY
                let ux2 = (coords[2 * e + 2] - minX) * scaleX
                let uy2 = (coords[2 * e + 3] - minY) * scaleY
                let lowY = min(uy1, uy2)
                let highY = max(uy1, uy2)
                let slope = (ux2 - ux1) / (uy2 - uy1)
                let widen = slope.isFinite ? margin + abs(slope) * 1e-9 : 0
                for cy in band(lowY - 2 * margin)...band(highY + 2 * margin) {
                    var x0 = min(ux1, ux2)
                    var x1 = max(ux1, ux2)
                    // An edge on the antimeridian is measured as the parts of it nothing covers
                    // from the other side, placed at its first end's longitude
                    // (`AntimeridianSeam.boundaryParts`): up to the range tolerance off a slanted
                    // edge, so it is filed over its whole width in every row (an independent
                    // review found a 1e-8-degree polygon's pure cell holding such a part).
                    if highY > lowY && slope.isFinite && !AntimeridianSeam.isOnLine(coords[2 * e], coords[2 * e + 2]) {
                        let b0 = max(lowY, Double(cy) - margin)
                        let b1 = min(highY, Double(cy + 1) + margin)
                        let xa = ux1 + (b0 - uy1) * slope
                        let xb = ux1 + (b1 - uy1) * slope
                        x0 = max(x0, min(xa, xb) - widen)
                        x1 = min(x1, max(xa, xb) + widen)
                    }
                    guard x0 <= x1 + 2 * margin else { continue }
                    let first = column(x0 - 2 * margin)
                    let last = column(x1 + 2 * margin)
                    near[cy] |= (UInt32(2) &<< UInt32(last)) &- (UInt32(1) << UInt32(first))
                }
            }
        }
    }
}
