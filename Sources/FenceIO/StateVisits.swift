import FenceEngine

/// The visits a saved tracker state holds (`fence eval --state`'s file): who is inside each
/// fence, as of that state's last fixes. `EventEngine.devices(insideOf:)` answers the same for
/// a live engine; this reads the file without the fences, so it answers even where the fences
/// are not at hand, and reports each visit as the run that wrote the file left it (a fence
/// removed or reshaped since is seen by the next `fence eval` on that state, not here).
public enum StateVisits {
    /// One visit: a device inside, or stayed in, a fence.
    public struct Visit: Sendable, Equatable {
        public var fence: String
        /// The fence's group as the state recorded it (nil without one, or from a version 1
        /// state file, which records no fences).
        public var group: String?
        public var device: String
        /// True once `dwell` fired for the visit (`stayed`), else `inside`.
        public var stayed: Bool
        /// When the visit began (its `enter`).
        public var since: Double
        /// The device's last fix: its time and WGS84 position.
        public var time: Double
        public var lon: Double
        public var lat: Double
        /// Set when the device was last seen outside and its `exit` waits out an exit delay:
        /// the first fix outside. The visit still counts (as it does in events).
        public var exitPendingSince: Double?
    }

    /// Which visits to list: nil lists every one; a list keeps those it names, by exact bytes
    /// (two ids Unicode calls equivalent, NFC `é` and NFD `e` + U+0301, are two names, as the
    /// engine tells ids apart: `ExactID`).
    public struct Filter: Sendable {
        public var fences: [String]?
        public var groups: [String]?
        public var devices: [String]?
        public init(fences: [String]? = nil, groups: [String]? = nil, devices: [String]? = nil) {
            self.fences = fences
            self.groups = groups
            self.devices = devices
        }
    }

    /// The names of a filter that some visit carries, each kind judged alone (a fence named
    /// with `--fence` that some device is in, whatever `--device` says): `list` collects them,
    /// `unmatched` reports the rest. UTF-8 bytes, as the filter compares names.
    public struct Matches: Sendable {
        var fences = Set<[UInt8]>()
        var groups = Set<[UInt8]>()
        var devices = Set<[UInt8]>()
        public init() {}
    }

    /// The snapshot's visits that `filter` keeps, by fence id, then device id (UTF-8 byte
    /// order: `precedes`). Pairs whose status hysteresis left unknown are not visits and are
    /// left out, as `devices(insideOf:)` leaves them out. The kinds of names combine as AND
    /// (a visit is kept when its fence, group and device are each named, or that kind not
    /// filtered); names of one kind as OR.
    /// - Parameters:
    ///   - given: each fence's group (fence id -> group), for a snapshot that records no
    ///     fences (a partition checkpoint: `ClusterVisits.groups`); nil takes the groups the
    ///     snapshot records.
    ///   - matches: gains the names each of which some visit carries, judged alone.
    /// - Complexity: O(devices + pairs + fences recorded), and the sort of the visits kept;
    ///   with only `devices` given, the pairs of the other devices are not read.
    public static func list(
        _ snapshot: TrackerSnapshot, groups given: IDTable<String>? = nil, filter: Filter = Filter(), matches: inout Matches
    ) -> [Visit] {
        // By their bytes, as the engine tells ids apart (`ExactID`): two ids that Unicode calls
        // equivalent are two fences.
        func bytes(_ names: [String]?) -> Set<[UInt8]>? { names.map { Set($0.map { Array($0.utf8) }) } }
        let (fences, groupNames, devices) = (bytes(filter.fences), bytes(filter.groups), bytes(filter.devices))
        var groups = given ?? IDTable<String>()
        if given == nil {
            for r in snapshot.fences { if let g = r.group { groups[r.id] = g } }
        }
        var out: [Visit] = []
        for d in snapshot.devices {
            let device = devices == nil ? nil : Array(d.id.utf8)
            let deviceKept = device.map { devices!.contains($0) } ?? true
            // Other devices' pairs matter only to say which fence and group names match.
            if !deviceKept && fences == nil && groupNames == nil { continue }
            for p in d.pairs where !p.undetermined {
                if let device, deviceKept { matches.devices.insert(device) }
                var kept = deviceKept
                if let only = fences {
                    let fence = Array(p.fence.utf8)
                    if only.contains(fence) { matches.fences.insert(fence) } else { kept = false }
                }
                let group = groups[p.fence]
                if let only = groupNames {
                    if let g = group.map({ Array($0.utf8) }), only.contains(g) { matches.groups.insert(g) } else { kept = false }
                }
                guard kept else { continue }
                out.append(
                    Visit(
                        fence: p.fence, group: group, device: d.id, stayed: p.stayed, since: p.enterTime, time: d.lastTime,
                        lon: d.lastLon, lat: d.lastLat, exitPendingSince: p.exitPending ? p.pendingSince : nil))
            }
        }
        out.sort(by: precedes)
        return out
    }

    /// `list(_:groups:filter:matches:)` without the matches.
    public static func list(_ snapshot: TrackerSnapshot, groups given: IDTable<String>? = nil, filter: Filter = Filter()) -> [Visit] {
        var matches = Matches()
        return list(snapshot, groups: given, filter: filter, matches: &matches)
    }

    /// The order visits are listed in: by fence id, then device id, comparing UTF-8 bytes.
    public static func precedes(_ a: Visit, _ b: Visit) -> Bool {
        let c = UTF8Order.compare(a.fence, b.fence)
        return c != 0 ? c < 0 : UTF8Order.precedes(a.device, b.device)
    }

    /// The names of `filter` that no visit of `visits` carries (visits already filtered:
    /// a name can seem unmatched only because another kind's names left its visits out;
    /// `unmatched(_:matches:)` judges each kind alone).
    @available(*, deprecated, message: "judge each kind alone: list(_:groups:filter:matches:), then unmatched(_:matches:)")
    public static func unmatched(_ filter: Filter, in visits: [Visit]) -> [(option: String, names: [String])] {
        var matches = Matches()
        for v in visits {
            matches.fences.insert(Array(v.fence.utf8))
            if let g = v.group { matches.groups.insert(Array(g.utf8)) }
            matches.devices.insert(Array(v.device.utf8))
        }
        return unmatched(filter, matches: matches)
    }

    /// The names of each of `filter`'s lists (option name: fence, group, device) that no
    /// visit carries, each kind judged alone (`matches`, from `list`), in the order given,
    /// each once: a misspelt id, or a fence nobody is in. A fence some device is in is not
    /// among them though `--device` names none of its devices.
    /// - Complexity: O(names).
    public static func unmatched(_ filter: Filter, matches: Matches) -> [(option: String, names: [String])] {
        func missing(_ names: [String]?, _ seen: Set<[UInt8]>) -> [String] {
            guard let names else { return [] }
            var said = Set<[UInt8]>()
            return names.filter { !seen.contains(Array($0.utf8)) && said.insert(Array($0.utf8)).inserted }
        }
        return [
            ("fence", missing(filter.fences, matches.fences)), ("group", missing(filter.groups, matches.groups)),
            ("device", missing(filter.devices, matches.devices)),
        ]
    }

    /// The CSV columns, in order.
    public static let csvColumns = ["fence", "group", "device", "status", "since", "time", "inside_s", "lon", "lat", "exit_pending_since"]

    /// The header line of `format` (CSV only; empty for NDJSON).
    public static func header(_ format: EventWriter.Format) -> [UInt8] {
        format == .csv ? Array((csvColumns.joined(separator: ",") + "\n").utf8) : []
    }

    /// Appends one visit as a line: NDJSON objects with the fields of `csvColumns` (no
    /// `group` or `exit_pending_since` where there is none), times in ISO 8601 UTC to the
    /// millisecond and `inside_s` (from `since` to the last fix) to the millisecond, as events
    /// write them; or CSV rows, empty cells for what is missing.
    public static func append(_ v: Visit, format: EventWriter.Format, to out: inout [UInt8]) {
        let status = v.stayed ? "stayed" : "inside"
        switch format {
        case .ndjson:
            out.appendUTF8("{\"fence\":")
            OutputEscaping.appendJSONString(v.fence, to: &out)
            if let g = v.group {
                out.appendUTF8(",\"group\":")
                OutputEscaping.appendJSONString(g, to: &out)
            }
            out.appendUTF8(",\"device\":")
            OutputEscaping.appendJSONString(v.device, to: &out)
            out.appendUTF8(",\"status\":\"\(status)\",\"since\":\"")
            ISO8601.append(v.since, to: &out)
            out.appendUTF8("\",\"time\":\"")
            ISO8601.append(v.time, to: &out)
            out.appendUTF8("\",\"inside_s\":\(EventWriter.seconds(v.time - v.since)),\"lon\":\(v.lon),\"lat\":\(v.lat)")
            if let t = v.exitPendingSince {
                out.appendUTF8(",\"exit_pending_since\":\"")
                ISO8601.append(t, to: &out)
                out.append(34)
            }
            out.appendUTF8("}\n")
        case .csv:
            out.appendUTF8(OutputEscaping.csvField(v.fence))
            out.append(44)
            if let g = v.group { out.appendUTF8(OutputEscaping.csvField(g)) }
            out.append(44)
            out.appendUTF8(OutputEscaping.csvField(v.device))
            out.appendUTF8(",\(status),")
            ISO8601.append(v.since, to: &out)
            out.append(44)
            ISO8601.append(v.time, to: &out)
            out.appendUTF8(",\(EventWriter.seconds(v.time - v.since)),\(v.lon),\(v.lat),")
            if let t = v.exitPendingSince { ISO8601.append(t, to: &out) }
            out.append(10)
        }
    }
}
