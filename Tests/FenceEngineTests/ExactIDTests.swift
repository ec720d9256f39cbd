@testable import FenceEngine
import XCTest

/// Ids are their bytes: two canonically equivalent spellings (NFC "é" and NFD "e" + U+0301),
/// which Swift's `String ==` treats as one, are two fences, two groups and two devices, and
/// listings put ids in UTF-8 byte order, as output and state files do.
final class ExactIDTests: XCTestCase {
    let nfc = "caf\u{E9}"  // bytes 63 61 66 C3 A9
    let nfd = "cafe\u{301}"  // bytes 63 61 66 65 CC 81
    let plain = "caff"  // between them in byte order: 65 < 66 < C3

    /// Lists compared as bytes: `XCTAssertEqual` on `[String]` uses `String ==`, which could not
    /// tell the two spellings apart.
    func bytes(_ ids: [String]) -> [[UInt8]] { ids.map { Array($0.utf8) } }

    func square(_ lon: Double, _ lat: Double, _ side: Double = 1) -> [LonLat] {
        [(0.0, 0.0), (side, 0), (side, side), (0, side), (0, 0)].map { LonLat(lon: lon + $0.0, lat: lat + $0.1) }
    }

    func testTheSpellingsAreCanonicallyEqualButNotByteEqual() {
        XCTAssertEqual(nfc, nfd, "Swift's own == joins them: the case this file is about")
        XCTAssertNotEqual(ExactID(nfc), ExactID(nfd))
        XCTAssertEqual(ExactID(nfc), ExactID(String(decoding: Array(nfc.utf8), as: UTF8.self)))
        XCTAssertEqual(Set([ExactID(nfc), ExactID(nfd), ExactID(nfc)]).count, 2)
        XCTAssertEqual(bytes(UTF8Order.sorted([nfc, plain, nfd])), bytes([nfd, plain, nfc]))
        let event = FenceEvent(time: 0, device: nfc, fence: nfc, group: nfc, kind: .enter, lon: 0, lat: 0)
        var other = event
        XCTAssertEqual(event, other)
        other.device = nfd
        XCTAssertNotEqual(event, other, "device spelled apart")
        other = event
        other.fence = nfd
        XCTAssertNotEqual(event, other, "fence spelled apart")
        other = event
        other.group = nfd
        XCTAssertNotEqual(event, other, "group spelled apart")
        XCTAssertNotEqual(Position(device: nfc, time: 0, lon: 0, lat: 0), Position(device: nfd, time: 0, lon: 0, lat: 0))
        XCTAssertEqual(Position(device: nfc, time: 0, lon: 0, lat: 0), Position(device: nfc, time: 0, lon: 0, lat: 0))
        let pair = TrackerSnapshot.Pair(fence: nfc, stayed: false, exitPending: false, enterTime: 1, pendingSince: 0)
        var otherPair = pair
        otherPair.fence = nfd
        XCTAssertNotEqual(pair, otherPair)
        let device = TrackerSnapshot.Device(id: nfc, lastTime: 1, lastLon: 0, lastLat: 0, pairs: [pair])
        var otherDevice = device
        otherDevice.id = nfd
        XCTAssertNotEqual(device, otherDevice)
        otherDevice = device
        otherDevice.pairs = [otherPair]
        XCTAssertNotEqual(TrackerSnapshot(watermark: 1, devices: [device]), TrackerSnapshot(watermark: 1, devices: [otherDevice]))
        let record = TrackerSnapshot.FenceRecord(id: nfc, group: nfc, actions: 0xFF, shapeDigest: 7)
        var otherRecord = record
        otherRecord.group = nfd
        XCTAssertNotEqual(record, otherRecord)
        otherRecord = record
        otherRecord.id = nfd
        XCTAssertNotEqual(record, otherRecord)
        XCTAssertEqual(record, TrackerSnapshot.FenceRecord(id: nfc, group: nfc, actions: 0xFF, shapeDigest: 7))
        let fence = Fence(id: nfc, group: nfc, shape: .circle(center: LonLat(lon: 1, lat: 2), radius: 3), properties: [nfc: nfc, "k": "v"])
        XCTAssertEqual(fence, Fence(id: nfc, group: nfc, shape: .circle(center: LonLat(lon: 1, lat: 2), radius: 3), properties: ["k": "v", nfc: nfc]))
        let (nfc, nfd) = (self.nfc, self.nfd)
        for change in [
            { (f: inout Fence) in f.id = nfd }, { (f: inout Fence) in f.group = nfd }, { (f: inout Fence) in f.group = nil },
            { (f: inout Fence) in f.properties = [nfd: nfc, "k": "v"] }, { (f: inout Fence) in f.properties = [nfc: nfd, "k": "v"] },
            { (f: inout Fence) in f.properties = [nfc: nfc] }, { (f: inout Fence) in f.dwell = 5 },
            { (f: inout Fence) in f.shape = .circle(center: LonLat(lon: 1, lat: 2), radius: 4) },
        ] {
            var other = fence
            change(&other)
            XCTAssertNotEqual(fence, other)
            XCTAssertNotEqual(other, fence)
        }
    }

    /// Over many random ids, including long and multibyte ones, `ExactID` equality and hashing
    /// agree with comparing the UTF-8 arrays. Every word also comes spelled the other way (each
    /// precomposed "é" decomposed, each "a" + U+0316 + U+0301 with its marks swapped), a text
    /// Swift's `String ==` calls the same.
    func testAgreesWithByteArraysOverManySeeds() {
        let pieces = ["a", "e", "\u{E9}", "a\u{316}\u{301}", "\u{1F600}", "z", "0", "-"]
        let otherSpelling = ["a", "e", "e\u{301}", "a\u{301}\u{316}", "\u{1F600}", "z", "0", "-"]
        var equivalentPairs = 0
        for seed in UInt64(0)..<200 {
            var rng = TestRandom(mixing: seed)
            var table = IDTable<Int>()
            var oracle: [[UInt8]: Int] = [:]
            for i in 0..<60 {
                let picks = (0..<Int(rng.next() % 24)).map { _ in Int(rng.next() % UInt64(pieces.count)) }
                let w = picks.map { pieces[$0] }.joined()
                let v = picks.map { otherSpelling[$0] }.joined()
                if w == v && !w.utf8.elementsEqual(v.utf8) { equivalentPairs += 1 }
                table[w] = 2 * i
                oracle[Array(w.utf8)] = 2 * i
                table[v] = 2 * i + 1
                oracle[Array(v.utf8)] = 2 * i + 1
            }
            XCTAssertEqual(table.count, oracle.count, "seed \(seed)")
            for (bytes, value) in oracle {
                XCTAssertEqual(table[String(decoding: bytes, as: UTF8.self)], value, "seed \(seed)")
            }
            XCTAssertEqual(Set(table.ids.map { Array($0.utf8) }), Set(oracle.keys), "seed \(seed)")
        }
        XCTAssertGreaterThan(equivalentPairs, 5000, "the pairs this test is about")
    }

    /// A device table confirms a hash match by bytes: the other spelling under the same hash
    /// (FNV-1a collisions can be made on purpose) is another device, short or long.
    func testDevicePartitionTellsSpellingsApartUnderOneHash() {
        let long = "vehicle-0000000-caf"
        for (a, b) in [(nfc, nfd), (long + "\u{E9}", long + "e\u{301}"), ("a\u{316}\u{301}", "a\u{301}\u{316}")] {
            XCTAssertEqual(a, b)
            var partition = DevicePartition()
            let first = partition.intern(a, hash: 42)
            XCTAssertNil(partition.find(b, hash: 42), "\(Array(b.utf8))")
            let second = partition.intern(b, hash: 42)
            XCTAssertNotEqual(first, second)
            XCTAssertEqual(partition.find(a, hash: 42), first)
            XCTAssertEqual(partition.find(String(decoding: Array(b.utf8), as: UTF8.self), hash: 42), second)
            XCTAssertEqual(Array(partition.states[Int(second)].id.utf8), Array(b.utf8))
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
        XCTAssertEqual(bytes(store.ids(covering: LonLat(lon: 0.7, lat: 0.5))), bytes([nfd, plain, nfc]), "byte order")
        XCTAssertEqual(store.fences(group: nfc).map { Array($0.id.utf8) }, [Array(nfc.utf8)])
        XCTAssertEqual(store.fences(group: nfd).map { Array($0.id.utf8) }, [Array(nfd.utf8)])
        XCTAssertTrue(store.hasFences(inGroup: nfd))
        XCTAssertFalse(store.hasFences(inGroup: "cafe\u{301}\u{316}"))
        XCTAssertEqual(Array(store.fence(id: nfd)!.id.utf8), Array(nfd.utf8))

        // Replacing one leaves the other as it was.
        XCTAssertEqual(store.add([Fence(id: nfd, shape: .polygons([Polygon(exterior: square(10, 10))]))])[0].outcome, .replaced)
        XCTAssertEqual(bytes(store.ids(covering: LonLat(lon: 0.7, lat: 0.5))), bytes([plain, nfc]))
        XCTAssertEqual(bytes(store.ids(covering: LonLat(lon: 10.5, lat: 10.5))), bytes([nfd]))

        // Removing one leaves the other.
        XCTAssertEqual(store.remove(id: nfc).map { Array($0.id.utf8) }, Array(nfc.utf8))
        XCTAssertNil(store.fence(id: nfc))
        XCTAssertNotNil(store.fence(id: nfd))
        XCTAssertEqual(bytes(store.removeAll()), bytes([nfd, plain]))
        XCTAssertFalse(store.hasFences(inGroup: nfc))
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
        XCTAssertEqual(try restored.restore(snapshot), 0)
        let exit = restored.evaluate([Position(device: "v", time: 10, lon: 0.2, lat: 0.5)])
        XCTAssertEqual(exit.events.map { "\($0.kind) \(Array($0.fence.utf8))" }, ["exit \(Array(nfd.utf8))"])

        // Removing the NFC fence ends only its visit.
        let removed = restored.remove(id: nfc, at: 20)
        XCTAssertEqual(removed.map { "\($0.kind) \(Array($0.fence.utf8))" }, ["exit \(Array(nfc.utf8))"])
    }
}
