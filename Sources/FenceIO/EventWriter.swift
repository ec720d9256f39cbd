import FenceEngine
import Foundation

/// Event records as NDJSON (default) or CSV, as bytes. Ids and groups are escaped for each
/// format; a CSV cell that a spreadsheet would run as a formula is defused.
public struct EventWriter {
    public enum Format: String, Sendable { case ndjson, csv }
    public let format: Format
    /// Fence properties carried into each event (`--properties`), in this order.
    public let propertyNames: [String]
    /// Per fence id, the chosen properties as each record writes them (nil where a fence
    /// lacks one): for NDJSON the raw JSON values, for CSV the cells (`plainText`, escaped),
    /// made once here rather than once an event.
    let properties: IDTable<[String?]>

    /// - Parameters:
    ///   - propertyNames: names of fence properties to carry into events; a name given twice
    ///     is carried once (a JSON object with a key twice is one most readers misread).
    ///   - fences: the fences whose properties to carry, read once (so events of fences that
    ///     expire or are removed still carry them). Of fences sharing an id, the first's: the
    ///     one a store keeps (`EventEngine.add` refuses a repeat within one batch as
    ///     `duplicate-id`), whose properties the events of that id must carry.
    public init(format: Format, propertyNames: [String] = [], fences: [Fence] = []) {
        self.format = format
        var seen = Set<String>()
        let propertyNames = propertyNames.filter { seen.insert($0).inserted }
        self.propertyNames = propertyNames
        var table = IDTable<[String?]>()
        if !propertyNames.isEmpty {
            // Raw JSON from the fence file: U+2028 / U+2029 escaped as in every other string.
            for f in fences where table[f.id] == nil {
                let raw = propertyNames.map { f.properties[$0].map(OutputEscaping.escapingLineSeparators) }
                table[f.id] = format == .csv ? raw.map { $0.map { OutputEscaping.csvField(Self.plainText($0)) } } : raw
            }
        }
        properties = table
    }

    /// The event's own CSV columns, before the properties'.
    static let csvColumns = ["time", "device", "fence", "group", "event", "lon", "lat", "initial", "reason", "inside_s"]

    /// The CSV header line (empty for NDJSON). A property named as one of the event's own
    /// columns, or as a header name before it (any case: `time`, `Event`), is headed
    /// `properties.NAME` (again, until the name is new), as NDJSON nests it in `properties`,
    /// so that no header name appears twice.
    public var header: [UInt8] {
        guard format == .csv else { return [] }
        var used = Set(Self.csvColumns)
        var extra = ""
        for name in propertyNames {
            var heading = name
            while used.contains(heading.lowercased()) { heading = "properties." + heading }
            used.insert(heading.lowercased())
            extra += "," + OutputEscaping.csvField(heading)
        }
        return Array((Self.csvColumns.joined(separator: ",") + extra + "\n").utf8)
    }

    /// Appends one record and its line break.
    public func append(_ e: FenceEvent, to out: inout [UInt8]) {
        switch format {
        case .ndjson:
            out.appendUTF8("{\"time\":\"")
            ISO8601.append(e.time, to: &out)
            out.appendUTF8("\",\"device\":")
            OutputEscaping.appendJSONString(e.device, to: &out)
            out.appendUTF8(",\"fence\":")
            OutputEscaping.appendJSONString(e.fence, to: &out)
            if let g = e.group {
                out.appendUTF8(",\"group\":")
                OutputEscaping.appendJSONString(g, to: &out)
            }
            // Piece by piece: one interpolated string made and grown a heap string per event.
            out.appendUTF8(",\"event\":\"")
            out.appendUTF8(e.kind.description)
            out.appendUTF8("\",\"lon\":")
            out.appendDescription(of: e.lon)
            out.appendUTF8(",\"lat\":")
            out.appendDescription(of: e.lat)
            if e.initial { out.appendUTF8(",\"initial\":true") }
            if let r = e.reason {
                out.appendUTF8(",\"reason\":\"")
                out.appendUTF8(r.rawValue)
                out.append(34)
            }
            if let s = e.insideSeconds {
                out.appendUTF8(",\"inside_s\":")
                out.appendUTF8(Self.seconds(s))
            }
            if !propertyNames.isEmpty {
                out.appendUTF8(",\"properties\":{")
                let values = properties[e.fence] ?? []
                var first = true
                for (k, name) in propertyNames.enumerated() {
                    guard k < values.count, let raw = values[k] else { continue }
                    if !first { out.append(44) }
                    first = false
                    OutputEscaping.appendJSONString(name, to: &out)
                    out.append(58)
                    out.append(contentsOf: raw.utf8)  // already JSON, from the fence file
                }
                out.append(125)
            }
            out.appendUTF8("}\n")
        case .csv:
            ISO8601.append(e.time, to: &out)
            out.append(44)
            OutputEscaping.appendCSVField(e.device, to: &out)
            out.append(44)
            OutputEscaping.appendCSVField(e.fence, to: &out)
            out.append(44)
            if let g = e.group { OutputEscaping.appendCSVField(g, to: &out) }
            out.append(44)
            out.appendUTF8(e.kind.description)
            out.append(44)
            out.appendDescription(of: e.lon)
            out.append(44)
            out.appendDescription(of: e.lat)
            out.append(44)
            if e.initial { out.appendUTF8("true") }
            out.append(44)
            if let r = e.reason { out.appendUTF8(r.rawValue) }
            out.append(44)
            if let s = e.insideSeconds { out.appendUTF8(Self.seconds(s)) }
            if !propertyNames.isEmpty {
                let values = properties[e.fence] ?? []
                for k in propertyNames.indices {
                    out.append(44)
                    if k < values.count, let cell = values[k] { out.append(contentsOf: cell.utf8) }
                }
            }
            out.append(10)
        }
    }

    /// A raw JSON value as a CSV cell shows it: strings without their quotes and escapes,
    /// anything else as written.
    static func plainText(_ raw: String) -> String {
        guard raw.hasPrefix("\""),
            let value = try? JSONSerialization.jsonObject(with: Data(raw.utf8), options: [.fragmentsAllowed]) as? String
        else { return raw }
        return value
    }

    /// Seconds to the millisecond, shortest form (`690`, `12.5`).
    static func seconds(_ s: Double) -> String {
        let ms = (s * 1000).rounded() / 1000
        return ms == ms.rounded() && abs(ms) < 1e15 ? String(Int64(ms)) : "\(ms)"
    }
}
