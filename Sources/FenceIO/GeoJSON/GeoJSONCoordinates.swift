import FenceEngine

/// The `coordinates` of a Point, Polygon or MultiPolygon read straight into flat arrays, within
/// the fence limits: past `maxPositions` positions or `maxPolygons` polygons nothing more is
/// stored (the rest is only counted, for the message), so a 10-million-vertex ring or a
/// million-member MultiPolygon costs at most the limit in memory before it is refused.
struct GeoJSONCoordinates {
    /// Array depth of one position: 1 for a Point, 3 for a Polygon, 4 for a MultiPolygon.
    let depth: Int
    let limits: FenceLimits
    /// lon, lat of the stored positions (a third or fourth number is read and dropped).
    var xy: [Double] = []
    /// Positions per stored ring.
    var ringSizes: [Int] = []
    /// Rings per stored polygon.
    var polygonSizes: [Int] = []
    /// Counted over the whole value, even past the limits.
    var positions = 0
    var polygons = 0
    /// The first structural fault, in the reader's words; scanning goes on so the document
    /// stays in step.
    var problem: String?

    private var numbersInPosition = 0
    private var ringLength = 0
    private var ringsInPolygon = 0
    private var ringNumber = 0
    private var pending = (0.0, 0.0)

    init(depth: Int, limits: FenceLimits) {
        self.depth = depth
        self.limits = limits
    }

    private var storing: Bool { positions <= limits.maxPositions && polygons <= limits.maxPolygons }

    /// Reads the value at the scanner (an array nested `depth` deep).
    /// - Complexity: O(bytes); recursion is bounded by `depth` (at most 4), never by the input.
    mutating func read(_ s: inout JSONScanner) throws(JSONScanner.Failure) {
        guard s.peek() == 91 else {
            note("the coordinates are not an array")
            _ = try s.skipValue()
            return
        }
        try array(&s, level: 1)
    }

    private mutating func note(_ message: String) {
        if problem == nil { problem = message }
    }

    private var place: String {
        switch depth {
        case 4: return "polygon \(polygons + 1) ring \(ringsInPolygon + 1) position \(ringLength + 1)"
        case 3: return "ring \(ringsInPolygon + 1) position \(ringLength + 1)"
        default: return "position"
        }
    }

    private mutating func array(_ s: inout JSONScanner, level: Int) throws(JSONScanner.Failure) {
        s.at += 1  // the [
        if level == depth { numbersInPosition = 0 }
        if !s.take(93) {
            repeat {
                if level == depth {
                    guard let c = s.peek(), JSONScanner.startsNumber(c) else {
                        note(depth == 1 ? "the Point's coordinates are not [lon, lat]" : "\(place) is not [lon, lat]")
                        _ = try s.skipValue()
                        continue
                    }
                    numbersInPosition += 1
                    if storing && numbersInPosition <= 2 {
                        let v = try s.number()
                        if numbersInPosition == 1 { pending.0 = v } else { pending.1 = v }
                    } else {
                        _ = try s.numberRange()  // past a limit (or a Z): checked, not converted
                    }
                } else if s.peek() == 91 {
                    try array(&s, level: level + 1)
                } else {
                    note(
                        level == depth - 1
                            ? "\(place) is not [lon, lat]"
                            : depth == 4 && level == 1 ? "polygon \(polygons + 1) is not an array of rings" : "ring \(ringsInPolygon + 1) is not an array")
                    _ = try s.skipValue()
                }
            } while try s.next(closing: 93)
        }
        close(level)
    }

    private mutating func close(_ level: Int) {
        switch depth - level {
        case 0:  // a position
            guard numbersInPosition >= 2 else {
                note(depth == 1 ? "the Point's coordinates are not [lon, lat]" : "\(place) is not [lon, lat]")
                return
            }
            positions += 1
            ringLength += 1
            if storing {
                xy.append(pending.0)
                xy.append(pending.1)
            }
        case 1:  // a ring
            if storing { ringSizes.append(ringLength) }
            ringLength = 0
            ringsInPolygon += 1
        case 2:  // a polygon
            if depth == 4 {
                polygons += 1
                if storing { polygonSizes.append(ringsInPolygon) }
                ringsInPolygon = 0
            }
        default:
            break
        }
    }

    /// The polygons read, or why there are none: a structural problem, or a limit.
    func polygonValues() -> Result<[Polygon], FenceError> {
        if let problem { return .failure(FenceError(.malformedInput, reason: problem)) }
        if depth == 4 && polygons > limits.maxPolygons {
            return .failure(FenceError(.limitExceeded, reason: "\(polygons) polygons exceed the limit of \(limits.maxPolygons)"))
        }
        if positions > limits.maxPositions {
            return .failure(FenceError(.limitExceeded, reason: "\(positions) positions exceed the limit of \(limits.maxPositions)"))
        }
        let perPolygon = depth == 4 ? polygonSizes : [ringsInPolygon]
        var out: [Polygon] = []
        out.reserveCapacity(perPolygon.count)
        var ring = 0
        var offset = 0
        // A polygon without rings is empty (RFC 7946 lets a reader take an empty `coordinates`
        // as null): a MultiPolygon's empty part adds nothing and is left out, as GEOS leaves
        // out a WKB `MULTIPOLYGON (EMPTY, ...)`'s, so both readers load the same fence; a
        // geometry with nothing else is empty, as in WKB (independent audit: this reader
        // refused a MultiPolygon with one empty part that OGR loaded).
        for count in perPolygon {
            guard count > 0 else { continue }
            var rings: [[LonLat]] = []
            rings.reserveCapacity(count)
            for _ in 0..<count {
                let n = ringSizes[ring]
                var points: [LonLat] = []
                points.reserveCapacity(n)
                for k in offset..<(offset + n) { points.append(LonLat(lon: xy[2 * k], lat: xy[2 * k + 1])) }
                rings.append(points)
                offset += n
                ring += 1
            }
            out.append(Polygon(exterior: rings[0], holes: Array(rings.dropFirst())))
        }
        if out.isEmpty { return .failure(FenceError(.emptyGeometry, reason: "the geometry is empty")) }
        return .success(out)
    }

    /// The point read, when the value was a well-formed `[lon, lat]`.
    var point: LonLat? {
        problem == nil && positions == 1 && xy.count == 2 ? LonLat(lon: xy[0], lat: xy[1]) : nil
    }
}
