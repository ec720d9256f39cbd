/// Which property (GeoJSON) or column (any OGR layer) holds each fence setting.
///
/// Each role has a list of candidate names, tried in order; the first one a feature has is
/// used. The defaults are the names of SPEC "Fences" (plus Baidu's `customID` and
/// `coordType`). Naming a field with `set(_:to:)` makes it the only candidate, and an OGR layer
/// without that column is refused as a whole (a typo should not load fences without their
/// settings). OGR column names match case-insensitively (Shapefile writes `RADIUS`) unless a
/// column has the name exactly, which then wins; GeoJSON property names match exactly. Every property or column that is no candidate of any role is kept
/// in `Fence.properties`.
public struct FenceFields: Sendable, Hashable {
    public enum Role: String, Sendable, CaseIterable {
        case id, group, radius, coord, actions, dwell, expires
    }

    public var id = ["id"]
    public var group = ["group", "customID"]
    public var radius = ["radius"]
    public var coord = ["coord", "coordType"]
    public var actions = ["actions"]
    public var dwell = ["dwell"]
    public var expires = ["expires"]
    /// Roles whose name was given explicitly: a layer must have that column.
    public private(set) var named: Set<Role> = []

    public init() {}

    public subscript(role: Role) -> [String] {
        get {
            switch role {
            case .id: return id
            case .group: return group
            case .radius: return radius
            case .coord: return coord
            case .actions: return actions
            case .dwell: return dwell
            case .expires: return expires
            }
        }
        set {
            switch role {
            case .id: id = newValue
            case .group: group = newValue
            case .radius: radius = newValue
            case .coord: coord = newValue
            case .actions: actions = newValue
            case .dwell: dwell = newValue
            case .expires: expires = newValue
            }
        }
    }

    /// Reads `role` from the field `name` only.
    public mutating func set(_ role: Role, to name: String) {
        self[role] = [name]
        named.insert(role)
    }

    /// Every candidate name of every role: these are settings, not free properties.
    public var allNames: Set<String> {
        Set(Role.allCases.flatMap { self[$0] })
    }
}
