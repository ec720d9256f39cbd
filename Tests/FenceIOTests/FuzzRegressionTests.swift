import FenceEngine
@testable import FenceIO
import Foundation
import XCTest

/// Every seed and every kept crasher of Tests/Fuzz (see Tests/Fuzz/README.md) through the same
/// paths the fuzz targets drive, in the ordinary test build: a fixed crasher stays fixed.
final class FuzzRegressionTests: XCTestCase {
    static let fuzzFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz")

    /// The files of corpus/TARGET and crashers/TARGET (the latter may not exist).
    func inputs(_ target: String) -> [URL] {
        var out: [URL] = []
        for folder in ["corpus", "crashers"] {
            let dir = Self.fuzzFolder.appendingPathComponent(folder).appendingPathComponent(target)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
            out += names.sorted().map { dir.appendingPathComponent($0) }
        }
        return out
    }

    func testPositionInputs() throws {
        let files = inputs("positions-csv").map { ($0, PositionReader.Format.csv) } + inputs("positions-ndjson").map { ($0, .ndjson) }
        XCTAssertGreaterThan(files.count, 5, "the seeds are in \(Self.fuzzFolder.path)")
        for (file, format) in files {
            for (limit, batch) in [(1 << 16, 1 << 16), (1 << 16, 1), (48, 7)] {
                let reader = try PositionReader(path: file.path, format: format, maxLineBytes: limit)
                var positions: [Position] = []
                var errors: [PositionLineError] = []
                do {
                    while try reader.read(limit: batch, into: &positions, errors: &errors) {}
                } catch {
                    continue  // refused as a whole (empty, binary, bad header): fine
                }
                XCTAssertTrue(positions.allSatisfy { $0.problem == nil && !$0.device.isEmpty }, file.lastPathComponent)
                XCTAssertEqual(errors.map(\.line), errors.map(\.line).sorted(), file.lastPathComponent)
            }
        }
    }

    func testFenceInputs() throws {
        let files = inputs("fences")
        XCTAssertGreaterThan(files.count, 2)
        for file in files {
            // As the fuzz target checks: three threads read what one reads, or fail alike
            // (compared with ==: equal dictionaries may print in different orders).
            let bytes = try Data(contentsOf: file)
            var outcomes: [Result<FenceReadResult, FenceError>] = []
            for threads in [1, 3] {
                var options = FenceInputOptions()
                options.threads = threads
                options.parallelMinimumBytes = 0
                do {
                    outcomes.append(.success(try GeoJSONFences.read(bytes, layer: "fuzz", options: options)))
                } catch {
                    outcomes.append(.failure(error))
                }
            }
            switch (outcomes[0], outcomes[1]) {
            case (.success(let one), .success(let three)):
                XCTAssertTrue(one.fences == three.fences && one.origins == three.origins && one.rejected == three.rejected, file.lastPathComponent)
            case (.failure(let one), .failure(let three)):
                XCTAssertEqual(one, three, file.lastPathComponent)
            default:
                XCTFail("\(file.lastPathComponent): one thread \(outcomes[0]), three \(outcomes[1])")
            }
            guard let report = try? GeoJSONFences.read(bytes) else { continue }
            var store = FenceStore()
            let results = store.add(report.fences, threads: 1)
            for (fence, result) in zip(report.fences, results) where result.error == nil && fence.coord == .wgs84 {
                if case .circle(let center, _) = fence.shape {
                    XCTAssertTrue(store.ids(covering: center).contains(fence.id), "\(file.lastPathComponent): \(fence.id)")
                }
            }
            var repaired = FenceStore()
            _ = repaired.add(report.fences, repair: true, threads: 1)
        }
    }

    /// The WKB fence path (target `wkb`): the bytes through `WKBShapeReader` with the default
    /// and tight limits, into a store with and without repair, and a few queries.
    func testWKBInputs() throws {
        let files = inputs("wkb")
        XCTAssertGreaterThan(files.count, 5)
        var tight = FenceLimits()
        tight.maxPositions = 64
        tight.maxPolygons = 3
        let readers = [WKBShapeReader(), WKBShapeReader(limits: tight)]
        for file in files {
            let bytes = try [UInt8](Data(contentsOf: file))
            let radius = Double(bytes.last ?? 0) * 40 + 1
            let shapes = readers.map { try? $0.shape(bytes, radius: radius) }
            if shapes[1] != nil { XCTAssertNotNil(shapes[0], "\(file.lastPathComponent): the tight limits accept more") }
            guard let shape = shapes[0] else { continue }
            for repair in [false, true] {
                var store = FenceStore()
                guard store.add([Fence(id: "wkb", shape: shape)], repair: repair, threads: 1)[0].error == nil else { continue }
                // Each fence covers what defines it: a circle its centre, a polygon its first vertex.
                let defining: [LonLat]
                switch shape {
                case .circle(let center, _): defining = [center]
                case .polygons(let parts): defining = parts.map(\.exterior[0])
                }
                if !repair {
                    for p in defining { XCTAssertEqual(store.ids(covering: p), ["wkb"], "\(file.lastPathComponent) at \(p)") }
                }
                let probes = defining + [LonLat(lon: 0.5, lat: 0.5), LonLat(lon: 180, lat: 0)]
                let batch = store.covering(probes, threads: 1)
                for (i, p) in probes.enumerated() {
                    XCTAssertEqual(batch[i].count, store.ids(covering: p).count, file.lastPathComponent)
                    _ = store.nearestBoundary(to: p)
                }
            }
        }
    }

    func testCheckpointInputs() throws {
        let files = inputs("checkpoint")
        XCTAssertGreaterThan(files.count, 2)
        for file in files {
            let bytes = try [UInt8](Data(contentsOf: file))
            guard let snapshot = try? TrackerSnapshot(decoding: bytes) else { continue }
            XCTAssertEqual(try TrackerSnapshot(decoding: snapshot.encoded()).encoded(), snapshot.encoded(), file.lastPathComponent)
            var engine = EventEngine()
            _ = engine.add([.circle(id: "port", lon: 0, lat: 0, radius: 1000)], threads: 1)
            try engine.restore(snapshot)
            let fixes = snapshot.devices.prefix(8).map {
                Position(device: $0.id, time: ($0.lastTime.isFinite ? $0.lastTime : 0) + 1, lon: 0, lat: 0)
            }
            _ = engine.evaluate(fixes, threads: 1)
            _ = engine.snapshot().encoded()
        }
    }
}
