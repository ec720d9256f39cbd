/// Orders positions along a Morton (Z-order) curve so that neighbours in the order are
/// neighbours on the map: a batch queried in this order reuses index nodes and fence records
/// from cache instead of fetching them from memory for every position.
enum SpatialOrder {
    /// The permutation that sorts `positions` by Morton key (16 bits of longitude and latitude
    /// each, about 600 m by 300 m cells), stable for equal keys. NaN and out-of-range values
    /// get key 0.
    /// - Complexity: O(m): keys on `threads` workers, then two 16-bit radix passes.
    static func permutation(_ positions: UnsafeBufferPointer<LonLat>, threads: Int = 1) -> ContiguousArray<UInt32> {
        let m = positions.count
        var keys = ContiguousArray<UInt32>(repeating: 0, count: m)
        keys.withUnsafeMutableBufferPointer { buffer in
            nonisolated(unsafe) let keys = buffer
            Parallel.forEachChunk(count: m, chunkSize: 65_536, threads: threads, makeState: { () }) { _, _, range in
                for i in range { keys[i] = key(positions[i]) }
            }
        }
        var order = ContiguousArray<UInt32>((0..<UInt32(m)))
        var scratch = ContiguousArray<UInt32>(repeating: 0, count: m)
        for shift: UInt32 in [0, 16] {
            var counts = [Int](repeating: 0, count: 65537)
            for i in order { counts[Int((keys[Int(i)] >> shift) & 0xFFFF) + 1] += 1 }
            for b in 1..<counts.count { counts[b] += counts[b - 1] }
            for i in order {
                let bucket = Int((keys[Int(i)] >> shift) & 0xFFFF)
                scratch[counts[bucket]] = i
                counts[bucket] += 1
            }
            swap(&order, &scratch)
        }
        return order
    }

    /// The Morton permutation and the positions gathered in that order. Gathered once in tight
    /// loops, where the loads overlap; fetched one by one inside a query loop, each would be a
    /// cache miss on the critical path.
    /// - Complexity: O(m), the gather on `threads` workers.
    static func sorted(_ positions: UnsafeBufferPointer<LonLat>, threads: Int) -> (order: ContiguousArray<UInt32>, sorted: ContiguousArray<LonLat>) {
        let m = positions.count
        let order = permutation(positions, threads: threads)
        var sorted = ContiguousArray<LonLat>(repeating: LonLat(lon: 0, lat: 0), count: m)
        sorted.withUnsafeMutableBufferPointer { buffer in
            nonisolated(unsafe) let sorted = buffer
            Parallel.forEachChunk(count: m, chunkSize: 65_536, threads: threads, makeState: { () }) { _, _, range in
                for k in range { sorted[k] = positions[Int(order[k])] }
            }
        }
        return (order, sorted)
    }

    /// The Morton key of a position.
    @inline(__always)
    static func key(_ p: LonLat) -> UInt32 {
        spread(quantize((p.lon + 180) / 360)) | (spread(quantize((p.lat + 90) / 180)) << 1)
    }

    @inline(__always)
    static func quantize(_ unit: Double) -> UInt32 {
        guard unit >= 0 else { return 0 }  // also NaN
        return unit >= 1 ? 0xFFFF : UInt32(unit * 65536)
    }

    /// Spreads 16 bits to the even bit positions of 32.
    @inline(__always)
    static func spread(_ v: UInt32) -> UInt32 {
        var x = v & 0xFFFF
        x = (x | (x << 8)) & 0x00FF_00FF
        x = (x | (x << 4)) & 0x0F0F_0F0F
        x = (x | (x << 2)) & 0x3333_3333
        x = (x | (x << 1)) & 0x5555_5555
        return x
    }
}
