import FenceEngine

/// Event records as NDJSON (default) or CSV, as bytes. Ids and groups are escaped for each
/// format; a CSV cell that a spreadsheet would run as a formula is defused.
public struct EventWriter {
    public enum Format: String, Sendable { case ndjson, csv }
    public let format: Format

    public init(format: Format) { self.format = format }

    /// The CSV header line (empty for NDJSON).
    public var header: [UInt8] {
        format == .csv ? Array("time,device,fence,group,event,lon,lat,initial,reason,inside_s\n".utf8) : []
    }

    /// Appends one record and its line break.
    public func append(_ e: FenceEvent, to out: inout [UInt8]) {
        switch format {
        case .ndjson:
            out.append(contentsOf: Array("{\"time\":\"".utf8))
            ISO8601.append(e.time, to: &out)
            out.append(contentsOf: Array("\",\"device\":".utf8))
            OutputEscaping.appendJSONString(e.device, to: &out)
            out.append(contentsOf: Array(",\"fence\":".utf8))
            OutputEscaping.appendJSONString(e.fence, to: &out)
            if let g = e.group {
                out.append(contentsOf: Array(",\"group\":".utf8))
                OutputEscaping.appendJSONString(g, to: &out)
            }
            out.append(contentsOf: Array(",\"event\":\"\(e.kind)\",\"lon\":\(e.lon),\"lat\":\(e.lat)".utf8))
            if e.initial { out.append(contentsOf: Array(",\"initial\":true".utf8)) }
            if let r = e.reason { out.append(contentsOf: Array(",\"reason\":\"\(r.rawValue)\"".utf8)) }
            if let s = e.insideSeconds { out.append(contentsOf: Array(",\"inside_s\":\(Self.seconds(s))".utf8)) }
            out.append(contentsOf: Array("}\n".utf8))
        case .csv:
            ISO8601.append(e.time, to: &out)
            out.append(44)
            out.append(contentsOf: Array(OutputEscaping.csvField(e.device).utf8))
            out.append(44)
            out.append(contentsOf: Array(OutputEscaping.csvField(e.fence).utf8))
            out.append(44)
            out.append(contentsOf: Array(OutputEscaping.csvField(e.group ?? "").utf8))
            out.append(contentsOf: Array(",\(e.kind),\(e.lon),\(e.lat),\(e.initial ? "true" : ""),\(e.reason?.rawValue ?? ""),".utf8))
            if let s = e.insideSeconds { out.append(contentsOf: Array(Self.seconds(s).utf8)) }
            out.append(10)
        }
    }

    /// Seconds to the millisecond, shortest form (`690`, `12.5`).
    static func seconds(_ s: Double) -> String {
        let ms = (s * 1000).rounded() / 1000
        return ms == ms.rounded() && abs(ms) < 1e15 ? String(Int64(ms)) : "\(ms)"
    }
}
