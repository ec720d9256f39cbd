import FenceEngine
import Foundation
import XCTest

@testable import FenceNATS

/// The checkpoint bucket on a real server: chunked values read back whole, the previous
/// checkpoint intact until the head moves, damage refused, a second writer refused.
final class CheckpointStoreTests: XCTestCase {
    var server: NATSServer?

    override func setUpWithError() throws {
        guard NATSServer.binary != nil else {
            throw XCTSkip("nats-server is not installed (apt-get install nats-server); .ci/setup installs it")
        }
        let folder = NSTemporaryDirectory() + "fence-kv-\(UUID().uuidString.prefix(8))"
        let s = try NATSServer(name: "kv", folder: folder, port: NATSServer.freePort(), mapping: Topology(partitions: 2).mapping)
        try s.start()
        server = s
    }

    override func tearDown() {
        server?.stop(signal: SIGKILL)
        if let f = server?.folder { try? FileManager.default.removeItem(atPath: f) }
    }

    func checkpoint(devices: Int, sequence: UInt64, owner: String = "a") -> PartitionCheckpoint {
        var engine = EventEngine()
        _ = engine.add([.circle(id: "depot", lon: 0, lat: 0, radius: 50_000)])
        _ = engine.evaluate(
            (0..<devices).map { Position(device: "device-with-a-long-name-\($0)", time: 10, lon: Double($0 % 100) * 1e-4, lat: 0) },
            threads: 1)
        return PartitionCheckpoint(
            partition: 1, lastSequence: sequence, replayFrom: sequence - 5, lastChangeSequence: 0, horizon: 5, latestSeen: 10,
            counters: .init(), fingerprint: 7, owner: owner, snapshot: engine.snapshot())
    }

    func testChunkedWritesReadBackAndOwnershipIsChecked() throws {
        let connection = try NATSConnection(servers: [server!.url], name: "test")
        let topology = Topology(partitions: 2)
        try Deployment.setup(connection: connection, topology: topology)
        let store = CheckpointStore(kv: try connection.keyValue(bucket: topology.stateBucket))
        XCTAssertNil(try store.read(key: "p1"))

        let big = checkpoint(devices: 15_000, sequence: 100)
        XCTAssertGreaterThan(big.encoded().count, 2 * CheckpointStore.chunkSize)
        let (head1, rev1) = try store.write(big, key: "p1", previous: nil, revision: 0)
        XCTAssertGreaterThan(head1.chunks, 2)
        let (read1, r1) = try XCTUnwrap(try store.read(key: "p1"))
        XCTAssertEqual(read1, big)
        XCTAssertEqual(r1, rev1)

        // The next write goes to the other slot; the first stays readable until the head moves.
        let small = checkpoint(devices: 10, sequence: 200)
        let (head2, rev2) = try store.write(small, key: "p1", previous: head1, revision: rev1)
        XCTAssertNotEqual(head2.slot, head1.slot)
        XCTAssertEqual(try store.read(key: "p1")?.0, small)

        // Another worker holding an old revision is refused, and leaves the checkpoint in force
        // readable; so is one that creates a head where one exists.
        let other = checkpoint(devices: 15_000, sequence: 300, owner: "b")
        XCTAssertThrowsError(try store.write(other, key: "p1", previous: head1, revision: rev1)) { error in
            guard case CheckpointError.ownershipLost = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try store.write(other, key: "p1", previous: nil, revision: 0))
        XCTAssertEqual(try store.read(key: "p1")?.0, small)

        // A new worker takes over from the current head: its checkpoint is read back, and the
        // chunks of the one before are deleted.
        let (head3, _) = try store.write(other, key: "p1", previous: head2, revision: rev2)
        XCTAssertEqual(try store.read(key: "p1")?.0, other)
        XCTAssertNil(try connection.keyValue(bucket: topology.stateBucket).get(store.chunkKey("p1", owner: "a", slot: head2.slot, 0)))

        // A damaged chunk is refused, never read as an empty state.
        let kv = try connection.keyValue(bucket: topology.stateBucket)
        try kv.put(store.chunkKey("p1", owner: "b", slot: head3.slot, 0), [1, 2, 3])
        XCTAssertThrowsError(try store.read(key: "p1"))
    }

    /// `ClusterVisits.checkpoints` reads while a worker keeps writing (three checkpoints of
    /// different lengths, so a read mixing two fails its checks): every read gives one of the
    /// checkpoints written, whole, and none fails. (Here a read, about 100 ms with its decoding,
    /// fetches its chunks in a few ms, while a write takes about 30: a read torn by two writes
    /// was not seen in runs with one attempt, so the retry on a moved head is not forced here.)
    /// A damaged checkpoint whose head stays put is refused at once, not retried.
    func testCheckpointsReadWhileAWorkerWritesAreWhole() throws {
        let connection = try NATSConnection(servers: [server!.url], name: "test")
        let topology = Topology(partitions: 2)
        try Deployment.setup(connection: connection, topology: topology)
        let store = CheckpointStore(kv: try connection.keyValue(bucket: topology.stateBucket))
        let written = (0..<3).map { checkpoint(devices: 15_000 + 7 * $0, sequence: UInt64(100 + $0)) }
        XCTAssertGreaterThan(written[0].encoded().count, 2 * CheckpointStore.chunkSize)
        let first = try store.write(written[0], key: "p1", previous: nil, revision: 0)
        let stop = ManagedAtomicFlag()
        let writer = Thread {
            var (head, revision) = first
            var k = 1
            while !stop.isSet {
                (head, revision) = try! store.write(written[k % 3], key: "p1", previous: head, revision: revision)
                k += 1
            }
        }
        writer.start()
        let reader = try NATSConnection(servers: [server!.url], name: "reader")
        var reads = 0
        let deadline = Date().addingTimeInterval(4)
        while Date() < deadline {
            let partitions = try ClusterVisits.checkpoints(connection: reader, topology: topology, attempts: 20)
            XCTAssertNil(partitions[0].checkpoint)
            let got = try XCTUnwrap(partitions[1].checkpoint)
            XCTAssertTrue(written.contains(got), "a read gave a checkpoint never written")
            reads += 1
        }
        stop.set()
        while !writer.isFinished { usleep(10_000) }
        XCTAssertGreaterThan(reads, 5)

        // Damaged, head unmoved: refused at the first attempt.
        let kv = try connection.keyValue(bucket: topology.stateBucket)
        let head = try XCTUnwrap(try store.head(key: "p1")).0
        try kv.put(store.chunkKey("p1", owner: "a", slot: head.slot, 0), [1, 2, 3])
        XCTAssertThrowsError(try ClusterVisits.checkpoints(connection: reader, topology: topology)) { error in
            XCTAssertTrue("\(error)".contains("checkpoint p1"), "\(error)")
        }
    }
}

/// A flag one thread sets and another reads.
final class ManagedAtomicFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}

/// Where a resumed session's consumer starts (`PartitionWorker.consumerStart`): one and a
/// quarter 8 MiB blocks' worth of messages before `replayFrom`, never before the stream's first
/// message nor more than half of `maxAckPending` back, and at `replayFrom` when there is
/// nothing before it.
final class ConsumerStartTests: XCTestCase {
    func state(messages: UInt64, bytes: UInt64, first: UInt64, last: UInt64) -> StreamState {
        StreamState(messages: messages, bytes: bytes, firstSequence: first, lastSequence: last, subjects: [], replicas: 1, duplicateWindow: 120)
    }

    func testTheConsumerStartsABlockBeforeTheReplay() {
        func start(_ replayFrom: UInt64, _ s: StreamState?, ackPending: Int = 1_000_000) -> UInt64 {
            PartitionWorker.consumerStart(replayFrom: replayFrom, state: s, maxAckPending: ackPending)
        }
        // Empty, or replay from the first message: unchanged.
        XCTAssertEqual(start(1, nil), 1)
        XCTAssertEqual(start(500, state(messages: 0, bytes: 0, first: 0, last: 0)), 500)
        XCTAssertEqual(start(100, state(messages: 900, bytes: 90_000, first: 100, last: 999)), 100)
        // A small stream: from its first message.
        XCTAssertEqual(start(40_000, state(messages: 60_000, bytes: 9_000_000, first: 1, last: 60_000)), 1)
        XCTAssertEqual(start(40_000, state(messages: 50_000, bytes: 7_500_000, first: 10_001, last: 60_000)), 10_001)
        // A large one: 10 MiB / 150 bytes + 1 = 69,906 messages back.
        let big = state(messages: 10_000_000, bytes: 1_500_000_000, first: 1, last: 10_000_000)
        XCTAssertEqual(start(9_000_000, big), 9_000_000 - 69_906)
        // At most half of max-ack-pending back (0: no limit).
        XCTAssertEqual(start(9_000_000, big, ackPending: 100), 9_000_000 - 50)
        XCTAssertEqual(start(9_000_000, big, ackPending: 0), 9_000_000 - 69_906)
        // Never past replayFrom, whatever the sizes.
        for mean: UInt64 in [1, 10, 1_000, 1 << 20, 1 << 30] {
            let s = state(messages: 1_000, bytes: 1_000 * mean, first: 5, last: 100_000)
            XCTAssertTrue((5...50_000).contains(start(50_000, s)), "mean \(mean): \(start(50_000, s))")
        }
    }
}
