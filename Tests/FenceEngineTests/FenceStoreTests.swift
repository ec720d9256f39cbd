@testable import FenceEngine
import XCTest

final class FenceStoreTests: XCTestCase {
    func ring(_ pts: [(Double, Double)]) -> [LonLat] { pts.map { LonLat(lon: $0.0, lat: $0.1) } }
    var square: [LonLat] { ring([(0, 0), (1, 0), (1, 1), (0, 1), (0, 0)]) }

    /// Every bad-fence case gives its own error naming the fence, and the good ones still load.
    func testEveryBadFenceCaseIsReportedAndTheRestLoads() throws {
        let bowtie = ring([(0, 0), (2, 2), (2, 0), (0, 2), (0, 0)])
        let batch: [Fence] = [
            .polygon(id: "good1", exterior: square),
            .polygon(id: "short", exterior: ring([(0, 0), (1, 0), (0, 0)])),
            .polygon(id: "open", exterior: ring([(0, 0), (1, 0), (1, 1), (0, 1)])),
            .polygon(id: "bowtie", exterior: bowtie),
            .circle(id: "r0", lon: 0, lat: 0, radius: 0),
            .circle(id: "rneg", lon: 0, lat: 0, radius: -5),
            .circle(id: "rnan", lon: 0, lat: 0, radius: .nan),
            .circle(id: "rinf", lon: 0, lat: 0, radius: .infinity),
            .circle(id: "lat91", lon: 0, lat: 91, radius: 10),
            .polygon(id: "lon200", exterior: ring([(0, 0), (200, 0), (1, 1), (0, 0)])),
            .polygon(id: "nanvertex", exterior: ring([(0, 0), (.nan, 0), (1, 1), (0, 0)])),
            .circle(id: "good1", lon: 5, lat: 5, radius: 10),
            .circle(id: "", lon: 5, lat: 5, radius: 10),
            Fence(id: "dwellneg", shape: .circle(center: LonLat(lon: 0, lat: 0), radius: 5), dwell: -1),
            Fence(id: "empty", shape: .polygons([])),
            .polygon(id: "hole-outside", exterior: square, holes: [ring([(5, 5), (6, 5), (6, 6), (5, 5)])]),
            .circle(id: "good2", lon: 10, lat: 10, radius: 1000),
        ]
        var store = FenceStore()
        let results = store.add(batch)
        XCTAssertEqual(results.count, batch.count)
        func kind(_ i: Int) -> FenceError.Kind? { results[i].error?.kind }
        XCTAssertNil(results[0].error)
        XCTAssertEqual(kind(1), .ringTooShort)
        XCTAssertEqual(kind(2), .ringNotClosed)
        XCTAssertEqual(kind(3), .invalidGeometry)
        XCTAssertTrue(results[3].error!.reason.contains("Self-intersection"), results[3].error!.reason)
        for i in 4...7 { XCTAssertEqual(kind(i), .invalidRadius, "\(batch[i].id)") }
        XCTAssertEqual(kind(8), .coordinateOutOfRange)
        XCTAssertEqual(kind(9), .coordinateOutOfRange)
        XCTAssertEqual(kind(10), .coordinateOutOfRange)
        XCTAssertEqual(kind(11), .duplicateID)
        XCTAssertEqual(kind(12), .missingID)
        XCTAssertEqual(kind(13), .invalidSetting)
        XCTAssertEqual(kind(14), .emptyGeometry)
        XCTAssertEqual(kind(15), .invalidGeometry)
        XCTAssertNil(results[16].error)
        for (i, r) in results.enumerated() where r.error != nil && i != 12 {
            XCTAssertEqual(r.error!.fence, batch[i].id, "the error names the fence")
        }
        XCTAssertEqual(results[12].error!.fence, "#13", "a fence without id is named by its position")
        XCTAssertEqual(store.count, 2)
        XCTAssertEqual(store.ids(covering: LonLat(lon: 0.5, lat: 0.5)), ["good1"], "the first good1 stands")
        store.tree.checkInvariants()
    }

    /// An `expires` no fix can reach is refused as a fix's time is: epoch milliseconds (as
    /// JavaScript writes them: the fence would never expire), beyond the years 1-9999, not
    /// finite. Found by an outside audit: `1577923200000` was taken as the year 51970.
    func testExpiresOutsideTheYearsOneToNineThousandIsRefused() throws {
        let center = LonLat(lon: 0, lat: 0)
        let times: [(Double, String?)] = [
            (1_577_923_200, nil), (-62_135_596_800, nil), (253_402_300_799, nil),
            (1_577_923_200_000, "not milliseconds"), (-1e20, "not nanoseconds"), (1e300, "not nanoseconds"),
            (253_402_300_800, "outside the years 1-9999"), (-62_135_596_801, "outside the years 1-9999"),
            (.nan, "not a finite number"), (.infinity, "not a finite number"),
            // No --time-format reads a fence's expires: the way out named is ISO 8601.
            (20_200_101_000_000, "YYYYMMDDhhmmss: write it in ISO 8601 (20200101T000000Z) or epoch seconds"),
        ]
        var store = FenceStore()
        for (i, (t, why)) in times.enumerated() {
            let r = store.add([Fence(id: "f\(i)", shape: .circle(center: center, radius: 5), expires: t)])[0]
            if let why {
                XCTAssertEqual(r.error?.kind, .invalidSetting, "\(t)")
                XCTAssertTrue(r.error?.reason.hasPrefix("expires: time") == true && r.error!.reason.contains(why), "\(t): \(String(describing: r.error))")
            } else {
                XCTAssertNil(r.error, "\(t)")
            }
        }
        XCTAssertEqual(store.count, 3)
    }

    func testRepairMakesABowtieValid() throws {
        let bowtie = ring([(0, 0), (2, 2), (2, 0), (0, 2), (0, 0)])
        var store = FenceStore()
        let r = store.add([.polygon(id: "bowtie", exterior: bowtie)], repair: true)
        XCTAssertNil(r[0].error)
        XCTAssertTrue(r[0].repaired)
        XCTAssertEqual(store.ids(covering: LonLat(lon: 1.9, lat: 1.0)), ["bowtie"])
        XCTAssertEqual(store.ids(covering: LonLat(lon: 0.1, lat: 1.0)), ["bowtie"])
        XCTAssertEqual(store.ids(covering: LonLat(lon: 1.0, lat: 1.9)), [])
    }

    /// The single-fence `add`: false for a new id, true when it replaces one; a rejected
    /// fence throws its error and leaves the store as it was (the fence it would have
    /// replaced still answers), with or without `repair`.
    func testSingleFenceAddReportsReplacementAndThrowsRejection() throws {
        let bowtie = ring([(0, 0), (2, 2), (2, 0), (0, 2), (0, 0)])
        var store = FenceStore()
        XCTAssertFalse(try store.add(.polygon(id: "a", exterior: square)))
        XCTAssertTrue(try store.add(.polygon(id: "a", exterior: ring([(5, 5), (6, 5), (6, 6), (5, 6), (5, 5)]))))
        XCTAssertEqual(store.ids(covering: LonLat(lon: 0.5, lat: 0.5)), [])
        XCTAssertEqual(store.ids(covering: LonLat(lon: 5.5, lat: 5.5)), ["a"])
        let cases: [(Fence, FenceError.Kind)] = [
            (.polygon(id: "a", exterior: bowtie), .invalidGeometry),
            (.circle(id: "a", lon: 1, lat: 1, radius: -3), .invalidRadius),
            (.polygon(id: "b", exterior: ring([(0, 0), (1, 0), (1, .nan), (0, 0)])), .coordinateOutOfRange),
            (.polygon(id: "", exterior: square), .missingID),
        ]
        for (fence, kind) in cases {
            XCTAssertThrowsError(try store.add(fence)) { error in
                XCTAssertEqual((error as? FenceError)?.kind, kind, "\(fence.id): \(error)")
            }
            XCTAssertEqual(store.count, 1)
            XCTAssertEqual(store.ids(covering: LonLat(lon: 5.5, lat: 5.5)), ["a"])
        }
        XCTAssertThrowsError(try store.add(.circle(id: "a", lon: 1, lat: 1, radius: .infinity), repair: true))
        XCTAssertTrue(try store.add(.polygon(id: "a", exterior: bowtie), repair: true))
        XCTAssertEqual(store.ids(covering: LonLat(lon: 1.9, lat: 1.0)), ["a"])
        XCTAssertEqual(store.ids(covering: LonLat(lon: 5.5, lat: 5.5)), [])
    }

    func testReplaceRemoveGroupsAndQueries() throws {
        var store = FenceStore()
        let r = store.add([
            Fence(id: "a", group: "depots", shape: .polygons([Polygon(exterior: square)])),
            Fence(id: "b", group: "depots", shape: .circle(center: LonLat(lon: 0.5, lat: 0.5), radius: 1000)),
            Fence(id: "c", group: "yards", shape: .circle(center: LonLat(lon: 0.5, lat: 0.5), radius: 10)),
        ])
        XCTAssertEqual(r.map(\.outcome), [.added, .added, .added])
        XCTAssertEqual(store.ids(covering: LonLat(lon: 0.5, lat: 0.5)), ["a", "b", "c"])
        XCTAssertEqual(store.fences(group: "depots").map(\.id), ["a", "b"])
        XCTAssertEqual(store.fence(id: "c")?.group, "yards")
        XCTAssertEqual(Set(store.groups), ["depots", "yards"])

        // Same id replaces: "a" moves away.
        let moved = ring([(10, 10), (11, 10), (11, 11), (10, 11), (10, 10)])
        XCTAssertTrue(try store.add(Fence(id: "a", group: "depots", shape: .polygons([Polygon(exterior: moved)]))))
        XCTAssertEqual(store.count, 3)
        XCTAssertEqual(store.ids(covering: LonLat(lon: 0.5, lat: 0.5)), ["b", "c"])
        XCTAssertEqual(store.ids(covering: LonLat(lon: 10.5, lat: 10.5)), ["a"])
        XCTAssertEqual(store.fence(id: "a")?.shape, .polygons([Polygon(exterior: moved)]))

        XCTAssertEqual(store.remove(group: "depots"), ["a", "b"])
        XCTAssertEqual(store.ids(covering: LonLat(lon: 0.5, lat: 0.5)), ["c"])
        XCTAssertNil(store.fence(id: "a"))
        XCTAssertEqual(store.fences(group: "depots"), [])
        XCTAssertNotNil(store.remove(id: "c"))
        XCTAssertNil(store.remove(id: "c"))
        XCTAssertEqual(store.count, 0)
        try store.add(.circle(id: "d", lon: 0, lat: 0, radius: 5))
        XCTAssertEqual(store.removeAll(), ["d"])
        XCTAssertEqual(store.ids(covering: LonLat(lon: 0, lat: 0)), [])
        store.tree.checkInvariants()
    }

    /// Many adds, replaces and removes keep the store equal to the oracle and the geometry
    /// arrays compact.
    func testChurnMatchesOracle() throws {
        var rng = TestRandom(mixing: 7)
        var store = FenceStore()
        var live: [String: Fence] = [:]
        for round in 0..<30 {
            var batch: [Fence] = []
            for _ in 0..<40 {
                let id = "f\(rng.next() % 120)"
                if live[id] != nil && batch.contains(where: { $0.id == id }) { continue }
                if batch.contains(where: { $0.id == id }) { continue }
                let f: Fence =
                    rng.next() % 2 == 0
                    ? .circle(id: id, lon: rng.uniform(0, 5), lat: rng.uniform(0, 5), radius: rng.uniform(1000, 90_000))
                    : .polygon(id: id, exterior: Shapes.star(&rng, lon: rng.uniform(0, 5), lat: rng.uniform(0, 5), radius: 0.6, vertices: 10))
                batch.append(f)
            }
            for r in store.add(batch, threads: 2) { XCTAssertNil(r.error) }
            for f in batch { live[f.id] = f }
            for _ in 0..<15 {
                let id = "f\(rng.next() % 120)"
                XCTAssertEqual(store.remove(id: id) != nil, live.removeValue(forKey: id) != nil)
            }
            store.tree.checkInvariants()
            assertHotWords(store, "round \(round)")
            let oracle = Oracle(Array(live.values))
            for _ in 0..<100 {
                let p = LonLat(lon: rng.uniform(-1, 6), lat: rng.uniform(-1, 6))
                XCTAssertEqual(store.ids(covering: p), oracle.ids(covering: p), "round \(round) \(p)")
            }
            XCTAssertEqual(store.count, live.count)
        }
        XCTAssertLessThanOrEqual(store.deadGeometry * 2, max(4096 * 2, store.geometry.count))
    }

    func testExpiry() throws {
        var store = FenceStore()
        store.add([
            Fence(id: "soon", shape: .circle(center: LonLat(lon: 0, lat: 0), radius: 100), expires: 1000),
            Fence(id: "later", shape: .circle(center: LonLat(lon: 0, lat: 0), radius: 100), expires: 2000),
            Fence(id: "never", shape: .circle(center: LonLat(lon: 0, lat: 0), radius: 100)),
        ])
        XCTAssertEqual(store.removeExpired(asOf: 999), [])
        XCTAssertEqual(store.removeExpired(asOf: 1000), ["soon"])
        XCTAssertEqual(store.ids(covering: LonLat(lon: 0, lat: 0)), ["later", "never"])
        XCTAssertEqual(store.removeExpired(asOf: 5000), ["later"])
    }

    /// A fence given in GCJ-02 is stored in WGS84; positions in GCJ-02 find it as the same
    /// WGS84 positions do.
    func testCoordinateSystemsForFencesAndPositions() throws {
        let wgsCenter = LonLat(lon: 116.397, lat: 39.908)
        let g = CoordinateConversion.fromWGS84(lon: wgsCenter.lon, lat: wgsCenter.lat, to: .gcj02)
        let b = CoordinateConversion.fromWGS84(lon: wgsCenter.lon, lat: wgsCenter.lat, to: .bd09ll)
        var store = FenceStore()
        try store.add(Fence(id: "gcj", shape: .circle(center: LonLat(lon: g.lon, lat: g.lat), radius: 50), coord: .gcj02))
        try store.add(Fence(id: "bd", shape: .circle(center: LonLat(lon: b.lon, lat: b.lat), radius: 50), coord: .bd09ll))
        guard case .circle(let stored, _) = store.fence(id: "gcj")!.shape else { return XCTFail() }
        XCTAssertLessThan(Geodesic.distance(lon1: stored.lon, lat1: stored.lat, lon2: wgsCenter.lon, lat2: wgsCenter.lat), 0.001)
        XCTAssertEqual(store.ids(covering: wgsCenter), ["bd", "gcj"])
        XCTAssertEqual(store.ids(covering: LonLat(lon: g.lon, lat: g.lat), coord: .gcj02), ["bd", "gcj"])
        XCTAssertEqual(store.ids(covering: LonLat(lon: b.lon, lat: b.lat), coord: .bd09ll), ["bd", "gcj"])
        // Read raw, the GCJ-02 position is hundreds of metres off: not inside a 50 m circle.
        XCTAssertEqual(store.ids(covering: LonLat(lon: g.lon, lat: g.lat)), [])
    }

    /// The settings an event reads are one 32-byte record a slot: two to a cache line, never
    /// split across two.
    func testSlotSettingsAreOneSmallRecord() {
        XCTAssertEqual(MemoryLayout<SlotSettings>.stride, 32)
    }

    func testMemoryFootprintIsReported() throws {
        var store = FenceStore()
        var rng = TestRandom(mixing: 3)
        store.add((0..<1000).map { .polygon(id: "p\($0)", exterior: Shapes.star(&rng, lon: rng.uniform(0, 10), lat: rng.uniform(0, 10), radius: 0.1, vertices: 16)) })
        let perFence = store.memoryFootprint / store.count
        XCTAssertGreaterThan(perFence, 16 * 16, "at least the vertices")
        XCTAssertLessThan(perFence, 2048)
    }
}

final class FenceStoreBulkTests: XCTestCase {
    /// A large batch into a non-empty store renumbers every fence in spatial order; ids,
    /// groups, properties, settings and containment all survive, replacements included.
    func testBulkAddIntoNonEmptyStoreKeepsEverything() throws {
        var rng = TestRandom(mixing: 11)
        func fence(_ id: String) -> Fence {
            var f: Fence =
                rng.next() % 2 == 0
                ? .circle(id: id, lon: rng.uniform(0, 3), lat: rng.uniform(0, 3), radius: rng.uniform(1000, 50_000))
                : .polygon(id: id, exterior: Shapes.star(&rng, lon: rng.uniform(0, 3), lat: rng.uniform(0, 3), radius: 0.3, vertices: 8))
            f.group = "g\(rng.next() % 5)"
            f.properties = ["name": "\"\(id)\""]
            f.dwell = Double(rng.next() % 900)
            return f
        }
        var live: [String: Fence] = [:]
        let first = (0..<100).map { fence("a\($0)") }
        XCTAssertTrue(FenceStore().count == 0)
        var store = FenceStore()
        store.add(first)
        for f in first { live[f.id] = f }
        // 300 more, 50 of them replacing earlier ids: bulk path over a non-empty store.
        let second = (0..<250).map { fence("b\($0)") } + (0..<50).map { fence("a\($0 * 2)") }
        let results = store.add(second)
        XCTAssertEqual(results.filter { $0.outcome == .replaced }.count, 50)
        for f in second { live[f.id] = f }
        store.tree.checkInvariants()
        assertHotWords(store, "after the bulk add")
        XCTAssertEqual(store.count, live.count)
        let oracle = Oracle(Array(live.values))
        for _ in 0..<500 {
            let p = LonLat(lon: rng.uniform(-0.5, 3.5), lat: rng.uniform(-0.5, 3.5))
            XCTAssertEqual(store.ids(covering: p), oracle.ids(covering: p))
        }
        for (id, f) in live {
            let stored = try XCTUnwrap(store.fence(id: id))
            XCTAssertEqual(stored.group, f.group)
            XCTAssertEqual(stored.properties, f.properties)
            XCTAssertEqual(stored.dwell, f.dwell)
            XCTAssertEqual(stored.shape, f.shape)
        }
        for g in 0..<5 {
            XCTAssertEqual(Set(store.fences(group: "g\(g)").map(\.id)), Set(live.values.filter { $0.group == "g\(g)" }.map(\.id)))
        }
    }

    /// Every live slot's hot word names its record's start and kind, and, for a small
    /// polygon, where its grid starts (what the containment prefetch asks for): through
    /// renumbering, compaction and replacement.
    func testHotWordsNameTheGridThroughEdits() throws {
        var rng = TestRandom(mixing: 23)
        var store = FenceStore()
        func batch(_ prefix: String, _ count: Int) -> [Fence] {
            (0..<count).map { i -> Fence in
                let id = "\(prefix)\(i)"
                switch rng.next() % 4 {
                case 0: return .circle(id: id, lon: rng.uniform(0, 3), lat: rng.uniform(0, 3), radius: rng.uniform(1000, 50_000))
                case 1:
                    // Over 64 positions: an indexed polygon, no small grid.
                    return .polygon(id: id, exterior: Shapes.star(&rng, lon: rng.uniform(0, 3), lat: rng.uniform(0, 3), radius: 0.3, vertices: 80))
                case 2:
                    let p = Shapes.polygonWithHoles(&rng, lon: rng.uniform(0, 3), lat: rng.uniform(0, 3), radius: 0.3)
                    return Fence(id: id, shape: .polygons([p]))
                default:
                    return .polygon(id: id, exterior: Shapes.star(&rng, lon: rng.uniform(0, 3), lat: rng.uniform(0, 3), radius: 0.3, vertices: 3 + Int(rng.next() % 28)))
                }
            }
        }
        store.add(batch("a", 300))
        assertHotWords(store, "bulk load")
        store.add(batch("b", 400) + batch("a", 100))
        assertHotWords(store, "bulk add into a non-empty store")
        for i in 0..<300 { store.remove(id: "a\(i)") }
        for i in 0..<400 where i % 3 != 0 { store.remove(id: "b\(i)") }
        store.add(batch("c", 20))
        assertHotWords(store, "after removals and small adds")
        let grids = store.slotHot.filter { HotWord.gridOffset($0) != 0 }.count
        XCTAssertGreaterThan(grids, 20)
    }
}

/// The index's cell grid through the store's life: built by a bulk load, dropped by a single
/// edit, rebuilt only for a batch that pays for it; containment is the oracle's throughout.
final class FenceStoreCellGridTests: XCTestCase {
    func testEditsDropTheGridAndLargeBatchesRebuildIt() throws {
        var rng = TestRandom(mixing: 31)
        var fences: [Fence] = (0..<600).map { i in
            i % 3 == 0
                ? .circle(id: "c\(i)", lon: rng.uniform(0, 3), lat: rng.uniform(0, 3), radius: rng.uniform(1000, 30_000))
                : .polygon(id: "p\(i)", exterior: Shapes.star(&rng, lon: rng.uniform(0, 3), lat: rng.uniform(0, 3), radius: 0.2, vertices: 10))
        }
        var store = FenceStore()
        XCTAssertTrue(store.add(fences).allSatisfy { $0.error == nil })
        XCTAssertTrue(store.indexHasCellGrid, "a bulk load builds the grid")
        let points = (0..<800).map { _ in LonLat(lon: rng.uniform(-0.3, 3.3), lat: rng.uniform(-0.3, 3.3)) }
        func check(_ context: String) {
            let oracle = Oracle(fences)
            let coverage = store.covering(points, threads: 2)
            for (i, p) in points.enumerated() {
                XCTAssertEqual(coverage[i].map { store.id(of: $0) }.sorted(), oracle.ids(covering: p), "\(context) \(p)")
            }
        }
        check("bulk")
        XCTAssertNotNil(store.remove(id: "p1"))
        fences.removeAll { $0.id == "p1" }
        let extra = Fence.circle(id: "late", lon: 1.5, lat: 1.5, radius: 40_000)
        XCTAssertNil(store.add([extra]).first?.error)
        fences.append(extra)
        XCTAssertFalse(store.indexHasCellGrid, "single edits drop the grid")
        check("after edits, no grid")
        store.prepareIndex(forQueries: 10)
        XCTAssertFalse(store.indexHasCellGrid, "a small batch does not pay for the grid")
        store.prepareIndex(forQueries: store.count)
        XCTAssertTrue(store.indexHasCellGrid)
        store.tree.checkInvariants()
        check("rebuilt grid")
        // Small batches between edits: the grid comes back once they add up to a quarter of
        // the store, and the count starts again after each edit.
        XCTAssertNotNil(store.remove(id: "p2"))
        fences.removeAll { $0.id == "p2" }
        store.prepareIndex(forQueries: 10)
        XCTAssertFalse(store.indexHasCellGrid)
        let quarter = store.count / 4
        for _ in 0..<(quarter / 10 - 2) { store.prepareIndex(forQueries: 10) }
        XCTAssertFalse(store.indexHasCellGrid, "\(quarter / 10 - 1) batches of 10 are short of \(quarter)")
        store.prepareIndex(forQueries: 10)
        store.prepareIndex(forQueries: 10)
        XCTAssertTrue(store.indexHasCellGrid, "small batches adding up to a quarter of the store bring the grid back")
        store.tree.checkInvariants()
        check("grid back after small batches")
        XCTAssertNotNil(store.remove(id: "p4"))
        fences.removeAll { $0.id == "p4" }
        store.prepareIndex(forQueries: quarter - 1)
        XCTAssertFalse(store.indexHasCellGrid, "the count starts again after the grid was there")
    }
}

/// Every live slot's hot word agrees with the slot's record (see `HotWord`).
func assertHotWords(_ store: FenceStore, _ when: String, line: UInt = #line) {
    store.geometry.withUnsafeBufferPointer { g in
        for s in store.slotHot.indices where store.slotHot[s] & 3 != 0 {
            let word = store.slotHot[s]
            XCTAssertEqual(HotWord.start(word), store.geometryStart(s), when, line: line)
            XCTAssertEqual(HotWord.kind(word), store.kind(s).rawValue, when, line: line)
            let record = g.baseAddress! + HotWord.start(word)
            let expected = store.kind(s) == .polygon ? FlatGeometry.coordinatesEnd(of: record) : 0
            XCTAssertEqual(HotWord.gridOffset(word), expected, "\(when): slot \(s) of kind \(store.kind(s))", line: line)
            if case .polygons(let polygons) = store.fence(slot: Int32(s)).shape, store.kind(s) == .polygon {
                // The grid's header starts with the box's west and south edges.
                let all = polygons.flatMap { $0.rings.flatMap { $0 } }
                XCTAssertEqual(record[HotWord.gridOffset(word)], all.map(\.lon).min(), "\(when): slot \(s)", line: line)
                XCTAssertEqual(record[HotWord.gridOffset(word) + 1], all.map(\.lat).min(), "\(when): slot \(s)", line: line)
            }
            XCTAssertLessThanOrEqual(HotWord.start(word) + Int(store.slotGeometryCount[s]), store.geometry.count, when, line: line)
        }
    }
}

final class StaleHandleTests: XCTestCase {
    /// A handle kept past `remove`, past `removeAll` (its slot no longer exists) or passed to
    /// another store reads as a removed fence, never a trap (a library audit: `id(of:)` after
    /// `removeAll` was an index out of range).
    func testHandlesKeptPastAChangeReadAsRemovedFences() {
        var store = FenceStore()
        let fences: [Fence] = [
            .circle(id: "a", lon: 0, lat: 0, radius: 100, group: "g"),
            Fence(id: "b", shape: .circle(center: LonLat(lon: 1, lat: 1), radius: 100), expires: 50),
            Fence(id: "c", shape: .polygons([Polygon(exterior: [LonLat(lon: 2, lat: 2), LonLat(lon: 3, lat: 2), LonLat(lon: 3, lat: 3), LonLat(lon: 2, lat: 2)])])),
        ]
        XCTAssertTrue(store.add(fences).allSatisfy { $0.error == nil })
        let handles = fences.map { store.handle(id: $0.id)! }
        XCTAssertEqual(handles.map { store.id(of: $0) }, ["a", "b", "c"])
        XCTAssertEqual(store.group(of: handles[0]), "g")
        XCTAssertTrue(store.hasExpired(handles[1], at: 50))
        XCTAssertTrue(store.fence(handles[0], covers: LonLat(lon: 0, lat: 0)))

        func expectRemoved(_ s: FenceStore, _ h: FenceHandle, _ label: String) {
            XCTAssertEqual(s.id(of: h), "", label)
            XCTAssertNil(s.group(of: h), label)
            XCTAssertFalse(s.hasExpired(h, at: 1e9), label)
            XCTAssertEqual(s.fence(h).id, "", label)
            XCTAssertFalse(s.fence(h, covers: LonLat(lon: 2.5, lat: 2.4)), label)
        }
        let other = FenceStore()
        for h in handles { expectRemoved(other, h, "another store, \(h)") }
        // A removed fence whose slot is still there (a review: fence(_:) read another record,
        // and trapped on a circle's negative longitude read as a ring count).
        var holey = FenceStore()
        XCTAssertTrue(holey.add([.circle(id: "w", lon: -74, lat: 40.7, radius: 100), .circle(id: "x", lon: -74, lat: 40.8, radius: 100), fences[2]]).allSatisfy { $0.error == nil })
        let removed = ["w", "x", "c"].map { holey.handle(id: $0)! }
        _ = holey.remove(id: "x")
        _ = holey.remove(id: "w")
        XCTAssertEqual(holey.id(of: removed[2]), "c")
        for h in removed.prefix(2) { expectRemoved(holey, h, "removed, slot kept, \(h)") }
        XCTAssertEqual(holey.fence(removed[0]).shape, .polygons([]))
        _ = store.removeAll()
        for h in handles { expectRemoved(store, h, "after removeAll, \(h)") }
        XCTAssertTrue(store.add([fences[0]]).allSatisfy { $0.error == nil })
        XCTAssertEqual(store.id(of: store.handle(id: "a")!), "a")
        expectRemoved(store, handles[2], "past the slots refilled")
    }
}

final class CoveringAtTimeTests: XCTestCase {
    /// `fences(covering:at:)` and `ids(covering:at:)` leave out fences expired by the time
    /// given (at their `expires` exactly, as the event engine), and count every stored fence
    /// without one.
    func testCoveringAtATimeLeavesExpiredFencesOut() {
        var store = FenceStore()
        let fences = [
            Fence(id: "old", shape: .circle(center: LonLat(lon: 0, lat: 0), radius: 1000), expires: 100),
            Fence(id: "new", shape: .circle(center: LonLat(lon: 0, lat: 0), radius: 5000)),
        ]
        XCTAssertTrue(store.add(fences).allSatisfy { $0.error == nil })
        let p = LonLat(lon: 0, lat: 0)
        XCTAssertEqual(store.ids(covering: p), ["new", "old"])
        XCTAssertEqual(store.ids(covering: p, at: 99.5), ["new", "old"])
        XCTAssertEqual(store.ids(covering: p, at: 100), ["new"])
        XCTAssertEqual(store.fences(covering: p, at: 1e9).map { store.id(of: $0) }, ["new"])
    }

    /// `fence(_:covers:coord:)` takes the position in any coordinate system, as
    /// `ids(covering:coord:)` does: the same answers at the edge of a GCJ-02 fence.
    func testDirectTestTakesACoordinateSystem() {
        var store = FenceStore()
        // A 300 m circle in Beijing, in GCJ-02 (about 0.6 km from its WGS84 position there).
        let center = LonLat(lon: 116.397, lat: 39.909)
        XCTAssertTrue(store.add([Fence(id: "gcj", shape: .circle(center: center, radius: 300), coord: .gcj02)]).allSatisfy { $0.error == nil })
        let h = store.handle(id: "gcj")!
        var agreed = 0
        for k in 0..<200 {
            let p = LonLat(lon: center.lon + Double(k % 20 - 10) * 0.0004, lat: center.lat + Double(k / 20 - 5) * 0.0006)
            for coord in [CoordinateSystem.gcj02, .wgs84, .bd09ll] {
                XCTAssertEqual(store.fence(h, covers: p, coord: coord), store.ids(covering: p, coord: coord) == ["gcj"], "\(p) \(coord)")
                agreed += 1
            }
        }
        XCTAssertTrue(store.fence(h, covers: center, coord: .gcj02))
        XCTAssertFalse(store.fence(h, covers: center), "the GCJ-02 centre read as WGS84 is 0.6 km off")
        XCTAssertFalse(store.fence(h, covers: LonLat(lon: .nan, lat: 0), coord: .gcj02))
        XCTAssertEqual(agreed, 600)
    }
}
