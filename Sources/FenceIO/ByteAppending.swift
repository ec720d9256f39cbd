extension Array where Element == UInt8 {
    /// Appends a string's UTF-8 in one copy (a native string's bytes, literals' included, are
    /// contiguous already; another is made so first). `append(contentsOf: "...".utf8)` walks
    /// the string through the generic sequence path instead: about 170 instructions for a
    /// short literal, paid several times for every output row.
    @inline(__always)
    public mutating func appendUTF8(_ string: String) {
        var s = string
        s.withUTF8 { append(contentsOf: $0) }
    }
}

extension Array where Element == UInt8 {
    /// Appends `v.description`'s UTF-8 (Swift's shortest text that reads back as `v`:
    /// `11.697384`, `47.0`) without making the string, for the coordinates every event
    /// writes. A value of at least 0.001 and under 10^7 that some decimal of at most 8
    /// fraction digits reads back as is written from that decimal; any other goes through
    /// `description`.
    ///
    /// Why the bytes are the same: for each count k of fraction digits from 0 up, the only
    /// candidate is the multiple of 10^-k nearest to |v| (`(|v| * 10^k).rounded()`, an
    /// integer m under 10^15, so exact), and it reads back as `v` when m / 10^k, one correctly
    /// rounded division of two exact doubles, is |v|. With at most 15 significant digits
    /// the multiples of 10^-k are more than 4 units in the last place of |v| apart: at most
    /// one reads back, and the product's rounding cannot pick a neighbour of the nearest one
    /// that reads back (a neighbour is half a step off, far outside half a unit). So the
    /// first k that reads back is the shortest decimal, the one `description` writes, in the
    /// plain notation it uses in this range (`CoordinateTextTests` holds both to it).
    /// - Complexity: at most 9 multiplies and divides, then one copy of at most 18 bytes.
    public mutating func appendDescription(of v: Double) {
        let a = Swift.abs(v)
        if a >= 1e-3 && a < 1e7 {
            var scale = 1.0
            var k = 0
            while k <= 8 {
                let m = (a * scale).rounded()
                if m / scale == a {
                    appendDecimal(UInt64(m), fractionDigits: k, negative: v < 0)
                    return
                }
                scale *= 10
                k += 1
            }
        }
        appendUTF8(v.description)
    }

    /// Appends `m` / 10^`fractionDigits` in plain notation, at least one fraction digit
    /// (`47.0`), with a minus sign when `negative`. `m` has at most 15 digits.
    private mutating func appendDecimal(_ m: UInt64, fractionDigits k: Int, negative: Bool) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { b in
            // Written from the end: the fraction (or a 0), the point, the integer part.
            var at = 24
            var rest = m
            if k == 0 {
                at -= 1
                b[at] = 48
            } else {
                for _ in 0..<k {
                    at -= 1
                    b[at] = UInt8(truncatingIfNeeded: 48 &+ rest % 10)
                    rest /= 10
                }
            }
            at -= 1
            b[at] = 46
            repeat {
                at -= 1
                b[at] = UInt8(truncatingIfNeeded: 48 &+ rest % 10)
                rest /= 10
            } while rest > 0
            if negative {
                at -= 1
                b[at] = 45
            }
            append(contentsOf: UnsafeBufferPointer(rebasing: b[at..<24]))
        }
    }
}
