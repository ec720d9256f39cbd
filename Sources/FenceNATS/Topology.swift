/// Names of everything the workers share on the NATS side, derived from two settings: the
/// subject prefix producers publish under and the partition count.
///
/// | what | name (defaults) |
/// | --- | --- |
/// | a device's fixes, as published | `fix.<device token>` |
/// | ... after the server's mapping | `fix.<partition>.<device token>` |
/// | fence changes (one subject, one position for every partition) | `fix.ctl.fences` |
/// | a partition's tick after a change | `fix.<partition>._tick` |
/// | fix stream | `FENCE_FIXES` (subjects `fix.0.*` ... `fix.<N-1>.*` and `fix.ctl.fences`) |
/// | events of partition p | `fence.events.<p>` in stream `FENCE_EVENTS` |
/// | checkpoints | bucket `FENCE_STATE`, key `p<p>` and its chunks |
/// | consumer of partition p | durable `fence-p<p>` |
/// | the latest worker's session on p | bucket `FENCE_STATE`, key `p<p>.session` (`SessionMarker`) |
/// | which worker runs p | bucket `FENCE_STATE`, key `p<p>.lease` (`PartitionLease`) |
public struct Topology: Sendable, Hashable {
    /// Subject prefix producers publish fixes under.
    public var prefix: String
    /// Number of partitions the server's mapping spreads devices over.
    public var partitions: Int
    /// Prefix of stream, bucket and consumer names.
    public var name: String

    public init(prefix: String = "fix", partitions: Int, name: String = "FENCE") {
        self.prefix = prefix
        self.partitions = partitions
        self.name = name
    }

    public var fixStream: String { name + "_FIXES" }
    public var eventStream: String { name + "_EVENTS" }
    public var stateBucket: String { name + "_STATE" }
    public var eventPrefix: String { name.lowercased() + ".events" }

    /// Where a producer publishes a device's fixes; the server maps it to the device's partition.
    public func subject(device: String) -> String { prefix + "." + DeviceToken.encode(device) }
    /// Subjects the fix stream captures: each partition's mapped fixes and ticks, one subject
    /// a partition, and the fence changes. Not `prefix.*.*`: a server whose mapping spreads
    /// devices over more partitions than `partitions` would then store fixes under a
    /// partition no worker reads, and every publish would still be acknowledged. Listed one by
    /// one, such a fix is taken by no stream and its publish fails ("no responders").
    /// - Complexity: `partitions` + 1 subjects (at most 1,025; `fence setup` caps N at 1,024).
    public var fixStreamSubjects: [String] { (0..<partitions).map(partitionFilter) + [controlSubject] }
    /// What partition `p`'s consumer reads.
    public func partitionFilter(_ p: Int) -> String { "\(prefix).\(p).*" }
    /// The one subject of fence changes. Its middle token is not a number, so no partition's
    /// filter matches it, and it has three tokens, so the two-token mapping leaves it alone.
    public var controlSubject: String { prefix + ".ctl.fences" }
    /// An empty message after a fence change, so that partition `p` meets the change at once.
    public func tickSubject(_ p: Int) -> String { "\(prefix).\(p)._tick" }
    public func eventSubject(_ p: Int) -> String { "\(eventPrefix).\(p)" }
    public var eventSubjects: [String] { [eventPrefix + ".*"] }
    public func consumerName(_ p: Int) -> String { "\(name.lowercased())-p\(p)" }
    public func checkpointKey(_ p: Int) -> String { "p\(p)" }
    public func sessionKey(_ p: Int) -> String { "p\(p).session" }
    public func leaseKey(_ p: Int) -> String { "p\(p).lease" }
    /// Key of the record that pins the partition count, so that every tool agrees on it.
    public static let topologyKey = "topology"

    /// The server configuration line that partitions devices (nats-server 2.8+), to be put in
    /// every server's configuration: `mappings = { <this> }`.
    public var mapping: String { "\"\(prefix).*\": \"\(prefix).{{partition(\(partitions),1)}}.{{wildcard(1)}}\"" }
}

/// A device id as one subject token. NATS tokens cannot hold `.`, `*`, `>` or white space, and
/// should stay printable: ids made only of ASCII letters, digits and `-` (not starting with
/// `_`) are used as they are, every other id becomes `_` followed by the hex of its UTF-8.
/// Either way one device always gives the same token, so it always lands in one partition.
/// Tokens the worker reserves (`_tick`) contain letters past `f` and so are no encoding.
public enum DeviceToken {
    public static func encode(_ device: String) -> String {
        let utf8 = device.utf8
        let plain =
            !utf8.isEmpty
            && utf8.allSatisfy { b in
                (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2D || b == 0x5F
            } && utf8.first != 0x5F
        if plain { return device }
        let hex = Array("0123456789abcdef".utf8)
        var out: [UInt8] = [0x5F]
        out.reserveCapacity(1 + utf8.count * 2)
        for b in utf8 {
            out.append(hex[Int(b >> 4)])
            out.append(hex[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
