import FenceEngine
import Foundation

/// Why input bytes cannot be taken as the text of an id or a value.
///
/// Ids are their UTF-8 bytes (README "CLI"), so bytes that are not UTF-8, or a JSON `\u`
/// escape of half a surrogate pair, are refused with their line or feature. Repairing them to
/// U+FFFD (`String(decoding:as:)`) made distinct ids one: three Latin-1 device ids merged into
/// one device, and its fixes were dropped as duplicates.
enum TextProblem: Error, Hashable {
    /// The bytes are not well-formed UTF-8.
    case notUTF8
    /// A `\uD800`-`\uDFFF` escape that is not half of a high-low pair (the code unit).
    case loneSurrogate(UInt32)

    /// The end of a sentence naming the value: `device id` + `is not valid UTF-8`.
    var reason: String {
        switch self {
        case .notUTF8: return "is not valid UTF-8"
        case .loneSurrogate(let unit):
            let hex = String(unit, radix: 16)
            return "holds a lone surrogate escape \\u\(String(repeating: "0", count: max(0, 4 - hex.count)) + hex)"
        }
    }

    /// Why text starting with a UTF-16 byte-order mark (FF FE or FE FF: Windows PowerShell's
    /// `>`, Excel's "Unicode Text") cannot be read, with the command that converts it, or nil
    /// without one. `reads` says what is UTF-8: `positions are`, `GeoJSON is`.
    static func utf16(_ bytes: UnsafeBufferPointer<UInt8>, reads: String) -> String? {
        guard bytes.count >= 2, (bytes[0] == 0xFF && bytes[1] == 0xFE) || (bytes[0] == 0xFE && bytes[1] == 0xFF) else { return nil }
        return "UTF-16 text (a byte-order mark \(bytes[0] == 0xFF ? "FF FE" : "FE FF")): \(reads) UTF-8; convert it, e.g. iconv -f UTF-16 -t UTF-8 FILE"
    }

    static func isHighSurrogate(_ v: UInt32) -> Bool { v >= 0xD800 && v <= 0xDBFF }
    static func isLowSurrogate(_ v: UInt32) -> Bool { v >= 0xDC00 && v <= 0xDFFF }
}

extension String {
    /// The text of `bytes` when they are well-formed UTF-8, else `TextProblem.notUTF8`; never
    /// repaired (`String.validUTF8`, whose fast path for ASCII keeps the check cheap).
    /// - Complexity: O(count).
    @inline(__always)
    static func validating(_ bytes: UnsafeBufferPointer<UInt8>) -> Result<String, TextProblem> {
        guard let s = validUTF8(bytes) else { return .failure(.notUTF8) }
        return .success(s)
    }
}
