import FenceEngine
import Foundation

/// Fences from a GeoJSON FeatureCollection (or a single Feature): Polygon and MultiPolygon
/// features, and Point features with a `radius` property (metres) as circles.
///
/// Recognised properties: `id` (else the feature's `id`), `group` (or Baidu's `customID`),
/// `radius`, `coord` (or `coordType`), `actions` (a comma list or an array), `dwell` (seconds),
/// `expires` (epoch seconds or ISO 8601). Every other property is kept as raw JSON text.
/// A feature that cannot become a fence is reported with its 1-based number and id; the
/// others load.
public enum GeoJSONFences {
    public struct Report: Sendable {
        public var fences: [Fence]
        /// Per bad feature: `line` is the feature's 1-based number in the collection.
        public var errors: [FenceError]
    }

    /// Reads a whole document.
    /// - Throws: when the document as a whole is not GeoJSON (not JSON, no features).
    public static func read(_ data: Data, coord: CoordinateSystem = .wgs84) throws(FenceError) -> Report {
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            throw FenceError(.malformedInput, reason: "not valid JSON: \(error.localizedDescription)")
        }
        guard let object = root as? [String: Any] else {
            throw FenceError(.malformedInput, reason: "the document is not a JSON object")
        }
        let features: [Any]
        switch object["type"] as? String {
        case "FeatureCollection":
            guard let list = object["features"] as? [Any] else {
                throw FenceError(.malformedInput, reason: "the FeatureCollection has no \"features\" array")
            }
            features = list
        case "Feature":
            features = [object]
        default:
            throw FenceError(.malformedInput, reason: "expected a FeatureCollection or a Feature")
        }
        var report = Report(fences: [], errors: [])
        report.fences.reserveCapacity(features.count)
        for (index, raw) in features.enumerated() {
            switch fence(raw, featureNumber: index + 1, coord: coord) {
            case .success(let f): report.fences.append(f)
            case .failure(let e): report.errors.append(e)
            }
        }
        return report
    }

    /// Reads a file; "-" is standard input.
    public static func read(path: String, coord: CoordinateSystem = .wgs84) throws(FenceError) -> Report {
        let data: Data
        if path == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: path))
            } catch {
                throw FenceError(.malformedInput, reason: "cannot read \(path): \(error.localizedDescription)")
            }
        }
        return try read(data, coord: coord)
    }

    static func fence(_ raw: Any, featureNumber: Int, coord defaultCoord: CoordinateSystem) -> Result<Fence, FenceError> {
        var name = "#\(featureNumber)"
        func fail(_ kind: FenceError.Kind, _ reason: String) -> Result<Fence, FenceError> {
            .failure(FenceError(kind, fence: name, line: featureNumber, reason: reason))
        }
        guard let feature = raw as? [String: Any], feature["type"] as? String == "Feature" else {
            return fail(.malformedInput, "not a GeoJSON Feature")
        }
        let properties = feature["properties"] as? [String: Any] ?? [:]
        if let id = scalarText(properties["id"]) ?? scalarText(feature["id"]) { name = id }
        guard name != "#\(featureNumber)" else { return fail(.missingID, "the feature has no id (property \"id\" or feature id)") }
        guard let geometry = feature["geometry"] as? [String: Any], let type = geometry["type"] as? String else {
            return fail(.emptyGeometry, "the feature has no geometry")
        }
        var coord = defaultCoord
        if let c = properties["coord"] ?? properties["coordType"] {
            guard let text = c as? String, let parsed = CoordinateSystem(name: text) else {
                return fail(.unknownCoordinateSystem, "unknown coord \(scalarText(c) ?? "?") (wgs84, gcj02 or bd09ll)")
            }
            coord = parsed
        }
        let shape: FenceShape
        switch type {
        case "Point":
            guard let p = position(geometry["coordinates"]) else {
                return fail(.malformedInput, "the Point's coordinates are not [lon, lat]")
            }
            guard let r = properties["radius"] else {
                return fail(.invalidRadius, "a Point fence needs a \"radius\" property in metres")
            }
            guard let radius = number(r) else { return fail(.invalidRadius, "radius \(scalarText(r) ?? "?") is not a number") }
            shape = .circle(center: p, radius: radius)
        case "Polygon":
            guard let rings = geometry["coordinates"] as? [Any] else { return fail(.malformedInput, "Polygon coordinates are not an array") }
            switch polygon(rings) {
            case .success(let p): shape = .polygons([p])
            case .failure(let e): return fail(.malformedInput, e.reason)
            }
        case "MultiPolygon":
            guard let list = geometry["coordinates"] as? [Any] else {
                return fail(.malformedInput, "MultiPolygon coordinates are not an array")
            }
            var polygons: [Polygon] = []
            for (i, item) in list.enumerated() {
                guard let rings = item as? [Any] else { return fail(.malformedInput, "polygon \(i + 1) is not an array of rings") }
                switch polygon(rings) {
                case .success(let p): polygons.append(p)
                case .failure(let e): return fail(.malformedInput, "polygon \(i + 1): \(e.reason)")
                }
            }
            shape = .polygons(polygons)
        default:
            return fail(.malformedInput, "geometry type \(type) cannot be a fence (Polygon, MultiPolygon or Point with radius)")
        }
        var fence = Fence(id: name, shape: shape, coord: coord)
        fence.group = scalarText(properties["group"]) ?? scalarText(properties["customID"])
        if let a = properties["actions"] {
            let list: String?
            if let s = a as? String { list = s } else if let arr = a as? [Any] { list = arr.compactMap { $0 as? String }.joined(separator: ",") } else { list = nil }
            guard let list, let actions = FenceActions(list: list) else {
                return fail(.invalidSetting, "actions must list enter, exit, dwell (got \(scalarText(a) ?? "?"))")
            }
            fence.actions = actions
        }
        if let d = properties["dwell"] {
            guard let dwell = number(d) else { return fail(.invalidSetting, "dwell \(scalarText(d) ?? "?") is not a number of seconds") }
            fence.dwell = dwell
        }
        if let e = properties["expires"] {
            if let v = number(e) {
                fence.expires = v
            } else if let s = e as? String, let v = ISO8601.parse(s) {
                fence.expires = v
            } else {
                return fail(.invalidSetting, "expires \(scalarText(e) ?? "?") is neither epoch seconds nor ISO 8601")
            }
        }
        let known: Set<String> = ["id", "group", "customID", "radius", "coord", "coordType", "actions", "dwell", "expires"]
        for (key, value) in properties where !known.contains(key) {
            if let data = try? JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed, .sortedKeys]) {
                fence.properties[key] = String(decoding: data, as: UTF8.self)
            }
        }
        return .success(fence)
    }

    struct ShapeError: Error { var reason: String }

    static func polygon(_ rings: [Any]) -> Result<Polygon, ShapeError> {
        guard !rings.isEmpty else { return .failure(ShapeError(reason: "the polygon has no rings")) }
        var out: [[LonLat]] = []
        for (r, ring) in rings.enumerated() {
            guard let list = ring as? [Any] else { return .failure(ShapeError(reason: "ring \(r + 1) is not an array")) }
            var points: [LonLat] = []
            points.reserveCapacity(list.count)
            for (i, item) in list.enumerated() {
                guard let p = position(item) else {
                    return .failure(ShapeError(reason: "ring \(r + 1) position \(i + 1) is not [lon, lat]"))
                }
                points.append(p)
            }
            out.append(points)
        }
        return .success(Polygon(exterior: out[0], holes: Array(out.dropFirst())))
    }

    static func position(_ raw: Any?) -> LonLat? {
        guard let array = raw as? [Any], array.count >= 2, let lon = number(array[0]), let lat = number(array[1]) else {
            return nil
        }
        return LonLat(lon: lon, lat: lat)
    }

    static func number(_ raw: Any?) -> Double? {
        if let n = raw as? NSNumber { return n.doubleValue }
        if let s = raw as? String { return Double(s.trimmingCharacters(in: .whitespaces)) }
        return nil
    }

    static func scalarText(_ raw: Any?) -> String? {
        switch raw {
        case let s as String: return s
        case let n as NSNumber: return n.stringValue
        default: return nil
        }
    }
}
