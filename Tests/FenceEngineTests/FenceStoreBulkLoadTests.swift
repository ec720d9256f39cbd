@testable import FenceEngine
import SpatialIndex
import XCTest

/// The parallel bulk load into a pristine store (`loadFresh`) against the one-by-one path it
/// replaces: the same results and the same store, slot for slot and bit for bit, on any number
/// of workers, over batches with every kind of fence, bad fences, repeated ids and settings.
final class FenceStoreBulkLoadTests: XCTestCase {
    /// A random batch: polygons small and large (the large ones get a cell grid), holes,
    /// MultiPolygons, circles, fences across the antimeridian (two index boxes), bowties
    /// (invalid; repaired or rejected), empty and repeated ids, groups, properties, expiries,
    /// dwell and action masks.
    static func batch(_ rng: inout TestRandom, count: Int) -> [Fence] {
        var fences: [Fence] = []
        for n in 0..<count {
            let lon = rng.uniform(-179.9, 179.9)
            let lat = rng.uniform(-80, 80)
            let r = rng.uniform(0.0005, 0.05)
            var id = "f\(n)"
            switch rng.next() % 40 {
            case 0: id = ""
            case 1, 2: id = "f\(rng.next() % UInt64(n + 1))"  // often a repeat
            case 3: id = "fence-with-a-long-id-on-the-heap-\(n)"
            default: break
            }
            let shape: FenceShape
            switch rng.next() % 10 {
            case 0, 1:
                shape = .circle(center: LonLat(lon: lon, lat: lat), radius: rng.uniform(5, 5000))
            case 2:
                // Cut at the antimeridian (RFC 7946 3.1.9): two index boxes.
                let west = [(179.9, lat), (180, lat), (180, lat + 0.1), (179.9, lat + 0.1), (179.9, lat)]
                let east = [(-180, lat), (-179.9, lat), (-179.9, lat + 0.1), (-180, lat + 0.1), (-180, lat)]
                shape = .polygons([west, east].map { Polygon(exterior: $0.map { LonLat(lon: $0.0, lat: $0.1) }) })
            case 3:
                let bowtie = [(lon, lat), (lon + r, lat + r), (lon + r, lat), (lon, lat + r), (lon, lat)]
                shape = .polygons([Polygon(exterior: bowtie.map { LonLat(lon: $0.0, lat: $0.1) })])
            case 4:
                shape = .polygons([Shapes.polygonWithHoles(&rng, lon: lon, lat: lat, radius: r)])
            case 5:
                shape = .polygons([
                    Polygon(exterior: Shapes.star(&rng, lon: lon, lat: lat, radius: r, vertices: 8)),
                    Polygon(exterior: Shapes.star(&rng, lon: lon, lat: lat + 3 * r, radius: r, vertices: 10)),
                ])
            case 6:
                shape = .polygons([
                    Polygon(exterior: Shapes.star(&rng, lon: lon, lat: lat, radius: r, vertices: 100 + Int(rng.next() % 400)))
                ])
            case 7:
                // Too few positions: rejected.
                shape = .polygons([Polygon(exterior: [LonLat(lon: lon, lat: lat), LonLat(lon: lon, lat: lat)])])
            default:
                shape = .polygons([
                    Polygon(exterior: Shapes.star(&rng, lon: lon, lat: lat, radius: r, vertices: 4 + Int(rng.next() % 30)))
                ])
            }
            var fence = Fence(id: id, shape: shape)
            if rng.next() % 3 == 0 { fence.group = "g\(rng.next() % 5)" }
            if rng.next() % 4 == 0 { fence.properties = ["name": "n\(n)", "k": "\(rng.next() % 7)"] }
            if rng.next() % 5 == 0 { fence.expires = Double(1_700_000_000 + rng.next() % 1000) }
            if rng.next() % 5 == 0 { fence.dwell = Double(rng.next() % 600) }
            if rng.next() % 5 == 0 { fence.actions = FenceActions(rawValue: UInt8(rng.next() % 16)) }
            if rng.next() % 6 == 0 { fence.coord = .gcj02 }
            fences.append(fence)
        }
        return fences
    }

    func testParallelLoadEqualsOneByOne() {
        for seed in 0..<16 as Range<UInt64> {
            var rng = TestRandom(mixing: seed)
            let fences = Self.batch(&rng, count: 65 + Int(rng.next() % 1200))
            let repair = seed % 2 == 1
            var expected = FenceStore()
            let expectedResults = expected.add(fences, repair: repair, threads: 2, pristinePath: false)
            XCTAssertTrue(expectedResults.contains { $0.error != nil }, "seed \(seed): the batch has bad fences")
            XCTAssertTrue(expected.slotBoxCount.contains(2), "seed \(seed): some fence has two index boxes")
            for threads in [1, 2, 3] {
                var store = FenceStore()
                let results = store.add(fences, repair: repair, threads: threads, pristinePath: true)
                let context = "seed \(seed), \(threads) threads"
                XCTAssertEqual(results, expectedResults, context)
                assertSameStore(store, expected, context)
            }
        }
    }

    /// Batches the random ones leave to chance: over 4,096 fences (chunks of n / 64), none
    /// good (no slot at all), and a repeated id whose first fence is refused (the id is then
    /// nowhere: its second fence was already refused as a repeat).
    func testEdgeBatches() {
        var rng = TestRandom(mixing: 5)
        let large = (0..<6000).map { n -> Fence in
            let lon = rng.uniform(-170, 170)
            let lat = rng.uniform(-70, 70)
            return n % 3 == 0
                ? Fence.circle(id: "c\(n)", lon: lon, lat: lat, radius: 100, group: "g\(n % 7)")
                : Fence.polygon(id: "p\(n)", exterior: Shapes.star(&rng, lon: lon, lat: lat, radius: 0.01, vertices: 6))
        }
        let short = [LonLat(lon: 1, lat: 1), LonLat(lon: 1, lat: 1)]
        let noneGood = (0..<100).map { Fence.polygon(id: "bad\($0)", exterior: short) }
        let bowtie = [(0.0, 0.0), (1.0, 1.0), (1.0, 0.0), (0.0, 1.0), (0.0, 0.0)].map { LonLat(lon: $0.0, lat: $0.1) }
        var repeated = Array(large.prefix(100))
        repeated.insert(Fence.polygon(id: "twice", exterior: bowtie), at: 10)
        repeated.insert(Fence.polygon(id: "twice", exterior: Shapes.star(&rng, lon: 5, lat: 5, radius: 0.01, vertices: 8)), at: 50)
        for (name, batch) in [("6,000 fences", large), ("none good", noneGood), ("a refused first of two", repeated)] {
            for threads in [1, 2] { loadBothWays(batch, threads: threads, name) }
        }
        var store = FenceStore()
        let results = store.add(repeated, repair: false, threads: 2, pristinePath: true)
        XCTAssertEqual(results.filter { $0.id == "twice" }.map { $0.error?.kind }, [.invalidGeometry, .duplicateID])
        XCTAssertNil(store.handle(id: "twice"))
        var empty = FenceStore()
        empty.add(noneGood, threads: 2)
        XCTAssertEqual(empty.count, 0)
        XCTAssertTrue(empty.isPristine, "a batch with no good fence leaves the store as made")
    }

    /// Records of 8 KB and more on average (polygons of about 200 positions and more) go back to
    /// the system once copied into the store (`trimRecordSize`); the store is still the
    /// one-by-one path's, bit for bit. Smaller ones, which share pages, are left to the heap.
    func testLargeRecordsGiveTheirMemoryBack() {
        var rng = TestRandom(mixing: 17)
        var large = (0..<80).map { n -> Fence in
            Fence.polygon(
                id: "big\(n)",
                exterior: Shapes.star(
                    &rng, lon: rng.uniform(-170, 170), lat: rng.uniform(-70, 70), radius: 0.05, vertices: 800 + n * 10))
        }
        let bowtie = [(0.0, 0.0), (1.0, 1.0), (1.0, 0.0), (0.0, 1.0), (0.0, 0.0)].map { LonLat(lon: $0.0, lat: $0.1) }
        large.insert(Fence.polygon(id: "bowtie", exterior: bowtie), at: 40)
        large.append(Fence.circle(id: "c", lon: 3, lat: 4, radius: 50))
        let small = Self.batch(&rng, count: 3000)
        for (name, batch, returns) in [("large", large, true), ("small", small, false)] {
            for threads in [1, 2] {
                let (store, expected) = loadBothWays(batch, threads: threads, name)
                // Under 128 MB a worker: only the final request.
                XCTAssertEqual(store.memoryReturns, returns ? 1 : 0, "\(name), \(threads) threads")
                XCTAssertEqual(expected.memoryReturns, 0, "the one-by-one path frees each record as it goes")
            }
        }
        // With a step of 100,000 doubles, requests while copying too, summed over the chunks:
        // at least one per step of the records freed, plus the final one.
        let doubles = large.reduce(0) { total, fence in
            guard case .polygons(let parts) = fence.shape, parts.count == 1, parts[0].exterior.count > 100 else { return total }
            return total + 2 * parts[0].exterior.count
        }
        for threads in [1, 2] {
            let (store, _) = loadBothWays(large, threads: threads, "a small trim step", trimStep: 100_000)
            // Each worker's records take more than its coordinates: at least doubles / step / threads
            // requests a worker before the last.
            XCTAssertGreaterThanOrEqual(store.memoryReturns, 1 + doubles / 100_000 / threads, "\(threads) threads")
        }
    }

    /// A batch of 64 or fewer, or one into a store that has held fences, takes the one-by-one
    /// path; a later batch into a bulk-loaded store finds everything where the path put it.
    func testLaterEditsOnABulkLoadedStore() {
        var rng = TestRandom(mixing: 99)
        let fences = Self.batch(&rng, count: 2000)
        var a = FenceStore()
        var b = FenceStore()
        XCTAssertEqual(
            a.add(fences, repair: true, threads: 2, pristinePath: true),
            b.add(fences, repair: true, threads: 2, pristinePath: false))
        assertSameStore(a, b, "after the load")
        let more = Self.batch(&rng, count: 300).map { f -> Fence in
            var f = f
            f.id = "more-" + f.id
            return f
        }
        let replacing = Array(fences.prefix(40))
        let gone = UTF8Order.sorted(Array(a.ids)).prefix(25)
        XCTAssertEqual(a.add(more, repair: true, threads: 2), b.add(more, repair: true, threads: 2))
        XCTAssertEqual(a.add(replacing, repair: true, threads: 2), b.add(replacing, repair: true, threads: 2))
        for id in gone {
            XCTAssertEqual(a.remove(id: id), b.remove(id: id))
        }
        assertSameStore(a, b, "after edits")
    }

    /// `batch` loaded into a pristine store by the bulk path and by the one-by-one path, with
    /// the same results and the same store (`assertSameStore`); the bulk path returns freed
    /// memory every `trimStep` doubles a worker (`FenceStore.bulkTrimStep`).
    @discardableResult
    func loadBothWays(
        _ batch: [Fence], threads: Int, _ name: String, trimStep: Int = FenceStore.trimStep, file: StaticString = #filePath,
        line: UInt = #line
    ) -> (bulk: FenceStore, oneByOne: FenceStore) {
        var expected = FenceStore()
        var store = FenceStore()
        store.bulkTrimStep = trimStep
        XCTAssertEqual(
            store.add(batch, repair: false, threads: threads, pristinePath: true),
            expected.add(batch, repair: false, threads: threads, pristinePath: false), name, file: file, line: line)
        assertSameStore(store, expected, "\(name), \(threads) threads", file: file, line: line)
        return (store, expected)
    }

    func assertSameStore(_ a: FenceStore, _ b: FenceStore, _ context: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(a.count, b.count, context, file: file, line: line)
        XCTAssertEqual(a.slotHot, b.slotHot, "\(context): hot words", file: file, line: line)
        XCTAssertEqual(a.slotGeometryCount, b.slotGeometryCount, "\(context): record sizes", file: file, line: line)
        XCTAssertEqual(a.slotBoxCount, b.slotBoxCount, "\(context): box counts", file: file, line: line)
        XCTAssertEqual(a.slotKey, b.slotKey, "\(context): keys", file: file, line: line)
        XCTAssertEqual(a.keySlot, b.keySlot, "\(context): key slots", file: file, line: line)
        XCTAssertEqual(a.freeKeys, b.freeKeys, "\(context): free keys", file: file, line: line)
        XCTAssertEqual(a.freeSlots, b.freeSlots, "\(context): free slots", file: file, line: line)
        XCTAssertEqual(a.geometry[0..<a.geometry.count].map(\.bitPattern), b.geometry[0..<b.geometry.count].map(\.bitPattern), "\(context): records", file: file, line: line)
        XCTAssertEqual(a.slotExpires.map(\.bitPattern), b.slotExpires.map(\.bitPattern), "\(context): expiries", file: file, line: line)
        XCTAssertEqual(a.expiring, b.expiring, "\(context): expiring", file: file, line: line)
        XCTAssertEqual(a.groupNames, b.groupNames, "\(context): group names", file: file, line: line)
        XCTAssertEqual(a.groupMembers, b.groupMembers, "\(context): group members", file: file, line: line)
        XCTAssertEqual(a.properties, b.properties, "\(context): properties", file: file, line: line)
        XCTAssertEqual(a.deadGeometry, b.deadGeometry, "\(context): dead geometry", file: file, line: line)
        XCTAssertEqual(a.slotSettings.count, b.slotSettings.count, context, file: file, line: line)
        for (x, y) in zip(a.slotSettings, b.slotSettings) {
            XCTAssertTrue(
                ExactID.sameBytes(x.id, y.id) && x.group == y.group && x.actions == y.actions
                    && x.dwell.bitPattern == y.dwell.bitPattern, "\(context): settings of \(x.id)", file: file, line: line)
        }
        XCTAssertEqual(Set(a.ids), Set(b.ids), "\(context): ids", file: file, line: line)
        for id in b.ids { XCTAssertEqual(a.handle(id: id), b.handle(id: id), "\(context): slot of \(id)", file: file, line: line) }
        XCTAssertEqual(a.tree.count, b.tree.count, "\(context): index size", file: file, line: line)
        for slot in 0..<Int32(b.slotHot.count) {
            for part in 0..<Int32(2) {
                XCTAssertEqual(a.tree.box(of: slot * 2 + part), b.tree.box(of: slot * 2 + part), "\(context): box", file: file, line: line)
            }
        }
    }
}
