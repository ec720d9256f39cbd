import SpatialIndex

/// Orders positions along a Morton (Z-order) curve so that neighbours in the order are
/// neighbours on the map: a batch queried in this order reuses index nodes and fence records
/// from cache instead of fetching them from memory for every position.
enum SpatialOrder {
    /// The permutation that sorts `positions` by Morton key (16 bits of longitude and latitude
    /// each, about 600 m by 300 m cells), stable for equal keys. NaN and out-of-range values
    /// get key 0.
    ///
    /// Each position becomes one word, key above index, sorted a byte of key at a time (least
    /// significant first, so stable) with the passes on `threads` workers: each worker counts
    /// and then moves its own contiguous part, to places the counts of all parts give it. Key
    /// bytes that are the same for the whole batch (a fleet's area shares the high ones) cost
    /// no pass. A stable sort has one result, so the thread count cannot change it.
    /// - Complexity: O(m) per key byte that varies, at most 4 passes, spread over the workers.
    static func permutation(_ positions: UnsafeBufferPointer<LonLat>, threads: Int = 1) -> ContiguousArray<UInt32> {
        let m = positions.count
        if m < 2 { return ContiguousArray(0..<UInt32(m)) }
        let parts = m >= 65_536 ? max(1, threads) : 1
        let partSize = (m + parts - 1) / max(1, parts)
        // Every element is written before it is read: the fill pass writes all of `words`, and
        // each pass writes all of its target.
        var words = ContiguousArray<UInt64>(uninitializedCount: m)
        var spare = ContiguousArray<UInt64>(uninitializedCount: m)
        // counts[(part * 4 + byte) * 256 + value]: the fill pass counts all four bytes per part.
        var counts = [Int](repeating: 0, count: parts * 4 * 256)
        words.withUnsafeMutableBufferPointer { wordBuffer in
            counts.withUnsafeMutableBufferPointer { countBuffer in
                nonisolated(unsafe) let words = wordBuffer
                nonisolated(unsafe) let counts = countBuffer
                Parallel.forEachChunk(count: m, chunkSize: partSize, threads: parts, makeState: { () }) { _, part, range in
                    let c = counts.baseAddress! + part * 1024
                    for i in range {
                        let k = key(positions[i])
                        words[i] = UInt64(k) << 32 | UInt64(i)
                        c[Int(k & 0xFF)] &+= 1
                        c[256 + Int((k >> 8) & 0xFF)] &+= 1
                        c[512 + Int((k >> 16) & 0xFF)] &+= 1
                        c[768 + Int(k >> 24)] &+= 1
                    }
                }
            }
        }
        for byte in 0..<4 {
            // Every key has the same value in this byte: nothing would move.
            let shift = UInt64(32 + 8 * byte)
            let first = Int((words[0] >> shift) & 0xFF)
            if (0..<parts).reduce(0, { $0 + counts[($1 * 4 + byte) * 256 + first] }) == m { continue }
            words.withUnsafeBufferPointer { sourceBuffer in
                spare.withUnsafeMutableBufferPointer { targetBuffer in
                    nonisolated(unsafe) let source = sourceBuffer
                    nonisolated(unsafe) let target = targetBuffer
                    // Part p's count of value v in this byte, over the current order.
                    var local = [Int](repeating: 0, count: parts * 256)
                    if parts == 1 {
                        for v in 0..<256 { local[v] = counts[byte * 256 + v] }
                    } else {
                        local.withUnsafeMutableBufferPointer { localBuffer in
                            nonisolated(unsafe) let local = localBuffer
                            Parallel.forEachChunk(count: m, chunkSize: partSize, threads: parts, makeState: { () }) { _, part, range in
                                let c = local.baseAddress! + part * 256
                                for i in range { c[Int((source[i] >> shift) & 0xFF)] &+= 1 }
                            }
                        }
                    }
                    // Where each part's run of each value starts: values in order, parts in
                    // order within a value (which keeps the sort stable).
                    var offset = 0
                    for v in 0..<256 {
                        for part in 0..<parts {
                            let n = local[part * 256 + v]
                            local[part * 256 + v] = offset
                            offset += n
                        }
                    }
                    local.withUnsafeMutableBufferPointer { localBuffer in
                        nonisolated(unsafe) let local = localBuffer
                        Parallel.forEachChunk(count: m, chunkSize: partSize, threads: parts, makeState: { () }) { _, part, range in
                            let next = local.baseAddress! + part * 256
                            for i in range {
                                let w = source[i]
                                let v = Int((w >> shift) & 0xFF)
                                target[next[v]] = w
                                next[v] &+= 1
                            }
                        }
                    }
                }
            }
            swap(&words, &spare)
        }
        return ContiguousArray<UInt32>(unsafeUninitializedCapacity: m) { order, initialized in
            nonisolated(unsafe) let order = order
            words.withUnsafeBufferPointer { words in
                Parallel.forEachChunk(count: m, chunkSize: 65_536, threads: threads, makeState: { () }) { _, _, range in
                    for k in range { order[k] = UInt32(truncatingIfNeeded: words[k]) }
                }
            }
            initialized = m
        }
    }

    /// The Morton permutation and the positions gathered in that order. Gathered once in tight
    /// loops, where the loads overlap; fetched one by one inside a query loop, each would be a
    /// cache miss on the critical path.
    /// - Complexity: O(m), the gather on `threads` workers.
    static func sorted(_ positions: UnsafeBufferPointer<LonLat>, threads: Int) -> (order: ContiguousArray<UInt32>, sorted: ContiguousArray<LonLat>) {
        let m = positions.count
        let order = permutation(positions, threads: threads)
        // Every element is written by the gather.
        var sorted = ContiguousArray<LonLat>(uninitializedCount: m)
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

    /// The Morton key of a box's centre: where a fence goes in the store's spatial order.
    @inline(__always)
    static func key(centreOf box: Box) -> UInt32 {
        key(LonLat(lon: (box.minX + box.maxX) / 2, lat: (box.minY + box.maxY) / 2))
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
