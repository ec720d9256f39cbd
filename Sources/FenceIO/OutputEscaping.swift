import Foundation

/// Writing text into CSV and JSON output safely: input is data, never markup or formulas.
public enum OutputEscaping {
    /// A CSV field (RFC 4180): quoted when it holds a delimiter, quote or line break; a field
    /// starting with `=`, `+`, `-` or `@` gets a leading `'` inside quotes so a spreadsheet
    /// shows it instead of running it.
    public static func csvField(_ s: String) -> String {
        var needsQuotes = false
        var formula = false
        if let first = s.utf8.first, first == 61 || first == 43 || first == 45 || first == 64 {
            // A plain negative number is data, not a formula.
            formula = Double(s) == nil
        }
        for b in s.utf8 where b == 44 || b == 34 || b == 10 || b == 13 {
            needsQuotes = true
            break
        }
        if !needsQuotes && !formula { return s }
        let body = (formula ? "'" : "") + s.replacingOccurrences(of: "\"", with: "\"\"")
        return "\"\(body)\""
    }

    /// A JSON string literal, with quotes, escaping `"`, `\` and control characters.
    public static func jsonString(_ s: String) -> String {
        var out = [UInt8]()
        out.reserveCapacity(s.utf8.count + 2)
        appendJSONString(s, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends a JSON string literal to a byte buffer.
    public static func appendJSONString(_ s: String, to out: inout [UInt8]) {
        out.append(34)
        for b in s.utf8 {
            switch b {
            case 34: out.append(contentsOf: [92, 34])
            case 92: out.append(contentsOf: [92, 92])
            case 10: out.append(contentsOf: [92, 110])
            case 13: out.append(contentsOf: [92, 114])
            case 9: out.append(contentsOf: [92, 116])
            case 0..<32:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: [92, 117, 48, 48, hex[Int(b >> 4)], hex[Int(b & 15)]])
            default: out.append(b)
            }
        }
        out.append(34)
    }
}
