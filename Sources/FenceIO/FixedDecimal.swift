import Foundation

/// Numbers with a fixed count of decimals (`%.2f`), appended to output bytes by the C
/// library's `vsnprintf` into a stack buffer: the text `String(format:)` gives, without its
/// Foundation string and locale machinery (a fifth of `fence nearest`'s time went there). The
/// C library formats in the process's C locale (`fence` never calls `setlocale`); a host app
/// that sets `LC_NUMERIC` gets its decimal separator.
public enum FixedDecimal {
    /// Appends `value` with `digits` decimals (0...9), as `printf("%.*f")` writes it: correctly
    /// rounded, `nan`, `inf` and `-inf` as the C library spells them; except that a value
    /// that rounds to zero has no sign (`0.00`, where printf writes `-0.00` for -0.001: a
    /// distance on a boundary read as "inside by nothing", a user audit).
    /// - Complexity: O(1) for values below 1e40; a longer buffer for larger ones.
    public static func append(_ value: Double, digits: Int, to out: inout [UInt8]) {
        precondition((0...9).contains(digits), "FixedDecimal digits must be 0...9")
        // Digits before the point, sign, point and decimals: 320 covers every finite Double.
        let capacity = abs(value) < 1e40 ? 64 : 400
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: capacity) { buffer in
            let n = withVaList([Int32(digits), value]) { vsnprintf(buffer.baseAddress!, capacity, "%.*f", $0) }
            guard n > 0 else { return }
            let written = min(Int(n), capacity - 1)
            buffer.baseAddress!.withMemoryRebound(to: UInt8.self, capacity: written) {
                var text = UnsafeBufferPointer(start: $0, count: written)
                if text.first == 45, text.dropFirst().allSatisfy({ $0 == 48 || $0 == 46 }) { text = UnsafeBufferPointer(rebasing: text.dropFirst()) }
                out.append(contentsOf: text)
            }
        }
    }
}
