@testable import FenceEngine
import XCTest

/// Ids are their bytes: two canonically equivalent spellings (NFC "é" and NFD "e" + U+0301),
/// which Swift's `String ==` treats as one, are two fences, two groups and two devices, and
/// listings put ids in UTF-8 byte order, as output and state files do.
final class ExactIDTests: XCTestCase {
    let nfc = "caf\u{E9}"  // bytes 63 61 66 C3 A9
    let nfd = "cafe\u{301}"  // bytes 63 61 66 65 CC 81
    let plain = "caff"  // between them in byte order: 65 < 66 < C3

    func square(_ lon: Double, _ lat: Double, _ side: Double = 1) -> [LonLat] {
        [(0.0, 0.0), (side, 0), (side, side), (0, side), (0, 0)].map { LonLat(lon: lon + $0.0, lat: lat + $0.1) }
    }

    func testTheSpellingsAreCanonicallyEqualButNotByteEqual() {
        XCTAssertEqual(nfc, nfd, "Swift's own == joins them: the case this file is about")
        XCTAssertNotEqual(ExactID(nfc), ExactID(nfd))
        XCTAssertEqual(ExactID(nfc), ExactID(String(decoding: Array(nfc.utf8), as: UTF8.self)))
        XCTAssertEqual(Set([ExactID(nfc), ExactID(nfd), ExactID(nfc)]).count, 2)
        XCTAssertEqual(UTF8Order.sorted([nfc, plain, nfd]), [nfd, plain, nfc])
    }

    /// Over many random ids, including long and multibyte ones, `ExactID` equality and hashing
    /// agree with comparing the UTF-8 arrays.
    func testAgreesWithByteArraysOverManySeeds() {
        let pieces = ["a", "e", "\u{301}", "\u{E9}", "\u{316}", "\u{1F600}", "z", "0"]
        for seed in UInt64(0)..<200 {
            var rng = TestRandom(mixing: seed)
            func word() -> String { (0..<Int(rng.next() % 24)).map { _ in pieces[Int(rng.next() % UInt64(pieces.count))] }.joined() }
            var table = IDTable<Int>()
            var oracle: [[UInt8]: Int] = [:]
            for i in 0..<60 {
                let w = word()
                table[w] = i
                oracle[Array(w.utf8)] = i
            }
            XCTAssertEqual(table.count, oracle.count, "seed \(seed)")
            for (bytes, value) in oracle {
                XCTAssertEqual(table[String(decoding: bytes, as: UTF8.self)], value, "seed \(seed)")
            }
            XCTAssertEqual(Set(table.ids.map { Array($0.utf8) }), Set(oracle.keys), "seed \(seed)")
        }
    }

    func testTwoSpellingsAreTwoFencesAndTwoGroups() {
        var store = FenceStore()
        let results = store.add([
            Fence(id: nfc, group: nfc, shape: .polygons([Polygon(exterior: square(0, 0))])),
            Fence(id: nfd, group: nfd, shape: .polygons([Polygon(exterior: square(0.5, 0))])),
            Fence(id: plain, shape: .polygons([Polygon(exterior: square(0.2, 0))])),
        ])
        XCTAssertEqual(results.map(\.outcome), [.added, .added, .added], "neither is a duplicate of the other")
        XCTAssertEqual(store.count, 3)
        XCTAssertEqual(store.ids(covering: LonLat(lon: 0.7, lat: 0.5)), [nfd, plain, nfc], "byte order")
        XCTAssertEqual(store.fences(group: nfc).map { Array($0.id.utf8) }, [Array(nfc.utf8)])
        XCTAssertEqual(store.fences(group: nfd).map { Array($0.id.utf8) }, [Array(nfd.utf8)])
        XCTAssertEqual(Array(store.fence(id: nfd)!.id.utf8), Array(nfd.utf8))

        // Replacing one leaves the other as it was.
        XCTAssertEqual(store.add([Fence(id: nfd, shape: .polygons([Polygon(exterior: square(10, 10))]))])[0].outcome, .replaced)
        XCTAssertEqual(store.ids(covering: LonLat(lon: 0.7, lat: 0.5)), [plain, nfc])
        XCTAssertEqual(store.ids(covering: LonLat(lon: 10.5, lat: 10.5)), [nfd])

        // Removing one leaves the other.
        XCTAssertEqual(store.remove(id: nfc).map { Array($0.id.utf8) }, Array(nfc.utf8))
        XCTAssertNil(store.fence(id: nfc))
        XCTAssertNotNil(store.fence(id: nfd))
        XCTAssertEqual(store.removeAll(), [nfd, plain])
    }

    /// A device inside both fences enters both; the state file keeps both pairs and their
    /// records apart, and a restore finds each.
    func testEventsAndStateKeepTheSpellingsApart() throws {
        var engine = EventEngine()
        _ = engine.add([
            Fence(id: nfc, group: "g", shape: .polygons([Polygon(exterior: square(0, 0))])),
            Fence(id: nfd, group: "g", shape: .polygons([Polygon(exterior: square(0.5, 0))])),
        ])
        let r = engine.evaluate([Position(device: "v", time: 0, lon: 0.7, lat: 0.5)])
        XCTAssertEqual(r.events.map { Array($0.fence.utf8) }, [Array(nfd.utf8), Array(nfc.utf8)])
        XCTAssertEqual(engine.fences(insideOf: "v").map { Array($0.utf8) }, [Array(nfd.utf8), Array(nfc.utf8)])

        let snapshot = try TrackerSnapshot(decoding: engine.snapshot().encoded())
        XCTAssertEqual(snapshot.fences.map { Array($0.id.utf8) }, [Array(nfd.utf8), Array(nfc.utf8)])
        var restored = EventEngine(store: engine.store)
        XCTAssertEqual(restored.restore(snapshot), 0)
        let exit = restored.evaluate([Position(device: "v", time: 10, lon: 0.2, lat: 0.5)])
        XCTAssertEqual(exit.events.map { "\($0.kind) \(Array($0.fence.utf8))" }, ["exit \(Array(nfd.utf8))"])

        // Removing the NFC fence ends only its visit.
        let removed = restored.remove(id: nfc, at: 20)
        XCTAssertEqual(removed.map { "\($0.kind) \(Array($0.fence.utf8))" }, ["exit \(Array(nfc.utf8))"])
    }
}
