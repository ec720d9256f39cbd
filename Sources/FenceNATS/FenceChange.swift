import FenceEngine
import FenceIO
import Foundation

/// A change to the fences every worker holds, carried in the fix stream on one subject so it
/// has one stream position for all partitions.
///
/// Each partition applies it as a barrier: every fix of the partition stored before the change
/// is applied first (held fixes are released), then the change, then the fixes after it. So a
/// device's events around a change depend only on that device's fixes and the change's stream
/// position: the same in one process as in any number of partitions, and the same again when a
/// partition is replayed from a checkpoint. One exception: a fence added with an `expires` the
/// partition's clock (its latest fix, whatever the device) has already passed expires at once
/// (`EventEngine.add`: `fence-expired` at its expiry), where a partition whose clock is short
/// of it keeps the replacement until the clock passes it, judging its new shape and mask first
/// (`fence-replaced` at the device's last fix, a re-trigger); and a device's later fix dated
/// before that expiry still enters it only there. So around such a change a device's events
/// depend on the partition's other devices.
///
/// Payload (binary): `F` `C` (magic), version (u8) = 1, the stream sequence of the previous
/// change (u64; 0 for the first: the changes form a chain a worker walks back from the latest),
/// the operation (u8), then its argument:
/// - 1 `add`: a GeoJSON FeatureCollection (u64 length + bytes); same id replaces. Read as
///   WGS84 longitude/latitude: a `crs` member naming another CRS refuses it, as a file's does
/// - 2 `remove`: fence ids (u32 count, each u32 length + UTF-8)
/// - 3 `removeGroups`: group names, the same way
/// - 4 `removeAll`
/// - 5 `flush`: releases every held fix (end of input), changes no fence
public struct FenceChange: Sendable, Hashable {
    public enum Operation: Sendable, Hashable {
        case add(geoJSON: [UInt8])
        case remove(ids: [String])
        case removeGroups([String])
        case removeAll
        case flush
    }

    public var operation: Operation
    /// Stream sequence of the change before this one (0: none).
    public var previous: UInt64

    public init(_ operation: Operation, previous: UInt64 = 0) {
        self.operation = operation
        self.previous = previous
    }

    public func encoded() -> [UInt8] {
        var w = ByteWriter()
        w.u8(0x46)
        w.u8(0x43)
        w.u8(1)
        w.u64(previous)
        switch operation {
        case .add(let geoJSON):
            w.u8(1)
            w.block(geoJSON)
        case .remove(let ids):
            w.u8(2)
            w.u32(UInt32(ids.count))
            for id in ids { w.string(id) }
        case .removeGroups(let groups):
            w.u8(3)
            w.u32(UInt32(groups.count))
            for g in groups { w.string(g) }
        case .removeAll:
            w.u8(4)
        case .flush:
            w.u8(5)
        }
        return w.bytes
    }

    public init(decoding bytes: UnsafeRawBufferPointer) throws(FixBatchError) {
        var r = ByteReader(bytes)
        guard r.u8() == 0x46, r.u8() == 0x43 else { throw FixBatchError("not a fence change (bad magic)") }
        guard r.u8() == 1 else { throw FixBatchError("fence change version is not 1") }
        guard let previous = r.u64(), let op = r.u8() else { throw FixBatchError("truncated fence change") }
        func strings() throws(FixBatchError) -> [String] {
            guard let n = r.u32(), Int(n) <= r.remaining / 4 else { throw FixBatchError("truncated list") }
            var out: [String] = []
            for _ in 0..<n {
                guard let s = r.string() else { throw FixBatchError("truncated list") }
                out.append(s)
            }
            return out
        }
        let operation: Operation
        switch op {
        case 1:
            guard let g = r.block() else { throw FixBatchError("truncated GeoJSON") }
            operation = .add(geoJSON: g)
        case 2: operation = .remove(ids: try strings())
        case 3: operation = .removeGroups(try strings())
        case 4: operation = .removeAll
        case 5: operation = .flush
        default: throw FixBatchError("unknown fence change operation \(op)")
        }
        guard r.remaining == 0 else { throw FixBatchError("\(r.remaining) bytes after the fence change") }
        self.init(operation, previous: previous)
    }

    /// What every worker will refuse in a fence file to add (the document, or single fences),
    /// found as they find it: `apply` to an empty engine. `fence change` checks with this
    /// before publishing, since a change stays in the stream.
    /// An add with no fence at all is one too: it would sit in the stream and change nothing.
    public static func problems(adding geoJSON: [UInt8]) -> [String] {
        var engine = EventEngine()
        var errors: [String] = []
        _ = FenceChange(.add(geoJSON: geoJSON)).apply(to: &engine, errors: &errors)
        if errors.isEmpty && engine.store.count == 0 { errors.append("it holds no fence: nothing to add") }
        return errors
    }

    /// What a change refused for its GeoJSON's `crs` says to do: no reader of a change
    /// reprojects, as OGR does for a fence file.
    static let crsWayOn = "a fence change is not reprojected: convert the file first, e.g. ogr2ogr -t_srs EPSG:4326 out.geojson in.geojson"

    /// Applies the change to an engine; the events are those of the fences' removal or
    /// replacement (exits at each device's last fix, re-triggers, and `fence-expired` exits of
    /// fences added with an expiry the clock has passed: `EventEngine.add`), sorted. Fences the GeoJSON gets wrong are
    /// reported in `errors` and skipped, the same way in every partition (a document declaring
    /// a CRS other than WGS84 longitude/latitude adds nothing: `GeoJSONFences.readLonLat`); so
    /// are ids and groups a removal names that no loaded fence has (most likely a typo, which
    /// `fence change` cannot see: only the workers know their fences), each quoted as a JSON
    /// string (an id holding `"` or `,` reads unambiguously).
    /// - Complexity: that of `EventEngine.add` / `remove`: O(devices inside the fences touched)
    ///   plus the store's update.
    public func apply(to engine: inout EventEngine, errors: inout [String]) -> [FenceEvent] {
        switch operation {
        case .add(let geoJSON):
            do {
                // One thread, as the add below: partitions apply changes side by side.
                var options = FenceInputOptions()
                options.threads = 1
                // Its `crs` as a file's: a document in another CRS is refused, never read as
                // longitude/latitude (nothing reprojects a change).
                let read = try GeoJSONFences.readLonLat(Data(geoJSON), layer: "stdin", options: options, wayOn: Self.crsWayOn)
                errors += read.rejected.map { "\($0.error)" }
                let (results, events) = engine.add(read.fences, threads: 1)
                errors += results.compactMap { $0.error.map { "\($0)" } }
                return events
            } catch {
                errors.append("\(error)")
                return []
            }
        case .remove(let ids):
            // An id named twice is unknown the second time, as if removed one by one.
            var named = Set<ExactID>()
            for id in ids where engine.store.handle(id: id) == nil || !named.insert(ExactID(id)).inserted {
                errors.append("remove: no fence \(OutputEscaping.jsonString(id)) is loaded")
            }
            return engine.remove(ids: ids)
        case .removeGroups(let groups):
            var events: [FenceEvent] = []
            for g in groups {
                // As for ids: a group named twice is unknown the second time.
                if !engine.store.hasFences(inGroup: g) { errors.append("remove-group: no loaded fence is in group \(OutputEscaping.jsonString(g))") }
                events += engine.remove(group: g)
            }
            return events.sorted()
        case .removeAll:
            return engine.removeAll()
        case .flush:
            return []
        }
    }
}
