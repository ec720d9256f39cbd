/// One fix of one device (SPEC "Positions"). `Codable` as its six fields (the coordinate
/// system by name), for callers that keep fixes, such as a stream's held ones
/// (`EventStream.Held`).
public struct Position: Sendable, Hashable, Codable {
    public var device: String
    /// Epoch seconds (UTC), fractional allowed.
    public var time: Double
    public var lon: Double
    public var lat: Double
    /// Horizontal accuracy in metres; nil when unknown.
    public var accuracy: Double?
    /// Coordinate system of `lon`/`lat`.
    public var coord: CoordinateSystem

    /// Field by field, the device id by its bytes (`ExactID`): two spellings of one text are
    /// two devices.
    public static func == (a: Position, b: Position) -> Bool {
        a.time == b.time && a.lon == b.lon && a.lat == b.lat && a.accuracy == b.accuracy && a.coord == b.coord
            && ExactID.sameBytes(a.device, b.device)
    }

    public init(device: String, time: Double, lon: Double, lat: Double, accuracy: Double? = nil, coord: CoordinateSystem = .wgs84) {
        self.device = device
        self.time = time
        self.lon = lon
        self.lat = lat
        self.accuracy = accuracy
        self.coord = coord
    }

    public var lonLat: LonLat { LonLat(lon: lon, lat: lat) }

    /// The position in WGS84: as given, or converted from GCJ-02 / BD-09LL
    /// (`CoordinateConversion.toWGS84`). Not checked: a NaN stays a NaN. On a fix read through
    /// a pointer in a hot loop, convert its fields instead: `pointee.wgs84` copies the whole fix.
    @inline(__always)
    public var wgs84: LonLat { CoordinateConversion.toWGS84(lonLat, from: coord) }

    /// The first time past the years 1-9999 as events write it (ISO 8601 to the millisecond,
    /// rounded): 9999-12-31T23:59:59.9995Z, which events would write as the year 10000. The
    /// Double nearest it is the first whose milliseconds round to 10000-01-01 (Doubles are
    /// 2^-15 s apart there; `PositionCheckTests` checks both neighbours), so one compare decides.
    @inline(__always)
    static var timeLimit: Double { 253_402_300_799.9995 }

    /// The first time within the years 1-9999 as events write it: the Double just above
    /// 0000-12-31T23:59:59.9995Z, whose milliseconds, a tie, round away from zero to the year 0.
    /// Every time from here to 0001-01-01T00:00:00Z writes as that instant
    /// (`PositionCheckTests` checks both neighbours).
    @inline(__always)
    static var firstTime: Double { -62_135_596_800.000_496 }

    /// The times a usable fix has: the years 1-9999 as events write them, rounded to the
    /// millisecond at both ends. Also what a state file's last fix time must be
    /// (`TrackerSnapshot(decoding:)`). Computed, like `timeLimit`, so the per-fix check folds
    /// to two compares (a `static let` is a once-check per use).
    @inline(__always)
    static var usableTimes: Range<Double> { firstTime ..< timeLimit }

    /// Whether `problem` is nil, in a few compares: the hot loops ask this first and build the
    /// reason only for a bad fix. NaN fails every compare, so it is not usable.
    @inline(__always)
    public var isUsable: Bool {
        Self.usableTimes.contains(time) && lon >= -180 && lon <= 180 && lat >= -90 && lat <= 90
            && (accuracy.map { $0.isFinite && $0 >= 0 } ?? true)
    }

    /// Whether a number reads as a date-time written YYYYMMDDhhmmss (14 digits, a month,
    /// day, hour, minute and second in range): a timestamp mistaken for epoch seconds.
    static func looksLikeCompactDateTime(_ t: Double) -> Bool {
        guard t >= 1e13 && t < 1e14 && t == t.rounded() else { return false }
        let v = Int(t)
        let (month, day, hour) = (v / 100_000_000 % 100, v / 1_000_000 % 100, v / 10_000 % 100)
        let (minute, second) = (v / 100 % 100, v % 100)
        return (1...12).contains(month) && (1...31).contains(day) && hour < 24 && minute < 60 && second < 61
    }

    /// Why `time` cannot be a fix's (or a fence's `expires`): not finite, or outside the years
    /// 1-9999 as events write them; nil when it can. Epoch milliseconds and YYYYMMDDhhmmss
    /// numbers are named as the likely mistakes, for a fix with the `--time-format` that reads
    /// them; `fence` says it is a fence's, which `--time-format` does not read (only ISO 8601
    /// or epoch seconds).
    /// `countDigits` says the time was read as a count of 10^-countDigits seconds
    /// (`--time-format %s%3N` 3): a count still too large is named by the unit it reads as.
    static func timeProblem(_ time: Double, fence: Bool = false, countDigits: Int = 0) -> String? {
        if !time.isFinite { return "time is not a finite number" }
        // Years 1 to 9999, what ISO 8601 output can write. Epoch milliseconds of any date since
        // 1973 land beyond 1e12, 30 times past the range: name the likely mistake.
        if abs(time) >= 1e12 {
            if countDigits == 0 && Self.looksLikeCompactDateTime(time) {
                let way = fence ? "write it in ISO 8601 (20200101T000000Z) or epoch seconds" : "name that format, e.g. --time-format %Y%m%d%H%M%S, or write ISO 8601"
                return "time \(time) is outside the years 1-9999 (it reads as a date-time written YYYYMMDDhhmmss: \(way))"
            }
            // The count as written: milliseconds since 1973 pass 1e12, microseconds 1e15,
            // nanoseconds 1e18.
            func name(_ digits: Int) -> String { digits == 3 ? "milliseconds" : digits == 6 ? "microseconds" : "nanoseconds" }
            let count = abs(time) * (countDigits == 3 ? 1e3 : countDigits == 6 ? 1e6 : countDigits == 9 ? 1e9 : 1)
            let unit = count >= 1e18 ? 9 : count >= 1e15 ? 6 : 3
            if countDigits == 0 {
                let way = fence ? "" : ": --time-format %s%\(unit)N reads them"
                return "time \(time) is outside the years 1-9999 (epoch seconds expected, not \(name(unit))\(way))"
            }
            // A unit no finer than the one given is no way out.
            guard unit > countDigits, count < 1e21 else { return "time \(time) is outside the years 1-9999" }
            return "time \(time) is outside the years 1-9999 (a count of \(name(unit)), not \(name(countDigits)): --time-format %s%\(unit)N reads them)"
        }
        if time < -62_135_596_800.000_5 || time >= 253_402_300_800 {
            return "time \(time) is outside the years 1-9999"
        }
        if time >= Self.timeLimit {
            return "time \(time) is outside the years 1-9999 (to the millisecond it is 10000-01-01T00:00:00.000Z)"
        }
        if time < Self.firstTime {
            return "time \(time) is outside the years 1-9999 (to the millisecond it is 0000-12-31T23:59:59.999Z)"
        }
        return nil
    }

    /// Why this fix must be rejected, or nil when it is usable: NaN, infinite or out-of-range
    /// values (a time outside the years 1-9999, such as epoch milliseconds) never reach any
    /// device's state.
    public var problem: String? { problem(countDigits: 0) }

    /// `problem` for a fix whose time was read as a count of 10^-`countDigits` seconds
    /// (`--time-format %s%3N`: 3): a time still out of range names the unit the count reads
    /// as, not the pattern already given.
    public func problem(countDigits: Int) -> String? {
        if let why = Self.timeProblem(time, countDigits: countDigits) { return why }
        if !lon.isFinite || !lat.isFinite { return "lon/lat is not a finite number" }
        if lon < -180 || lon > 180 { return "lon \(lon) is outside [-180, 180]" }
        if lat < -90 || lat > 90 { return "lat \(lat) is outside [-90, 90]" }
        if let accuracy, !(accuracy.isFinite && accuracy >= 0) { return "accuracy \(accuracy) is not a finite number >= 0" }
        return nil
    }
}
