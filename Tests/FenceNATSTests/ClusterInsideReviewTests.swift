import FenceEngine
import Foundation
import XCTest

@testable import FenceNATS

/// `fence inside --nats`: what a review found.
extension NATSClusterTests {
    /// `--output` naming the `--fences` file is refused (as `fence eval` refuses it), before
    /// anything is read or written: it was read, then overwritten with the visits.
    func testInsideNATSRefusesAnOutputThatIsItsFences() throws {
        let urls = try startSingleServer(partitions: 1)
        let fences = folder + "/base.geojson"
        let text = #"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"id":"a","radius":500},"geometry":{"type":"Point","coordinates":[5,45]}}]}"#
        try Data(text.utf8).write(to: URL(fileURLWithPath: fences))
        let status = try FenceCLI.run(["inside", "--nats", urls[0], "--fences", fences, "--output", fences], log: folder + "/same.log")
        XCTAssertEqual(status, 2, log("same"))
        XCTAssertEqual(try String(contentsOfFile: fences, encoding: .utf8), text, "the fence file was overwritten")
    }

    /// Fence options, --threads and --repair without --fences do nothing with --nats: refused,
    /// as they are without --nats. (`--threads 0` was accepted.)
    func testInsideNATSRefusesFenceOptionsWithoutFences() throws {
        let urls = try startSingleServer(partitions: 1)
        for extra in [["--threads", "0"], ["--threads", "2"], ["--repair"], ["--id-field", "name"]] {
            XCTAssertEqual(try FenceCLI.run(["inside", "--nats", urls[0]] + extra, log: folder + "/opts.log"), 2, "\(extra): \(log("opts"))")
        }
    }

    /// A damaged checkpoint is status 1 and named, whatever is damaged: the head, or a
    /// checkpoint whose chunks pass their CRC but do not decode.
    func testInsideNATSNamesADamagedHeadOrCheckpoint() throws {
        let urls = try startSingleServer(partitions: 2)
        let connection = try NATSConnection(servers: urls, name: "test")
        let topology = try Deployment.topology(connection: connection)
        let kv = try connection.keyValue(bucket: topology.stateBucket)
        let store = CheckpointStore(kv: kv)

        _ = try kv.put(topology.checkpointKey(1), [1, 2, 3, 4, 5])
        XCTAssertEqual(try FenceCLI.run(["inside", "--nats", urls[0]], log: folder + "/head.log"), 1, log("head"))
        XCTAssertTrue(log("head").contains("checkpoint \(topology.checkpointKey(1))"), log("head"))

        let bytes: [UInt8] = Array("not a checkpoint".utf8)
        _ = try kv.put(store.chunkKey(topology.checkpointKey(1), owner: "x", slot: 0, 0), bytes)
        let head = CheckpointStore.Head(
            slot: 0, chunks: 1, length: UInt64(bytes.count), crc: CRC32.checksum(bytes), lastSequence: 1, replayFrom: 1,
            lastChangeSequence: 0, owner: "x", written: 0)
        _ = try kv.put(topology.checkpointKey(1), head.encoded())
        XCTAssertEqual(try FenceCLI.run(["inside", "--nats", urls[0]], log: folder + "/body.log"), 1, log("body"))
        XCTAssertTrue(log("body").contains("checkpoint \(topology.checkpointKey(1))"), log("body"))
    }
}
