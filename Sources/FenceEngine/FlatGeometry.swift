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
        case free = 0, circle = 1, polygon = 2
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
