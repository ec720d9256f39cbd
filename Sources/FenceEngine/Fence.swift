/// What a fence reports, per fence or engine-wide (Baidu's `activeAction`).
public struct FenceActions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let enter = FenceActions(rawValue: 1)
    public static let exit = FenceActions(rawValue: 2)
    public static let dwell = FenceActions(rawValue: 4)
    /// Opt-in: a straight segment between two outside fixes passes through the fence.
    public static let cross = FenceActions(rawValue: 8)

    /// `enter`, `exit` and `dwell`: the engine default.
    public static let standard: FenceActions = [.enter, .exit, .dwell]
    /// Every action there is; other bits of a raw value mean nothing.
    public static let all: FenceActions = [.enter, .exit, .dwell, .cross]

    /// Parses a comma-separated list such as `"enter,exit"`; nil on an unknown word.
    public init?(list: String) {
        var actions: FenceActions = []
        for word in list.split(separator: ",", omittingEmptySubsequences: true) {
            switch word.trimmingWhitespace().lowercased() {
            case "enter": actions.insert(.enter)
            case "exit": actions.insert(.exit)
            case "dwell", "stay", "stayed": actions.insert(.dwell)
            case "cross": actions.insert(.cross)
            default: return nil
            }
        }
        self = actions
    }

    /// The canonical comma-separated list, e.g. `"enter,exit,dwell"`.
    public var list: String {
        var words: [String] = []
        if contains(.enter) { words.append("enter") }
        if contains(.exit) { words.append("exit") }
        if contains(.dwell) { words.append("dwell") }
        if contains(.cross) { words.append("cross") }
        return words.joined(separator: ",")
    }
}

/// One polygon: an exterior ring and any number of holes. Rings are closed (first position
/// repeated last) and edges are straight in longitude/latitude (RFC 7946).
public struct Polygon: Sendable, Hashable {
    public var exterior: [LonLat]
    public var holes: [[LonLat]]

    public init(exterior: [LonLat], holes: [[LonLat]] = []) {
        self.exterior = exterior
        self.holes = holes
    }

    /// Every ring, exterior first.
    public var rings: [[LonLat]] { [exterior] + holes }
}

/// The area a fence covers.
public enum FenceShape: Sendable, Hashable {
    /// Everything within `radius` metres of `center`, by geodesic distance on the WGS84
    /// ellipsoid, boundary included.
    case circle(center: LonLat, radius: Double)
    /// A Polygon (one element) or MultiPolygon, boundary included (GEOS `covers`).
    case polygons([Polygon])
}

/// A geofence as users hand it to the engine: a value, independent of any store.
///
/// Coordinates are in `coord`; the store converts them to WGS84 when the fence is added and
/// hands back WGS84 afterwards.
public struct Fence: Sendable, Hashable {
    /// Unique id. Adding a fence whose id is already stored replaces it.
    public var id: String
    /// Baidu's customID: many fences may share one; remove or list by group.
    public var group: String?
    public var shape: FenceShape
    public var coord: CoordinateSystem
    /// Events to report for this fence; nil means the engine's setting.
    public var actions: FenceActions?
    /// Seconds inside before `dwell` fires; nil means the engine's setting (600 s).
    public var dwell: Double?
    /// Epoch seconds after which the fence is removed; nil for never.
    public var expires: Double?
    /// Other properties, as raw JSON text values keyed by name, carried into events on request.
    public var properties: [String: String]

    /// Field by field, id, group and properties by their bytes (`ExactID`), as the store tells
    /// fences and groups apart: two spellings of one text (NFC against NFD) are two fences.
    /// Hashing stays the synthesized one, consistent with this: byte-equal text is equal text.
    public static func == (a: Fence, b: Fence) -> Bool {
        guard a.shape == b.shape, a.coord == b.coord, a.actions == b.actions, a.dwell == b.dwell, a.expires == b.expires,
            ExactID.sameBytes(a.id, b.id), ExactID.sameBytes(a.group, b.group), a.properties.count == b.properties.count
        else { return false }
        // A dictionary keyed by `String` holds one of two canonically equal names, so each key
        // must find its partner there with the same bytes.
        for (name, value) in a.properties {
            guard let i = b.properties.index(forKey: name), ExactID.sameBytes(b.properties[i].key, name),
                ExactID.sameBytes(b.properties[i].value, value)
            else { return false }
        }
        return true
    }

    public init(
        id: String, group: String? = nil, shape: FenceShape, coord: CoordinateSystem = .wgs84,
        actions: FenceActions? = nil, dwell: Double? = nil, expires: Double? = nil,
        properties: [String: String] = [:]
    ) {
        self.id = id
        self.group = group
        self.shape = shape
        self.coord = coord
        self.actions = actions
        self.dwell = dwell
        self.expires = expires
        self.properties = properties
    }

    /// A circle fence.
    public static func circle(
        id: String, lon: Double, lat: Double, radius: Double, group: String? = nil,
        coord: CoordinateSystem = .wgs84
    ) -> Fence {
        Fence(id: id, group: group, shape: .circle(center: LonLat(lon: lon, lat: lat), radius: radius), coord: coord)
    }

    /// A single-polygon fence from an exterior ring and optional holes.
    public static func polygon(
        id: String, exterior: [LonLat], holes: [[LonLat]] = [], group: String? = nil,
        coord: CoordinateSystem = .wgs84
    ) -> Fence {
        Fence(id: id, group: group, shape: .polygons([Polygon(exterior: exterior, holes: holes)]), coord: coord)
    }
}

extension Substring {
    func trimmingWhitespace() -> Substring {
        var s = self
        while let f = s.first, f == " " || f == "\t" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" { s.removeLast() }
        return s
    }
}
