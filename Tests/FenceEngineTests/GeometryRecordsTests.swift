@testable import FenceEngine
import Foundation
import XCTest

/// The store's records are shared by its copies and never move while there is room
/// (`GeometryRecords`): an edit of one copy appends, and leaves every other copy as it was.
final class GeometryRecordsTests: XCTestCase {
    /// Random stars, circles and holed polygons in a 10° square, ids `prefix` + n.
    static func fences(_ rng: inout TestRandom, count: Int, prefix: String) -> [Fence] {
        (0..<count).map { n in
            let lon = rng.uniform(0, 10)
            let lat = rng.uniform(40, 50)
            let id = "\(prefix)\(n)"
            switch rng.next() % 5 {
            case 0: return .circle(id: id, lon: lon, lat: lat, radius: rng.uniform(100, 40_000))
            case 1: return Fence(id: id, shape: .polygons([Shapes.polygonWithHoles(&rng, lon: lon, lat: lat, radius: rng.uniform(0.05, 0.5))]))
            default:
                let ring = Shapes.star(&rng, lon: lon, lat: lat, radius: rng.uniform(0.02, 0.5), vertices: 6 + Int(rng.next() % 40))
                return .polygon(id: id, exterior: ring)
            }
        }
    }

    /// Every fence of `store` reads back as `expected` says (by id, in WGS84), and the two
    /// agree with the oracle over random positions.
    func assertHolds(_ store: FenceStore, _ expected: [String: Fence], _ rng: inout TestRandom, _ when: String, line: UInt = #line) {
        XCTAssertEqual(store.count, expected.count, when, line: line)
        for (id, fence) in expected {
            XCTAssertEqual(store.fence(id: id)?.shape, fence.shape, "\(when): \(id)", line: line)
        }
        let oracle = Oracle(Array(expected.values))
        for _ in 0..<300 {
            let p = LonLat(lon: rng.uniform(-0.5, 10.5), lat: rng.uniform(39.5, 50.5))
            XCTAssertEqual(store.ids(covering: p), oracle.ids(covering: p), "\(when): \(p)", line: line)
        }
        assertHotWords(store, when, line: line)
    }

    /// A copy's edits (adds, a replacement, removals) append to the records both copies share:
    /// the records do not move, and the original still holds and answers what it held.
    func testACopysEditsShareTheRecordsAndLeaveTheOriginalAsItWas() {
        var rng = TestRandom(mixing: 5)
        let base = Self.fences(&rng, count: 3000, prefix: "b")
        var original = FenceStore()
        XCTAssertTrue(original.add(base, threads: 2).allSatisfy { $0.error == nil })
        let records = original.geometry
        let loaded = records.count
        var expected = Dictionary(uniqueKeysWithValues: base.map { ($0.id, $0) })

        var copy = original
        let more = Self.fences(&rng, count: 40, prefix: "m")
        var replacing = Self.fences(&rng, count: 30, prefix: "x")
        for i in replacing.indices { replacing[i].id = base[i].id }
        for f in more { XCTAssertNil(copy.add([f])[0].error) }
        XCTAssertTrue(copy.add(replacing).allSatisfy { $0.outcome == .replaced })
        let gone = base[100..<160].map(\.id)
        for id in gone { XCTAssertNotNil(copy.remove(id: id)) }

        XCTAssertTrue(copy.geometry === records, "the copy's edits appended to the shared records")
        XCTAssertTrue(original.geometry === records)
        XCTAssertGreaterThan(records.count, loaded, "the new shapes were appended")
        XCTAssertEqual(original.geometry[0..<loaded].count, loaded)
        assertHolds(original, expected, &rng, "the original")

        for f in more { expected[f.id] = f }
        for f in replacing { expected[f.id] = f }
        for id in gone { expected[id] = nil }
        assertHolds(copy, expected, &rng, "the copy")
    }

    /// Two copies edited at once on two threads (the NATS worker's partitions) each get what
    /// they asked for, from records they share, and each answers as a store built alone with
    /// the same edits.
    func testCopiesEditedOnTwoThreadsAtOnce() {
        var rng = TestRandom(mixing: 6)
        let base = Self.fences(&rng, count: 2000, prefix: "b")
        var original = FenceStore()
        _ = original.add(base, threads: 2)
        let edits = (0..<2).map { k in Self.fences(&rng, count: 400, prefix: "c\(k)-") }
        let replacements = (0..<2).map { k -> [Fence] in
            var r = Self.fences(&rng, count: 50, prefix: "r")
            for i in r.indices { r[i].id = base[k * 500 + i].id }
            return r
        }
        var copies = [original, original]
        copies.withUnsafeMutableBufferPointer { buffer in
            nonisolated(unsafe) let stores = buffer
            DispatchQueue.concurrentPerform(iterations: 2) { k in
                for (i, f) in edits[k].enumerated() {
                    _ = stores[k].add([f])
                    if i % 8 == 0 { _ = stores[k].add([replacements[k][i / 8]]) }
                }
            }
        }
        XCTAssertTrue(copies[0].geometry === copies[1].geometry, "both appended to the shared records")
        for k in 0..<2 {
            var expected = Dictionary(uniqueKeysWithValues: base.map { ($0.id, $0) })
            for f in edits[k] { expected[f.id] = f }
            for f in replacements[k] { expected[f.id] = f }
            assertHolds(copies[k], expected, &rng, "copy \(k)")
        }
        assertHolds(original, Dictionary(uniqueKeysWithValues: base.map { ($0.id, $0) }), &rng, "the original")
    }

    /// Records that run out of room move, at the same places, to records with more; where
    /// the system refuses to reserve address space, they move each time their room is used,
    /// doubling, as an array grows. Either way every fence reads back and answers as added.
    func testRecordsMoveWhenTheirRoomIsUsed() {
        for reserving in [true, false] {
            GeometryRecords.reservesAddressSpace = reserving
            defer { GeometryRecords.reservesAddressSpace = true }
            var rng = TestRandom(mixing: 7)
            var store = FenceStore()
            var expected: [String: Fence] = [:]
            var moves = 0
            var last = store.geometry
            for f in Self.fences(&rng, count: 1500, prefix: "f") {
                XCTAssertNil(store.add([f])[0].error)
                expected[f.id] = f
                if store.geometry !== last {
                    moves += 1
                    last = store.geometry
                }
            }
            XCTAssertGreaterThan(last.count, GeometryRecords.minimumReservation, "the test passes the first room")
            if reserving {
                XCTAssertEqual(moves, 2, "the first record's room, and one move past it")
                XCTAssertGreaterThanOrEqual(last.capacity, GeometryRecords.reservationFactor * GeometryRecords.minimumReservation)
            } else {
                XCTAssertGreaterThan(moves, 4, "without a reservation, room that doubles")
            }
            assertHolds(store, expected, &rng, reserving ? "reserved" : "allocated")
        }
    }

    /// A copy that removes most of its fences compacts into records of its own; the other
    /// copy keeps the shared ones, unchanged.
    func testCompactionGivesTheCopyRecordsOfItsOwn() {
        var rng = TestRandom(mixing: 8)
        let base = Self.fences(&rng, count: 1500, prefix: "b")
        var original = FenceStore()
        _ = original.add(base, threads: 2)
        var copy = original
        let gone = base.prefix(1200).map(\.id)
        for id in gone { XCTAssertNotNil(copy.remove(id: id)) }
        XCTAssertTrue(copy.geometry === original.geometry, "removing appends nothing")
        copy.compactIfNeeded()  // what the next add, or the engine's removals, do
        XCTAssertFalse(copy.geometry === original.geometry, "compacted into its own records")
        XCTAssertEqual(copy.deadGeometry, 0)
        XCTAssertLessThan(copy.geometry.count, original.geometry.count / 2)
        assertHolds(original, Dictionary(uniqueKeysWithValues: base.map { ($0.id, $0) }), &rng, "the original")
        assertHolds(copy, Dictionary(uniqueKeysWithValues: base.suffix(300).map { ($0.id, $0) }), &rng, "the copy")
    }

    /// Copies that all edit compact by what each removed of its own, not by the shared
    /// records' size (found by a review: with two copies replacing fences, neither compacted
    /// until the shared room was used up); and what an untouched copy reports does not change
    /// when its siblings edit.
    func testEditingCopiesCompactByTheirOwnDeadRecords() {
        var rng = TestRandom(mixing: 9)
        let base = Self.fences(&rng, count: 1000, prefix: "b")
        var original = FenceStore()
        _ = original.add(base, threads: 2)
        let footprint = original.memoryFootprint
        XCTAssertEqual(original.liveGeometry, original.geometry.count)
        var copies = [original, original]
        var compactions = [0, 0]
        for round in 0..<8 {
            for k in 0..<2 {
                let records = copies[k].geometry
                var moved = Self.fences(&rng, count: 200, prefix: "x")
                for i in moved.indices { moved[i].id = base[(round * 200 + i) % base.count].id }
                XCTAssertTrue(copies[k].add(moved).allSatisfy { $0.outcome == .replaced })
                if copies[k].geometry !== records { compactions[k] += 1 }
                XCTAssertLessThanOrEqual(copies[k].deadGeometry, max(4096, copies[k].liveGeometry), "copy \(k), round \(round)")
            }
        }
        XCTAssertEqual(compactions.map { $0 > 0 }, [true, true], "each copy compacted: \(compactions)")
        XCTAssertEqual(original.memoryFootprint, footprint, "an untouched copy's footprint is its own")
        XCTAssertEqual(original.liveGeometry + original.deadGeometry, footprintRecords(original))
        var pristine = FenceStore()
        _ = pristine.add([Fence.circle(id: "", lon: 0, lat: 0, radius: 1)])  // refused: nothing stored
        let sibling = pristine
        var editing = sibling
        _ = editing.add([Fence.circle(id: "c", lon: 0, lat: 0, radius: 1)])
        XCTAssertTrue(pristine.isPristine, "a sibling's edit leaves a pristine store pristine")
        assertHolds(original, Dictionary(uniqueKeysWithValues: base.map { ($0.id, $0) }), &rng, "the original")
    }

    /// The doubles of records a store's live slots name, summed slot by slot.
    func footprintRecords(_ store: FenceStore) -> Int {
        store.slotHot.indices.filter { HotWord.isLive(store.slotHot[$0]) }.reduce(0) { $0 + Int(store.slotGeometryCount[$1]) }
    }

    /// Claims hand out disjoint room and refuse what does not fit.
    func testClaims() {
        let records = GeometryRecords(room: 10)
        XCTAssertEqual(records.claim(0), 0)
        XCTAssertEqual(records.claim(5), 0)
        XCTAssertEqual(records.claim(7), 5)
        XCTAssertEqual(records.count, 12)
        XCTAssertNil(records.claim(records.capacity))
        XCTAssertEqual(records.count, 12, "a refused claim takes nothing")
        XCTAssertNil(GeometryRecords.empty.claim(1), "the empty records have no room")
        XCTAssertEqual(GeometryRecords.empty.count, 0)
    }
}
