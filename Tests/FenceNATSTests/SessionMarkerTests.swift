import Foundation
import XCTest

@testable import FenceNATS

/// Session markers on a real server's state bucket: `withdraw` takes back only its own
/// `starting` marker, with one write conditioned on the revision `announce` wrote. It deleted
/// a marker it had made with a get and then a delete, so a worker announcing between the two
/// lost its `starting` marker, and `fence status --wait-drained` could call the partition
/// drained while that worker still loaded its fences.
final class SessionMarkerTests: XCTestCase {
    var server: NATSServer?
    let topology = Topology(partitions: 2)

    override func setUpWithError() throws {
        guard NATSServer.binary != nil else {
            throw XCTSkip("nats-server is not installed (apt-get install nats-server); .ci/setup installs it")
        }
        let folder = NSTemporaryDirectory() + "fence-marker-\(UUID().uuidString.prefix(8))"
        let s = try NATSServer(name: "kv", folder: folder, port: NATSServer.freePort(), mapping: topology.mapping)
        try s.start()
        server = s
    }

    override func tearDown() {
        server?.stop(signal: SIGKILL)
        if let f = server?.folder { try? FileManager.default.removeItem(atPath: f) }
    }

    /// The state bucket, with partition 0 never marked and partition 1 marked `consuming` by
    /// an earlier worker.
    func bucket() throws -> (NATSConnection, NATSKeyValue) {
        let connection = try NATSConnection(servers: [server!.url], name: "test")
        try Deployment.setup(connection: connection, topology: topology)
        let kv = try connection.keyValue(bucket: topology.stateBucket)
        try kv.put(topology.sessionKey(1), SessionMarker(.consuming, owner: "earlier").encoded())
        return (connection, kv)
    }

    func marker(_ kv: NATSKeyValue, _ p: Int) throws -> SessionMarker? {
        try kv.get(topology.sessionKey(p)).flatMap { SessionMarker(decoding: $0.value) }
    }

    func testWithdrawLeavesAMarkerWrittenSinceItsAnnounce() throws {
        let (_, kv) = try bucket()
        let newer = SessionMarker(.starting, owner: "b")
        // Another worker announces between this one's announce and its withdraw.
        let replaced = try SessionMarker.announce(kv, topology: topology, partitions: [0, 1], owner: "a")
        for p in 0..<2 { try kv.put(topology.sessionKey(p), newer.encoded()) }
        SessionMarker.withdraw(kv, replaced)
        XCTAssertEqual(try marker(kv, 0), newer)
        XCTAssertEqual(try marker(kv, 1), newer)
        // And while the withdraw runs, after anything it could have read and before it writes,
        // on partition 0 unmarked again.
        try kv.delete(topology.sessionKey(0))
        let again = try SessionMarker.announce(kv, topology: topology, partitions: [0, 1], owner: "a")
        SessionMarker.withdraw(kv, again) { key in _ = try? kv.put(key, newer.encoded()) }
        XCTAssertEqual(try marker(kv, 0), newer)
        XCTAssertEqual(try marker(kv, 1), newer)
    }

    /// Its own marker goes: the one before is put back, and where there was none the key is
    /// deleted, which `fence status` reads as no marker (judged by checkpoint and consumer).
    func testWithdrawTakesBackItsOwnMarker() throws {
        let (connection, kv) = try bucket()
        let replaced = try SessionMarker.announce(kv, topology: topology, partitions: [0, 1], owner: "a")
        XCTAssertEqual(try marker(kv, 0), SessionMarker(.starting, owner: "a"))
        SessionMarker.withdraw(kv, replaced)
        XCTAssertNil(try kv.get(topology.sessionKey(0)))
        XCTAssertEqual(try marker(kv, 1), SessionMarker(.consuming, owner: "earlier"))
        let statuses = try Deployment.status(connection: connection, topology: topology)
        XCTAssertNil(statuses[0].session)
        XCTAssertNil(statuses[0].sessionRevision)
        XCTAssertTrue(statuses[0].sessionSteady)
        XCTAssertEqual(statuses[1].session, SessionMarker(.consuming, owner: "earlier"))
        // The key can be marked again, by put (a session) as by announce.
        _ = try SessionMarker.announce(kv, topology: topology, partitions: [0], owner: "c")
        XCTAssertEqual(try marker(kv, 0), SessionMarker(.starting, owner: "c"))
    }

    /// A session that stops cleanly marks its partition `stopped` over its own `consuming`
    /// only: a newer worker's marker stays.
    func testMarkStoppedReplacesOnlyTheSessionsOwnMarker() throws {
        let (_, kv) = try bucket()
        let key = topology.sessionKey(0)
        let own = try kv.put(key, SessionMarker(.consuming, owner: "a").encoded())
        SessionMarker.markStopped(kv, key: key, owner: "a", revision: own)
        XCTAssertEqual(try marker(kv, 0), SessionMarker(.stopped, owner: "a"))
        let again = try kv.put(key, SessionMarker(.consuming, owner: "a").encoded())
        try kv.put(key, SessionMarker(.starting, owner: "b").encoded())
        SessionMarker.markStopped(kv, key: key, owner: "a", revision: again)
        XCTAssertEqual(try marker(kv, 0), SessionMarker(.starting, owner: "b"))
        XCTAssertEqual(SessionMarker(decoding: Array("stopped a b".utf8)), SessionMarker(.stopped, owner: "a b"))
    }

    /// `stopped` is judged as `consuming` is: by the consumer and checkpoint its session left,
    /// once the marker held still around the consumer's read; `starting` is never drained.
    func testAStoppedPartitionWithNothingPendingIsDrained() {
        var s = Deployment.PartitionStatus(partition: 0)
        (s.lastChangeSequence, s.pending, s.ackPending, s.sessionSteady) = (5, 0, 0, true)
        for (phase, drained) in [(SessionMarker.Phase.starting, false), (.consuming, true), (.stopped, true)] {
            s.session = SessionMarker(phase, owner: "a")
            XCTAssertEqual(s.isDrained(throughChange: 5), drained, "\(phase)")
            XCTAssertFalse(s.isDrained(throughChange: 6), "\(phase)")
        }
        s.sessionSteady = false
        XCTAssertFalse(s.isDrained(throughChange: 5))
        (s.sessionSteady, s.pending) = (true, 1)
        XCTAssertFalse(s.isDrained(throughChange: 5))
        (s.pending, s.ackPending) = (0, 2)
        XCTAssertFalse(s.isDrained(throughChange: 5))
    }

    /// The conditioned delete itself: refused as a conditioned update is when the revision
    /// moved on, and the value stays.
    func testAConditionedDeleteIsRefusedAfterAnotherWrite() throws {
        let (_, kv) = try bucket()
        let key = topology.sessionKey(0)
        let first = try kv.put(key, Array("x".utf8))
        try kv.put(key, Array("y".utf8))
        XCTAssertThrowsError(try kv.delete(key, last: first)) { error in
            XCTAssertTrue((error as? NATSError)?.isWrongLastSequence == true, "\(error)")
        }
        let (value, revision) = try XCTUnwrap(try kv.get(key))
        XCTAssertEqual(value, Array("y".utf8))
        try kv.delete(key, last: revision)
        XCTAssertNil(try kv.get(key))
    }
}
