import CPrefetch
import SpatialIndex

extension FenceStore {
    /// Whether `add` may take `loadFresh`: the store is as made (new, or emptied by
    /// `removeAll`), so every fence takes the next slot and key in spatial order and no id can
    /// be a replacement.
    var isPristine: Bool {
        slotHot.isEmpty && keySlot.isEmpty && freeSlots.isEmpty && freeKeys.isEmpty && liveGeometry + deadGeometry == 0
            && tree.count == 0 && pendingBoxes.isEmpty && slotByID.count == 0
    }

    /// The mean record size, in doubles (8 KB), from which `loadFresh` returns the checked
    /// records' memory to the system while it copies them into the store, every `trimStep`
    /// doubles a worker and once at the end.
    ///
    /// The records take the store's size again and are freed in slot (spatial) order, not in
    /// the order they were allocated, so the heap kept their pages resident beside the
    /// store's new ones. Measured (`fence-bench`, 2 threads, alternated runs, peak resident
    /// size of the process, which also holds the input):
    /// - 100k 1000-vertex polygons (4.9 GB of records): 11.7 GB, 7.3-7.4 s to store and
    ///   index, before; 7.2 GB and 3.0-3.4 s with trimming (the kernel's time 18-23 s -> 8.5 s);
    /// - 200k 256-vertex polygons: 6.3 GB and 1.0-1.2 s before; 4.3 GB and 2.1-2.5 s (each
    ///   trim walks the whole heap; a step four times as large: 5.1 GB and 1.5 s);
    /// - a million 16-vertex fences: 1.62 GB and 0.80-0.88 s before; 1.45 GB and 1.24-1.63 s.
    ///   Small records share pages, and few pages are wholly free until the end: left to
    ///   the heap.
    /// Giving each record's own pages back as it was copied (`madvise`, a system call and a
    /// page-table flush per record) took longer for about the same peak: 1.0 s against
    /// 0.6-0.7 s to store 78k 256-vertex polygons.
    static let trimRecordSize = 1024

    /// Doubles of records a worker frees between two trims (128 MB).
    static let trimStep = 16 << 20

    /// Slots ahead whose checked record, fence and result entries `loadFresh`'s copy asks the
    /// cache for: each is a random read (slots are in spatial order, the arrays in input
    /// order). A million 16-vertex fences, quiet machine, four alternated rounds: the store
    /// phase 437-486 ms against 528-574 without (the records' own memory, one read further,
    /// is not prefetched).
    static let prefetchAhead = 16

    /// `add`'s bulk path into a pristine store (the start-up load of a fence file): the same
    /// store, slot for slot and every element bit for bit, as inserting the fences one by one
    /// in `order` and packing the index, but written on `threads` workers. Only capacities
    /// differ: the arrays hold the good fences exactly, not room for the whole batch.
    ///
    /// The serial path spent most of its time (4.5-5.3 s of 10-11 s for a million 16-vertex
    /// fences from GeoJSON) faulting in the fresh pages of the geometry array one memmove at a
    /// time, freeing the checked records, and hashing every id a second time. Here each slot's
    /// place is known first (a prefix sum over the checked sizes), so workers copy records,
    /// settings and index boxes into place and free the records side by side. The id table is
    /// the duplicate check's table with its values turned from input positions into slots
    /// (`mapValues` keeps the buckets): no id is hashed again, but for the rejected ones.
    ///
    /// - Parameters:
    ///   - normalized: each fence checked (nil where `skip` says); moved out here.
    ///   - sizes: per fence, its record's size in doubles, Morton key and index box count (0
    ///     boxes: rejected).
    ///   - order: input positions in slot order, one per fence (sorted Morton keys over them).
    ///   - firstIndex: every first occurrence of an id, to its input position.
    /// - Complexity: O(n + total geometry). On `threads` workers: the records, hot words,
    ///   settings, expiries and index boxes. On one: the slot order and its prefix sums, the
    ///   record sizes, box counts, keys and index ids, the group and property tables, the id
    ///   table and the index packing (radix sorts, O(n)). Large records' memory goes back to
    ///   the system as they are copied (`trimRecordSize`).
    mutating func loadFresh(
        _ fences: UnsafeBufferPointer<Fence>, normalized: inout [Result<NormalizedFence, FenceError>?],
        sizes: [(doubles: Int, key: UInt32, boxes: Int)], order: ContiguousArray<UInt64>, skip: [Bool],
        firstIndex: [ExactID: Int32], results: inout [FenceAddResult?], threads: Int, clock: inout PhaseTimer
    ) {
        precondition(isPristine, "loadFresh into a store that has held fences")
        // Where everything goes: slots in order, each record's start and first index box.
        var inputOfSlot = ContiguousArray<Int32>()
        var recordStart = ContiguousArray<Int>()
        var firstBox = ContiguousArray<Int32>()
        inputOfSlot.reserveCapacity(fences.count)
        recordStart.reserveCapacity(fences.count + 1)
        firstBox.reserveCapacity(fences.count + 1)
        var slotOfInput = ContiguousArray<Int32>(repeating: -1, count: fences.count)
        var refused: [Int] = []  // checked and rejected: their ids leave the id table
        var doubles = 0
        var boxes = 0
        for packed in order {
            let i = Int(packed & 0xFFFF_FFFF)
            guard !skip[i] else { continue }
            precondition(sizes[i].boxes <= Int(UInt8.max), "a fence with \(sizes[i].boxes) index boxes")
            guard sizes[i].boxes > 0 else {
                if case .failure(let error) = normalized[i].take()! {
                    results[i] = FenceAddResult(id: fences[i].id, outcome: .rejected(error), repaired: false)
                }
                refused.append(i)
                continue
            }
            slotOfInput[i] = Int32(inputOfSlot.count)
            inputOfSlot.append(Int32(i))
            recordStart.append(doubles)
            firstBox.append(Int32(boxes))
            doubles += sizes[i].doubles
            boxes += sizes[i].boxes
        }
        let n = inputOfSlot.count
        recordStart.append(doubles)
        firstBox.append(Int32(boxes))

        // The columns nobody else needs to fill, on this thread.
        slotGeometryCount = ContiguousArray(
            (0..<n).lazy.map { Int32(recordStart[$0 + 1] - recordStart[$0]) })
        slotBoxCount = ContiguousArray((0..<n).lazy.map { UInt8(firstBox[$0 + 1] - firstBox[$0]) })
        slotKey = ContiguousArray(0..<Int32(n))
        keySlot = slotKey
        var treeIDs = ContiguousArray<Int32>()
        var sharedIDs: [Int32] = []
        treeIDs.reserveCapacity(boxes)
        for s in 0..<Int32(n) {
            let count = Int(slotBoxCount[Int(s)])
            for part in 0..<count { treeIDs.append(Self.item(slot: s, part: part)) }
            if count > 2 { sharedIDs.append(Self.item(slot: s, part: 1)) }
        }

        // The rest on the workers; each chunk notes its fences with a group or properties, so
        // that groups are numbered in slot order afterwards, as the one-by-one path numbers them.
        var hot = ContiguousArray<Int>(uninitializedCount: n)
        var expires = ContiguousArray<Double>(uninitializedCount: n)
        var treeBoxes = ContiguousArray<Box>(uninitializedCount: boxes)
        let records = GeometryRecords(room: doubles)
        precondition(records.claim(doubles) == 0, "new records refused their first claim")
        let trimming = doubles / max(1, n) >= Self.trimRecordSize
        let trimStep = bulkTrimStep
        let chunkSize = min(2048, max(64, n / 64))  // at least 64 chunks when there are 4,096 slots
        var noted = [(groups: [Int32], properties: [Int32], expiring: Int, returns: Int)](
            repeating: ([], [], 0, 0), count: (n + chunkSize - 1) / chunkSize)
        slotSettings = ContiguousArray(unsafeUninitializedCapacity: n) { settingsOut, initialized in
            do {
                // The records' room, written below slot by slot, each by one worker.
                let recordsOut = UnsafeMutableBufferPointer(start: records.base, count: doubles)
                hot.withUnsafeMutableBufferPointer { hotOut in
                    expires.withUnsafeMutableBufferPointer { expiresOut in
                        treeBoxes.withUnsafeMutableBufferPointer { boxesOut in
                            normalized.withUnsafeMutableBufferPointer { normalizedIn in
                                results.withUnsafeMutableBufferPointer { resultsOut in
                                    noted.withUnsafeMutableBufferPointer { notedOut in
                                        // Each slot, input position and chunk is written by one worker.
                                        nonisolated(unsafe) let settingsOut = settingsOut
                                        nonisolated(unsafe) let recordsOut = recordsOut
                                        nonisolated(unsafe) let hotOut = hotOut
                                        nonisolated(unsafe) let expiresOut = expiresOut
                                        nonisolated(unsafe) let boxesOut = boxesOut
                                        nonisolated(unsafe) let normalizedIn = normalizedIn
                                        nonisolated(unsafe) let resultsOut = resultsOut
                                        nonisolated(unsafe) let notedOut = notedOut
                                        Parallel.forEachChunk(
                                            count: n, chunkSize: chunkSize, threads: threads, makeState: { 0 }
                                        ) { freed, chunk, range in
                                            // `freed`: doubles of records this worker freed since its last trim.
                                            defer {
                                                if trimming && freed >= trimStep {
                                                    AllocatorTuning.returnFreedMemory()
                                                    notedOut[chunk].returns += 1
                                                    freed = 0
                                                }
                                            }
                                            for s in range {
                                                let i = Int(inputOfSlot[s])
                                                // Slots are in spatial order, inputs are not: ask
                                                // for a later slot's input entries now (`prefetchAhead`).
                                                if s + Self.prefetchAhead < n {
                                                    let ahead = Int(inputOfSlot[s + Self.prefetchAhead])
                                                    fence_prefetch(normalizedIn.baseAddress! + ahead)
                                                    fence_prefetch(fences.baseAddress! + ahead)
                                                    fence_prefetch(resultsOut.baseAddress! + ahead)
                                                }
                                                guard case .success(let flat) = normalizedIn[i].take()! else {
                                                    preconditionFailure("a fence sized as good was rejected")
                                                }
                                                let fence = fences.baseAddress! + i
                                                let start = recordStart[s]
                                                freed += flat.geometry.count
                                                flat.geometry.withUnsafeBufferPointer {
                                                    (recordsOut.baseAddress! + start).initialize(
                                                        from: $0.baseAddress!, count: $0.count)
                                                }
                                                hotOut[s] = HotWord.make(
                                                    start: start, kind: flat.flatKind,
                                                    gridOffset: flat.smallGridOffset)
                                                expiresOut[s] = fence.pointee.expires ?? .nan
                                                settingsOut.baseAddress!.advanced(by: s).initialize(
                                                    to: SlotSettings(of: fence))
                                                for (part, box) in flat.boxes.enumerated() {
                                                    boxesOut[Int(firstBox[s]) + part] = box
                                                }
                                                resultsOut[i] = FenceAddResult(
                                                    id: fence.pointee.id, outcome: .added, repaired: flat.repaired)
                                                if fence.pointee.group != nil { notedOut[chunk].groups.append(Int32(s)) }
                                                if !fence.pointee.properties.isEmpty {
                                                    notedOut[chunk].properties.append(Int32(s))
                                                }
                                                if fence.pointee.expires != nil { notedOut[chunk].expiring += 1 }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            initialized = n
        }
        clock.mark("store")
        // The last records' pages too (less than a step a worker).
        if trimming {
            AllocatorTuning.returnFreedMemory()
            memoryReturns += 1
        }
        clock.mark("trim")
        slotHot = hot
        slotExpires = expires
        if noted.contains(where: { $0.expiring > 0 }) {
            earliestExpiry = expires.reduce(earliestExpiry) { $1.isNaN ? $0 : min($0, $1) }
        }
        geometry = records
        liveGeometry = doubles
        for chunk in noted {
            for s in chunk.groups {
                let g = internGroup(fences[Int(inputOfSlot[Int(s)])].group!)
                slotSettings[Int(s)].group = g
                groupMembers[Int(g)].insert(s)
            }
            for s in chunk.properties { properties[s] = fences[Int(inputOfSlot[Int(s)])].properties }
            expiring += chunk.expiring
            memoryReturns += chunk.returns
        }
        if expiring > 0 { rebuildExpiryQueue() }
        // The duplicate check's table becomes the id table: same keys, values now slots.
        var table = firstIndex.mapValues { slotOfInput[Int($0)] }
        for i in refused { table[ExactID(fences[i].id)] = nil }
        slotByID = IDTable(table)
        for item in sharedIDs {
            let s = Int(item >> 1)
            sharedBoxes[item >> 1] = Array(treeBoxes[Int(firstBox[s]) + 1..<Int(firstBox[s + 1])])
        }
        tree = RTree(ids: treeIDs, boxes: treeBoxes, shared: sharedIDs)
        queriesWithoutGrid = 0
    }
}

extension NormalizedFence {
    /// The kind its store record takes.
    var flatKind: FlatGeometry.Kind { kind == .circle ? .circle : (indexed ? .indexedPolygon : .polygon) }

    /// Where a small (unindexed) polygon's grid starts in its record, for the store's hot word; 0
    /// for other kinds.
    var smallGridOffset: Int {
        flatKind == .polygon ? geometry.withUnsafeBufferPointer { FlatGeometry.coordinatesEnd(of: $0.baseAddress!) } : 0
    }
}
