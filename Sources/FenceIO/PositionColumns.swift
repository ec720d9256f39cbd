/// Which input column or JSON key carries which field of a position, by name and alias.
///
/// Names are matched without case and without separators (space, `_`, `-`, `.`, `/`), so AIS
/// (`MMSI`, `BaseDateTime`, `LON`, `LAT`), Traccar (`deviceId`, `fixTime`), spreadsheet
/// exports (`Device ID`, `Date/Time`) and camel-case JSON keys (`vehicleId`) load as they
/// are. When an input has more than one name of a field, the earliest in `names` wins
/// wherever its column stands: the canonical name first, the most generic aliases (`id`, `x`,
/// `y`, `t`: a row number or a projected coordinate in many files) last. Before, the leftmost
/// column won, so `id,device,...` read the row number as the device.
public enum PositionField: Int, CaseIterable, Sendable {
    case device, time, lon, lat, accuracy, coord

    /// Accepted names as they are matched (lowercase, no separators), in order of preference:
    /// the canonical one first. A time column is the fix's time: Traccar's `fixTime` before its
    /// `deviceTime`, and never `serverTime` (when the server received it).
    public var names: [String] { Self.namesByField[rawValue] }

    /// `names` of each field, by `rawValue`: made once (a `switch` of array literals made six
    /// arrays for every key an NDJSON line holds).
    private static let namesByField: [[String]] = [
        ["device", "deviceid", "vehicleid", "objectid", "mmsi", "imei", "id"],
        ["time", "timestamp", "ts", "basedatetime", "datetime", "fixtime", "devicetime", "gpstime", "t"],
        ["lon", "lng", "longitude", "long", "x"],
        ["lat", "latitude", "y"],
        ["accuracy", "acc", "horizontalaccuracy", "hacc"],
        ["coord", "coordtype", "crs"],
    ]

    /// The field a column name stands for, or nil.
    public static func field(named raw: some StringProtocol) -> PositionField? {
        match(raw)?.field
    }

    /// The field a column name stands for and the name's rank in `names` (0: canonical), or nil.
    /// An ASCII name is matched from its bytes (`match(ascii:)`); any other is lowercased as
    /// Unicode first (`normalized`), which may make it ASCII (the Kelvin sign is a k).
    static func match(_ raw: some StringProtocol) -> (field: PositionField, rank: Int)? {
        var name = String(raw)
        if let found = name.withUTF8({ match(ascii: $0) }) { return found }
        var lowered = normalized(name)
        return lowered.withUTF8 { match(ascii: $0) } ?? nil
    }

    /// `match` of a name's UTF-8 bytes, without making a string: nil when they are not all
    /// ASCII (the caller then matches the decoded text, which `lowercased` may change
    /// otherwise), else the match or `.some(nil)`.
    /// - Complexity: O(bytes + names), no allocation.
    static func match(ascii raw: UnsafeBufferPointer<UInt8>) -> (field: PositionField, rank: Int)?? {
        // The normalized name, packed 8 bytes to a word (longer than any name: no match).
        // Through the base pointer, one word at a time: the byte loop's switch and range
        // checks were most of an NDJSON key's match (about 340 instructions a key).
        var words: (UInt64, UInt64, UInt64) = (0, 0, 0)
        var word: UInt64 = 0
        var n = 0
        if let p = raw.baseAddress {
            for k in 0..<raw.count {
                let b = p[k]
                if b >= 0x80 { return nil }
                // A NUL (from a `\u0000` escape) would pack as the padding after a name:
                // `lon\u0000` read as `lon`. A key holding one names no field (below: a byte
                // past ASCII after it still sends the key to the decoded match).
                if b == 0 { n = 24 }
                if isSeparator(b) || n >= 24 { continue }
                word |= UInt64(b &- 65 < 26 ? b | 0x20 : b) &<< (8 &* UInt64(n & 7))
                n &+= 1
                if n & 7 == 0 {
                    if n == 8 { words.0 = word } else if n == 16 { words.1 = word } else { words.2 = word }
                    word = 0
                }
            }
        }
        if n >= 24 { return .some(nil) }
        if n < 8 { words.0 = word } else if n < 16 { words.1 = word } else { words.2 = word }
        for entry in packedNames where entry.words == words { return .some((entry.field, entry.rank)) }
        return .some(nil)
    }

    /// Every name packed as `match(ascii:)` packs a key, with its field and rank: the
    /// canonical names first (the keys most lines hold), then the aliases. No two names are
    /// alike, so the order of the search changes no match.
    private static let packedNames: [(words: (UInt64, UInt64, UInt64), field: PositionField, rank: Int)] = {
        var out: [(words: (UInt64, UInt64, UInt64), field: PositionField, rank: Int)] = []
        for (k, names) in namesByField.enumerated() {
            for (rank, name) in names.enumerated() {
                var w: [UInt64] = [0, 0, 0]
                for (n, b) in name.utf8.enumerated() { w[n / 8] |= UInt64(b) << (8 * UInt64(n % 8)) }
                out.append(((w[0], w[1], w[2]), PositionField(rawValue: k)!, rank))
            }
        }
        return out.filter { $0.rank == 0 } + out.filter { $0.rank > 0 }
    }()

    /// The separators a name's words may have between them: space, `_`, `-`, `.`, `/`.
    @inline(__always)
    static func isSeparator(_ b: UInt8) -> Bool { b == 32 || b == 95 || b == 45 || b == 46 || b == 47 }

    /// A name as `names` are written: lowercased (as `String.lowercased` does), without
    /// separators (`isSeparator`).
    /// - Complexity: O(bytes), two allocations.
    static func normalized(_ raw: some StringProtocol) -> String {
        String(String.UnicodeScalarView(raw.lowercased().unicodeScalars.filter { !($0.isASCII && isSeparator(UInt8($0.value))) }))
    }
}
