import FenceEngine

/// One value of a feature's field or property, as the readers hand it over.
enum AttributeValue {
    case text(String)
    case number(Double)
    /// A JSON number (or an OGR integer column's digits): its text as written and its value.
    /// Shown as written, so an id keeps its digits (9007199254740993 is not
    /// 9007199254740992.0, 1e400 is not "inf").
    case jsonNumber(text: String, value: Double)
    /// A list of strings (a JSON array of strings, an OGR StringList).
    case list([String])
    /// Anything else, as JSON text (an object, a boolean, a mixed array).
    case other(String)

    /// The value as people read it in an error message.
    var display: String {
        switch self {
        case .text(let s): return s
        case .number(let v): return Self.format(v)
        case .jsonNumber(let text, _): return text
        case .list(let l): return l.joined(separator: ",")
        case .other(let json): return json
        }
    }

    /// The value in an error message: text in quotes (so an empty or blank one shows), the
    /// rest as `display`.
    var quoted: String {
        if case .text(let s) = self { return "\"\(s)\"" }
        return display
    }

    /// Whether this is text of nothing but spaces and tabs, or none: a setting left blank
    /// (an empty spreadsheet cell, `"dwell": ""`), which every reader takes as not set.
    var isBlank: Bool {
        if case .text(let s) = self { return s.trimmingBlanks().isEmpty }
        return false
    }

    /// Integral values without a fraction ("7", not "7.0"), others in Swift's shortest form.
    static func format(_ v: Double) -> String {
        if v == v.rounded() && abs(v) < 0x1p53 { return String(Int64(v)) }
        return "\(v)"
    }

    var number: Double? {
        switch self {
        case .number(let v): return v
        case .jsonNumber(_, let v): return v
        case .text(let s): return Double(s.trimmingBlanks())
        default: return nil
        }
    }
}

/// The settings a feature's mapped fields give a fence, with one set of rules and error texts
/// for every reader (SPEC "Fences").
struct FenceSettings {
    var id: String?
    var group: String?
    var radius: Double?
    var coord: CoordinateSystem?
    var actions: FenceActions?
    var dwell: Double?
    var expires: Double?

    /// Applies one field's value; nil on success, else the error (without a fence name). Blank
    /// text is no value: the setting stays as it was (unset, or the fence's default), as OGR
    /// reads an empty cell and as positions take an empty `coord`.
    /// - Parameter source: where the value is, as a message names it (`property "group"`,
    ///   `field "group"`, `the feature id`).
    mutating func set(_ role: FenceFields.Role, _ value: AttributeValue, from source: @autoclosure () -> String) -> FenceError? {
        if value.isBlank { return nil }
        switch role {
        case .id:
            if let e = Self.notStringOrNumber(value, source(), kind: .malformedInput) { return e }
            id = value.display
        case .group:
            if let e = Self.notStringOrNumber(value, source(), kind: .invalidSetting) { return e }
            group = value.display
        case .radius:
            guard let v = value.number else { return FenceError(.invalidRadius, reason: "radius \(value.quoted) is not a number") }
            radius = v
        case .coord:
            guard case .text(let s) = value, let c = CoordinateSystem(name: s) else {
                return FenceError(.unknownCoordinateSystem, reason: "unknown coord \(value.quoted) (wgs84, gcj02 or bd09ll)")
            }
            coord = c
        case .actions:
            let list: String
            switch value {
            case .text(let s): list = Self.listText(s)
            case .list(let l): list = l.joined(separator: ",")
            default: list = "?"
            }
            guard let a = FenceActions(list: list) else {
                return FenceError(.invalidSetting, reason: "actions must list enter, exit, dwell or cross (got \(value.quoted))")
            }
            actions = a
        case .dwell:
            guard let v = value.number else { return FenceError(.invalidSetting, reason: "dwell \(value.quoted) is not a number of seconds") }
            dwell = v
        case .expires:
            if let v = value.number {
                expires = v
            } else if case .text(let s) = value, let v = ISO8601.parse(Self.isoDate(s)) {
                expires = v
            } else {
                return FenceError(.invalidSetting, reason: "expires \(value.quoted) is neither epoch seconds nor ISO 8601")
            }
        }
        return nil
    }

    /// Why a value cannot be an id or a group, or nil: each is a string or a number (RFC 7946
    /// 3.2 for ids, SPEC "Fences"). A boolean, an object or an array was taken as its JSON
    /// text, by the two readers differently (`{"a":1}` and `{ "a": 1 }`, `a,b` and `(2:a,b)`).
    static func notStringOrNumber(_ value: AttributeValue, _ source: String, kind: FenceError.Kind) -> FenceError? {
        switch value {
        case .text, .number, .jsonNumber: return nil
        case .list: return FenceError(kind, reason: "\(source) must be a string or a number, not an array")
        case .other(let json):
            let shown = json.count > 40 ? json.prefix(40) + "..." : json[...]
            return FenceError(kind, reason: "\(source) must be a string or a number, not \(shown)")
        }
    }

    /// A list written as text by a format without list columns: OGR's `(2:enter,dwell)` or a
    /// JSON array `["enter","dwell"]`, as `enter,dwell`; other text as it is.
    static func listText(_ s: String) -> String {
        let t = s.trimmingBlanks()
        if t.hasPrefix("("), t.hasSuffix(")"), let colon = t.firstIndex(of: ":"), Int(t[t.index(after: t.startIndex)..<colon]) != nil {
            return String(t[t.index(after: colon)..<t.index(before: t.endIndex)])
        }
        if t.hasPrefix("["), t.hasSuffix("]") {
            return String(t.dropFirst().dropLast().filter { $0 != "\"" })
        }
        return s
    }

    /// OGR writes date-times as text `2021/01/01 00:00:00+00`: the same as ISO 8601 once the
    /// date's slashes are dashes (a space for `T` and a `+hh` zone are ISO 8601 already).
    static func isoDate(_ s: String) -> String {
        let u = Array(s.utf8)
        guard u.count >= 10, u[4] == 47, u[7] == 47, u[0..<4].allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return s }
        var d = u
        d[4] = 45
        d[7] = 45
        return String(decoding: d, as: UTF8.self)
    }

    /// A fence of `shape` with these settings.
    func fence(id: String, shape: FenceShape, defaultCoord: CoordinateSystem, properties: [String: String]) -> Fence {
        Fence(
            id: id, group: group, shape: shape, coord: coord ?? defaultCoord, actions: actions, dwell: dwell,
            expires: expires, properties: properties)
    }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    func trimmingBlanks() -> Substring {
        var s = self[...]
        while let f = s.first, f == " " || f == "\t" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" { s.removeLast() }
        return s
    }
}
