import Foundation
import SeededRandom
import XCTest

@testable import FenceEngine

/// `DevicePartition` finds devices by hash and confirms by comparing ids: short ones as
/// strings, long ones as bytes against its own copy (`longIDBytes`). Checked against a
/// dictionary over many seeds, with ids short and long,
/// non-ASCII, prefixes of one another, and hashes forced to collide so that only the byte
/// comparison can tell ids apart.
final class DevicePartitionTests: XCTestCase {
    func testInternAndFindMatchADictionary() {
        let alphabet = Array("ab0-_é漢🚚")
        for seed in 1...30 {
            var rng = SplitMix64(seed: UInt64(seed))
            // Seeds above 20 give every id one of 3 hashes: every lookup meets other ids of
            // its hash first.
            let collide = seed > 20
            func hash(_ id: String) -> UInt64 { collide ? stableHash64(id) % 3 : stableHash64(id) }
            var pool: [String] = []
            for _ in 0..<300 {
                let length = Int(rng.next() % 45)
                var id = String((0..<length).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] })
                // Some ids extend an earlier one: the byte comparison must check lengths too.
                if let base = pool.last, rng.next() % 4 == 0 { id = base + id.prefix(Int(rng.next() % 3))}
                pool.append(id)
            }
            var partition = DevicePartition()
            var expected: [String: Int32] = [:]
            for step in 0..<3_000 {
                let id = pool[Int(rng.next() % UInt64(pool.count))]
                // A fresh copy each time, as input gives: equal ids are separate objects.
                let copy = String(decoding: Array(id.utf8), as: UTF8.self)
                let d: Int32
                if step % 2 == 0 && copy.utf8.count > DevicePartition.inlineBytes {
                    d = Array(copy.utf8).withUnsafeBufferPointer { partition.intern(long: $0, hash: hash(copy)) }
                } else {
                    d = partition.intern(copy, hash: hash(copy))
                }
                if let known = expected[id] {
                    XCTAssertEqual(d, known, "seed \(seed): \(id.debugDescription) found as another device")
                } else {
                    XCTAssertEqual(Int(d), expected.count, "seed \(seed): a new device gets the next index")
                    expected[id] = d
                }
                XCTAssertEqual(partition.states[Int(d)].id, id, "seed \(seed): device \(d)'s id")
            }
            for id in pool {
                XCTAssertEqual(partition.find(id, hash: hash(id)), expected[id], "seed \(seed): find \(id.debugDescription)")
                if id.utf8.count > DevicePartition.inlineBytes {
                    let byBytes = Array(id.utf8).withUnsafeBufferPointer { partition.find(long: $0, hash: hash(id)) }
                    XCTAssertEqual(byBytes, expected[id], "seed \(seed): find by bytes \(id.debugDescription)")
                }
            }
            XCTAssertNil(partition.find("never-seen-device-id-longer-than-15", hash: hash("never-seen-device-id-longer-than-15")))
        }
    }

    /// Events of a fleet whose ids are each fix's own copy (as a reader makes them) equal those
    /// of the same fleet sharing one string per device, and so do the devices' states: the
    /// batch copies ids' bytes (`PartitionedFixes`) rather than the strings.
    func testEventsDoNotDependOnHowIdsAreStored() throws {
        var store = FenceStore()
        var fences: [Fence] = []
        for k in 0..<40 {
            let lon = Double(k % 8) * 0.01
            let lat = Double(k / 8) * 0.01
            fences.append(.circle(id: "fence-\(k)-with-a-long-identifier", lon: lon, lat: lat, radius: 600))
        }
        _ = store.add(fences)
        var rng = SplitMix64(seed: 7)
        var shared: [Position] = []
        let ids = (0..<300).map { "vehicle-\($0)-" + String(repeating: "x", count: Int($0 % 30)) }
        for step in 0..<40 {
            for id in ids {
                let lon = Double(rng.next() % 900) / 10_000
                let lat = Double(rng.next() % 500) / 10_000
                shared.append(Position(device: id, time: Double(step * 10) + Double(rng.next() % 5), lon: lon, lat: lat))
            }
        }
        let copied = shared.map { Position(device: String(decoding: Array($0.device.utf8), as: UTF8.self), time: $0.time, lon: $0.lon, lat: $0.lat) }
        var a = EventEngine(store: store)
        var b = EventEngine(store: store)
        for threads in [1, 2, 3] {
            a = EventEngine(store: store)
            b = EventEngine(store: store)
            var eventsA: [FenceEvent] = []
            var eventsB: [FenceEvent] = []
            for start in stride(from: 0, to: shared.count, by: 2_500) {
                eventsA += a.evaluate(Array(shared[start..<min(shared.count, start + 2_500)]), threads: threads).events
                eventsB += b.evaluate(Array(copied[start..<min(copied.count, start + 2_500)]), threads: threads).events
            }
            XCTAssertGreaterThan(eventsA.count, 1_000)
            XCTAssertEqual(eventsA, eventsB, "\(threads) threads")
            XCTAssertEqual(a.deviceCount, ids.count)
            XCTAssertEqual(b.deviceCount, ids.count)
            for id in ids { XCTAssertEqual(a.fences(insideOf: id), b.fences(insideOf: id), id) }
        }
    }
}
