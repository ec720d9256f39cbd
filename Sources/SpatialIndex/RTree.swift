/// A two-dimensional R-tree over caller-chosen `Int32` ids, stored as flat arrays of numbers.
///
/// Nodes are not objects. Every node owns `fanout` consecutive entry slots in five parallel arrays
/// (`entryMinX`, `entryMinY`, `entryMaxX`, `entryMaxY`, `entryChild`); node `i` uses slots
/// `i * fanout ..< i * fanout + nodeCount[i]`. In a leaf (`nodeLevel == 0`) `entryChild` holds an
/// item id, in an internal node the index of the child node. Each node also records its parent and
/// its slot in the parent, so a query climbs back up without keeping nodes on a stack and `remove`
/// reaches an item's ancestors in O(height). `itemEntry[id]` is the slot of the item's leaf entry,
/// so `box(of:)`, `contains(id:)` and `remove(id:)` start in O(1).
///
/// How the parts fit: `init(ids:boxes:)` and `rebuild()` pack with Sort-Tile-Recursive
/// (`RTree+BulkLoad.swift`); `insert` descends by least enlargement and splits R*-style
/// (`RTree+Insert.swift`, `RTree+Split.swift`); `remove` condenses underfull nodes by reinsertion
/// (`RTree+Remove.swift`); after `max(1024, count / 2)` updates the tree repacks itself
/// (`RTree+RebuildPolicy.swift`).
///
/// `RTree` is a value type: copies share the arrays and copy them on first write. Concurrent
/// reads of one tree from many threads are safe; each thread needs its own results buffer.
///
/// Shape invariants (see `checkInvariants()`): every leaf is at level 0 and every child is one
/// level below its parent; an internal entry's box equals the union of its child's entries
/// exactly; every node but the root holds `minFill ... fanout` entries; an internal root holds at
/// least 2.
///
/// Ids are dense non-negative integers: `itemEntry` has one slot per id up to the largest one ever
/// inserted, so an id near 2^31 costs 8 GB. An id is either unique (one entry, found in O(1)) or
/// shared (`insertShared`: several entries, each found by its box, `removeShared`); a query
/// reports a shared id once per entry whose box it meets.
public struct RTree: Sendable {
    // MARK: Entries: node i owns slots i * fanout ..< (i + 1) * fanout.

    var entryMinX: ContiguousArray<Double>
    var entryMinY: ContiguousArray<Double>
    var entryMaxX: ContiguousArray<Double>
    var entryMaxY: ContiguousArray<Double>
    /// Item id in a leaf, child node index in an internal node.
    var entryChild: ContiguousArray<Int32>
    /// The entry boxes again in Float32, rounded outward, for candidate queries: node i's block
    /// `i * 4 * fanout ..< (i + 1) * 4 * fanout` holds its min x, min y, max x and max y runs
    /// of `fanout` each. Half the bytes of the exact boxes and twice the lanes per compare;
    /// every box contains its exact box, so a candidate query finds a superset. Kept in step
    /// by `setEntryBox`, `allocateNode` and the bulk load.
    var narrow: ContiguousArray<Float>

    // MARK: Nodes

    /// Entries in use; 0 only for an empty root leaf or a free node.
    var nodeCount: ContiguousArray<Int32>
    /// 0 for leaves, parent level minus 1 below; -1 marks a free node.
    var nodeLevel: ContiguousArray<Int32>
    /// Parent node index, -1 for the root and free nodes.
    var nodeParent: ContiguousArray<Int32>
    /// Index of this node's entry among its parent's entries (0 ..< fanout), -1 for the root.
    var nodeSlot: ContiguousArray<Int32>
    /// Node indices released by `remove`, reused before the arrays grow.
    var freeNodes: ContiguousArray<Int32>

    // MARK: Items

    /// Global entry slot of each id's leaf entry, -1 for absent ids, `RTree.sharedMark` for an
    /// id inserted with `insertShared` (any number of entries; none of them is mapped).
    var itemEntry: ContiguousArray<Int32>

    var root: Int
    /// Where point candidate queries start (`RTree+CellIndex.swift`); nil after `insert` and
    /// `remove` until `buildCellIndex()` or a repack.
    var cellIndex: RTreeCellIndex?
    /// Maximum entries per node.
    public let fanout: Int
    /// Minimum entries per non-root node (40% of `fanout`, at least 2, as R* recommends).
    let minFill: Int

    /// Number of items in the tree.
    ///
    /// - Complexity: O(1).
    public internal(set) var count: Int

    /// Inserts and removes since the tree was last packed; the rebuild policy resets it.
    ///
    /// - Complexity: O(1).
    public internal(set) var updatesSinceRebuild: Int

    /// Updates always tolerated before an automatic rebuild, whatever the size (see
    /// `RTree+RebuildPolicy.swift`). Tests set it to `Int.max` to exercise purely dynamic trees.
    var minimumUpdatesBeforeRebuild: Int = 1024

    /// Creates an empty tree.
    ///
    /// - Parameter fanout: Maximum entries per node, 4 through 64 (a node's query hits fit one
    ///   64-bit mask). With 16 each of a node's four coordinate runs is two cache lines; 24 and
    ///   32 measured no faster for point queries.
    /// - Complexity: O(fanout).
    public init(fanout: Int = 16) {
        precondition(fanout >= 4 && fanout <= 64, "RTree fanout must be in 4...64, got \(fanout)")
        self.fanout = fanout
        self.minFill = Swift.max(2, fanout * 2 / 5)
        entryMinX = []
        entryMinY = []
        entryMaxX = []
        entryMaxY = []
        entryChild = []
        narrow = []
        nodeCount = []
        nodeLevel = []
        nodeParent = []
        nodeSlot = []
        freeNodes = []
        itemEntry = []
        count = 0
        updatesSinceRebuild = 0
        root = 0
        root = allocateNode(level: 0)
    }

    /// Whether the tree holds no items.
    ///
    /// - Complexity: O(1).
    public var isEmpty: Bool { count == 0 }

    /// The union of all item boxes, or `nil` for an empty tree.
    ///
    /// - Complexity: O(fanout).
    public var bounds: Box? {
        count == 0 ? nil : nodeBox(root)
    }

    /// Number of levels: 1 for a single leaf (also when empty).
    ///
    /// - Complexity: O(1).
    public var height: Int { Int(nodeLevel[root]) + 1 }

    /// The box stored for `id`, or `nil` if the id is absent (negative ids included).
    ///
    /// - Parameter id: The item id.
    /// - Complexity: O(1), through the id -> leaf-slot map.
    /// A shared id (`insertShared`) has several boxes and gives nil here.
    public func box(of id: Int32) -> Box? {
        guard id >= 0, Int(id) < itemEntry.count else { return nil }
        let e = Int(itemEntry[Int(id)])
        return e < 0 ? nil : entryBox(e)
    }

    /// Whether `id` is in the tree.
    ///
    /// - Parameter id: The item id; negative ids are never present.
    /// - Complexity: O(1).
    public func contains(id: Int32) -> Bool {
        id >= 0 && Int(id) < itemEntry.count && itemEntry[Int(id)] != -1
    }

    /// Whether `id` was inserted with `insertShared` and not yet released by `removeShared`.
    ///
    /// - Complexity: O(1).
    public func isShared(id: Int32) -> Bool {
        id >= 0 && Int(id) < itemEntry.count && itemEntry[Int(id)] == Self.sharedMark
    }

    /// `itemEntry`'s value for a shared id.
    static let sharedMark: Int32 = -2

    /// Bytes held by the tree's arrays, counted by capacity (what the allocator handed out, not
    /// what is in use), plus the struct itself.
    ///
    /// - Complexity: O(1).
    public var memoryFootprint: Int {
        let doubles =
            entryMinX.capacity + entryMinY.capacity + entryMaxX.capacity + entryMaxY.capacity
        let int32s =
            entryChild.capacity + nodeCount.capacity + nodeLevel.capacity + nodeParent.capacity
            + nodeSlot.capacity + freeNodes.capacity + itemEntry.capacity
        return MemoryLayout<RTree>.size + doubles * MemoryLayout<Double>.stride
            + int32s * MemoryLayout<Int32>.stride + narrow.capacity * MemoryLayout<Float>.stride + cellIndexBytes
    }
}

// MARK: - Storage helpers shared by the update and bulk-load code

extension RTree {
    /// Box of the entry in global slot `e`.
    func entryBox(_ e: Int) -> Box {
        Box(minX: entryMinX[e], minY: entryMinY[e], maxX: entryMaxX[e], maxY: entryMaxY[e])
    }

    mutating func setEntryBox(_ e: Int, _ box: Box) {
        entryMinX[e] = box.minX
        entryMinY[e] = box.minY
        entryMaxX[e] = box.maxX
        entryMaxY[e] = box.maxY
        setNarrowBox(e, box)
    }

    /// Writes the Float32 copy of the entry in slot `e`, rounded outward.
    @inline(__always)
    mutating func setNarrowBox(_ e: Int, _ box: Box) {
        let block = (e / fanout) * 4 * fanout + e % fanout
        narrow[block] = Self.floatDown(box.minX)
        narrow[block + fanout] = Self.floatDown(box.minY)
        narrow[block + 2 * fanout] = Self.floatUp(box.maxX)
        narrow[block + 3 * fanout] = Self.floatUp(box.maxY)
    }

    /// The largest Float32 at or below `x` (beyond Float32's range: its largest finite value,
    /// or -infinity); NaN stays NaN.
    @inline(__always)
    static func floatDown(_ x: Double) -> Float {
        let f = Float(x)
        return Double(f) > x ? f.nextDown : f
    }

    /// The smallest Float32 at or above `x`; NaN stays NaN.
    @inline(__always)
    static func floatUp(_ x: Double) -> Float {
        let f = Float(x)
        return Double(f) < x ? f.nextUp : f
    }

    /// Writes the entry in global slot `e` (of a node at `level`) and points the child, or the
    /// item map, back at it.
    mutating func setEntry(_ e: Int, box: Box, child: Int32, inNodeAtLevel level: Int) {
        setEntryBox(e, box)
        entryChild[e] = child
        link(e, level: level)
    }

    /// Makes the back pointer of the entry in slot `e` agree with its position.
    mutating func link(_ e: Int, level: Int) {
        let child = Int(entryChild[e])
        if level == 0 {
            if itemEntry[child] != Self.sharedMark { itemEntry[child] = Int32(e) }
        } else {
            nodeParent[child] = Int32(e / fanout)
            nodeSlot[child] = Int32(e % fanout)
        }
    }

    /// Exact union of a node's entries. The node must not be empty.
    func nodeBox(_ node: Int) -> Box {
        let start = node * fanout
        let end = start + Int(nodeCount[node])
        var b = entryBox(start)
        for e in start + 1..<end {
            b.minX = Swift.min(b.minX, entryMinX[e])
            b.minY = Swift.min(b.minY, entryMinY[e])
            b.maxX = Swift.max(b.maxX, entryMaxX[e])
            b.maxY = Swift.max(b.maxY, entryMaxY[e])
        }
        return b
    }

    /// Returns a node with no entries at `level`, reusing a freed one when possible.
    mutating func allocateNode(level: Int) -> Int {
        if let reused = freeNodes.popLast() {
            let n = Int(reused)
            nodeLevel[n] = Int32(level)
            nodeCount[n] = 0
            nodeParent[n] = -1
            nodeSlot[n] = -1
            return n
        }
        let n = nodeCount.count
        precondition((n + 1) * fanout <= Int(Int32.max), "RTree storage exceeds Int32 entry slots")
        nodeCount.append(0)
        nodeLevel.append(Int32(level))
        nodeParent.append(-1)
        nodeSlot.append(-1)
        entryMinX.append(contentsOf: repeatElement(0, count: fanout))
        entryMinY.append(contentsOf: repeatElement(0, count: fanout))
        entryMaxX.append(contentsOf: repeatElement(0, count: fanout))
        entryMaxY.append(contentsOf: repeatElement(0, count: fanout))
        entryChild.append(contentsOf: repeatElement(-1, count: fanout))
        narrow.append(contentsOf: repeatElement(.nan, count: 4 * fanout))
        return n
    }

    /// Marks a node unused; its slots are recycled by `allocateNode`.
    mutating func freeNode(_ n: Int) {
        nodeLevel[n] = -1
        nodeCount[n] = 0
        nodeParent[n] = -1
        nodeSlot[n] = -1
        freeNodes.append(Int32(n))
    }
}
