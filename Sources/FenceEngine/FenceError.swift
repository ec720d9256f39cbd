/// The one error type of the engine: what went wrong, where, and why.
///
/// `fence` names the fence (its id, or its index in the batch when the id itself is the
/// problem); `line` names the input line for file and stream input. `reason` is a sentence for
/// people; where GEOS found the problem, it is GEOS's own message (for example
/// "Self-intersection[10 5]").
public struct FenceError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        /// The fence has an empty id.
        case missingID = "missing-id"
        /// A second fence with the same id in one batch.
        case duplicateID = "duplicate-id"
        /// Radius not a positive finite number of metres.
        case invalidRadius = "invalid-radius"
        /// A coordinate that is NaN, infinite, or outside [-180, 180] x [-90, 90].
        case coordinateOutOfRange = "coordinate-out-of-range"
        /// A ring with fewer than 4 positions.
        case ringTooShort = "ring-too-short"
        /// A ring whose last position differs from its first.
        case ringNotClosed = "ring-not-closed"
        /// GEOS found the geometry invalid (self-intersection, ring crossing, ...).
        case invalidGeometry = "invalid-geometry"
        /// No polygon in the shape, or nothing left after repair.
        case emptyGeometry = "empty-geometry"
        /// A coordinate system name the engine does not know.
        case unknownCoordinateSystem = "unknown-coord"
        /// A per-fence setting (dwell, actions, expires) out of its range.
        case invalidSetting = "invalid-setting"
        /// Input that could not be read (malformed JSON, CSV, ...).
        case malformedInput = "malformed-input"
        /// Input beyond a documented size limit.
        case limitExceeded = "limit-exceeded"
        /// GEOS itself failed (out of memory, internal exception).
        case geos = "geos"
    }

    public var kind: Kind
    /// The fence's id, or a description such as "#12" (its position) when it has no usable id.
    public var fence: String?
    /// 1-based input line (or feature number) where the problem was found, when known.
    public var line: Int?
    public var reason: String

    public init(_ kind: Kind, fence: String? = nil, line: Int? = nil, reason: String) {
        self.kind = kind
        self.fence = fence
        self.line = line
        self.reason = reason
    }

    /// One line for people. Fence ids and input echoed in the reason are data: control
    /// characters in them are shown escaped (`\n`, `\u{1B}`), never sent to a terminal.
    public var description: String {
        var out = ""
        if let line { out += "line \(line): " }
        if let fence { out += "fence \(fence): " }
        return Self.printable(out + "\(kind.rawValue): \(reason)")
    }

    /// `text` with every character that could move a terminal's cursor, start an escape
    /// sequence, break a line or reorder text (C0 and C1 controls, DEL, U+2028/U+2029, the
    /// bidirectional overrides and isolates) written as an escape.
    public static func printable(_ text: String) -> String {
        func unsafe(_ u: Unicode.Scalar) -> Bool {
            let v = u.value
            return v < 0x20 || (0x7F...0x9F).contains(v) || v == 0x2028 || v == 0x2029 || (0x202A...0x202E).contains(v)
                || (0x2066...0x2069).contains(v)
        }
        guard text.unicodeScalars.contains(where: unsafe) else { return text }
        var out = String.UnicodeScalarView()
        for u in text.unicodeScalars {
            guard unsafe(u) else {
                out.append(u)
                continue
            }
            switch u {
            case "\n": out.append(contentsOf: "\\n".unicodeScalars)
            case "\r": out.append(contentsOf: "\\r".unicodeScalars)
            case "\t": out.append(contentsOf: "\\t".unicodeScalars)
            default: out.append(contentsOf: "\\u{\(String(u.value, radix: 16, uppercase: true))}".unicodeScalars)
            }
        }
        return String(out)
    }
}
