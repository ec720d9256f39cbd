/// Where a GeoJSON `features` array can be cut into parts that parse on their own, so that a
/// large document's features are read on every core (`GeoJSONDocument.readFeatures`).
///
/// One pass over the bytes that follows only strings (a quote, and a backslash skipping the
/// byte after it) and brackets; no token is checked. A cut is a comma between two elements of
/// the array: the first such comma a share of the bytes (1/count of those from the array's
/// start to the document's end) past the previous cut, at most `count - 1` cuts. Each part
/// starts where the serial reader would be after that comma, and the number of elements
/// before it gives the part's first feature number.
///
/// The cuts are a guess that the strict parse confirms: a part must parse as elements
/// separated by commas and end exactly at its cut. On malformed input (a bracket of the wrong
/// kind, a stray comma) a guessed cut can be wrong; the parse of the earliest part touching it
/// then fails, and the caller reads the array serially, which reports the error as it always
/// did. On valid JSON the cuts are exactly the array's element boundaries.
struct FeatureSplit {
    /// Elements `firstNumber...` of the array, from `start` (just after `[` or a cut's comma)
    /// to `end` (the next cut's comma, or the array's closing `]`).
    struct Part {
        var start: Int
        var end: Int
        var firstNumber: Int
    }

    var parts: [Part]
    /// Offset of the array's closing `]`.
    var close: Int

    /// The parts (at most `count`) of the array whose first element is at or after `start`
    /// (just past its `[`), each cut a share of the bytes from `start` to the end of the
    /// document past the one before. Nil when the bytes never close the array (a string or
    /// bracket left open, or a `}` closing it): the serial reader reports that.
    /// - Complexity: O(bytes to the array's end), a few instructions a byte; no allocation but
    ///   the parts.
    static func split(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, count: Int) -> FeatureSplit? {
        let n = bytes.count
        guard let base = bytes.baseAddress, start < n else { return nil }
        let share = max(1, (n - start) / max(1, count))
        var parts: [Part] = []
        parts.reserveCapacity(count)
        var partStart = start
        var partFirst = 1
        var nextCut = start + share
        var commas = 0
        var depth = 0
        var i = start
        while i < n {
            // Byte k of the word is byte i + k of the document.
            let word = i &+ 8 <= n ? UInt64(littleEndian: UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)) : tail(from: i, of: bytes)
            let kinds = Kinds(word)
            var resume = i &+ 8
            // Deep inside an element with no string starting: only the depth changes here.
            let closes = kinds.closes.nonzeroBitCount
            if kinds.quotes == 0 && depth > closes {
                depth &+= kinds.opens.nonzeroBitCount &- closes
                i = resume
                continue
            }
            // Else each quote, comma and bracket in turn (the top bit of its byte).
            var mask = kinds.quotes | kinds.commas | kinds.opens | kinds.closes
            while mask != 0 {
                let j = i &+ mask.trailingZeroBitCount >> 3
                mask &= mask &- 1
                let c = bytes[j]
                if c == 34 {  // a string: to its closing quote, a backslash taking the byte after it
                    var k = j &+ 1
                    while k < n {
                        let d = bytes[k]
                        if d == 34 { break }
                        k &+= d == 92 ? 2 : 1
                    }
                    if k >= n { return nil }
                    resume = k &+ 1
                    break
                }
                // Brackets without a branch on which kind: `[ {` open, `] }` close.
                let folded = c | 0x20
                depth &+= (folded == 123 ? 1 : 0) &- (folded == 125 ? 1 : 0)
                guard depth <= 0 else { continue }
                if depth < 0 {  // the array's end
                    guard c == 93 else { return nil }
                    parts.append(Part(start: partStart, end: j, firstNumber: partFirst))
                    return FeatureSplit(parts: parts, close: j)
                }
                guard c == 44 else { continue }  // an element's closing bracket
                commas += 1
                if j >= nextCut && parts.count < count - 1 {
                    parts.append(Part(start: partStart, end: j, firstNumber: partFirst))
                    partStart = j + 1
                    partFirst = commas + 1
                    nextCut = j + share
                }
            }
            i = resume
        }
        return nil
    }

    /// The quotes, commas, opening and closing brackets of 8 bytes, each kind as the top bit of
    /// each byte that is one, every other bit clear. A few integer operations for all eight: a
    /// byte is zero exactly when adding 0x7F to its low seven bits leaves its top bit clear and
    /// it had none (exact for every byte, unlike the borrow trick, which marks bytes above a
    /// zero too). Swift's `SIMD32<UInt8>` compares compile lane by lane, through memory: 50
    /// times slower than this.
    struct Kinds {
        var quotes: UInt64
        var commas: UInt64
        var opens: UInt64
        var closes: UInt64

        @inline(__always)
        init(_ word: UInt64) {
            let low7: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
            @inline(__always) func zeros(_ t: UInt64) -> UInt64 { ~(((t & low7) &+ low7) | t) & ~low7 }
            // `[` and `]` are `{` and `}` with bit 5 clear; no other byte folds onto those two.
            let folded = word | 0x2020_2020_2020_2020
            quotes = zeros(word ^ 0x2222_2222_2222_2222)
            commas = zeros(word ^ 0x2C2C_2C2C_2C2C_2C2C)
            opens = zeros(folded ^ 0x7B7B_7B7B_7B7B_7B7B)
            closes = zeros(folded ^ 0x7D7D_7D7D_7D7D_7D7D)
        }
    }

    /// The last bytes of the document (fewer than 8 from `at`) as a word, zeros after them.
    static func tail(from at: Int, of bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var word: UInt64 = 0
        for k in 0..<(bytes.count - at) { word |= UInt64(bytes[at + k]) << (8 * UInt64(k)) }
        return word
    }
}
