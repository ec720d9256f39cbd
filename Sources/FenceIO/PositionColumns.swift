/// Which input column or JSON key carries which field of a position, by name and alias.
///
/// Names are matched case-insensitively, so AIS (`MMSI`, `BaseDateTime`, `LON`, `LAT`) and
/// common GPS exports load as they are. When an input has more than one name of a field, the
/// earliest in `names` wins wherever its column stands: the canonical name first, the most
/// generic aliases (`id`, `x`, `y`, `t`: a row number or a projected coordinate in many files)
/// last. Before, the leftmost column won, so `id,device,...` read the row number as the device.
public enum PositionField: Int, CaseIterable, Sendable {
    case device, time, lon, lat, accuracy, coord

    /// Accepted names, lowercase, in order of preference: the canonical one first.
    public var names: [String] {
        switch self {
        case .device: return ["device", "device_id", "deviceid", "vehicle_id", "object_id", "mmsi", "id"]
        case .time: return ["time", "timestamp", "ts", "basedatetime", "datetime", "t"]
        case .lon: return ["lon", "lng", "longitude", "long", "x"]
        case .lat: return ["lat", "latitude", "y"]
        case .accuracy: return ["accuracy", "acc", "horizontal_accuracy", "hacc"]
        case .coord: return ["coord", "coordtype", "coord_type", "crs"]
        }
    }

    /// The field a column name stands for, or nil.
    public static func field(named raw: some StringProtocol) -> PositionField? {
        match(raw)?.field
    }

    /// The field a column name stands for and the name's rank in `names` (0: canonical), or nil.
    static func match(_ raw: some StringProtocol) -> (field: PositionField, rank: Int)? {
        match(lowercased: raw.lowercased())
    }

    /// `match` of a name already lowercased.
    static func match(lowercased name: String) -> (field: PositionField, rank: Int)? {
        for field in allCases {
            if let rank = field.names.firstIndex(of: name) { return (field, rank) }
        }
        return nil
    }
}
