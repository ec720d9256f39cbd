/// Which input column or JSON key carries which field of a position, by name and alias.
///
/// Names are matched case-insensitively, so AIS (`MMSI`, `BaseDateTime`, `LON`, `LAT`) and
/// common GPS exports load as they are.
public enum PositionField: Int, CaseIterable, Sendable {
    case device, time, lon, lat, accuracy, coord

    /// Accepted names, lowercase, the canonical one first.
    public var names: [String] {
        switch self {
        case .device: return ["device", "id", "device_id", "deviceid", "mmsi", "object_id", "vehicle_id"]
        case .time: return ["time", "timestamp", "ts", "basedatetime", "datetime", "t"]
        case .lon: return ["lon", "lng", "longitude", "x", "long"]
        case .lat: return ["lat", "latitude", "y"]
        case .accuracy: return ["accuracy", "acc", "horizontal_accuracy", "hacc"]
        case .coord: return ["coord", "coordtype", "coord_type", "crs"]
        }
    }

    /// The field a column name stands for, or nil.
    public static func field(named raw: some StringProtocol) -> PositionField? {
        let name = raw.lowercased()
        return allCases.first { $0.names.contains(name) }
    }
}
