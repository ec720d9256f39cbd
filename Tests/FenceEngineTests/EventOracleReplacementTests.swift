@testable import FenceEngine
import XCTest

/// Fence replacement (same id: a new shape, mask, group or expiry), removal and expiry between
/// batches, with `cross`, hysteresis margins, dwell and exit delays, against a slow tracker
/// written from SPEC ("Status and events") and the README (events, masks and re-trigger, cross,
/// hysteresis, exit delay, dwell, expiry, replacement and the "Limits" list), NOT from the
/// engine's event code. Geometry is brute force too: circles by the geodesic distance, polygons
/// by a ray-crossing count, margins by a local projection, a segment against a circle by
/// sampling the geodesic distance along it; the generator keeps every fix and every segment
/// at least half a metre from each decision (boundary, margin band edges, tangency) for every
/// shape a fence takes in the scenario, so those approximations decide nothing.
///
/// The rules, per device and fence, fix by fix in time order:
/// - A fence is there for a fix at `t` unless its `expires` <= t. A device's visits of a fence
///   expired since its last fix end first (`exit`, `fence-expired`, at max(expires, last fix),
///   at the last fix's position, `inside_s` to the exit time); a batch's end does the same
///   with the batch's latest fix time as the clock, and removes such fences.
/// - Without a margin: a covered fix makes an outside pair inside (`enter`, `initial` on the
///   device's first fix, not reported with `initialEvents` off). With margin m (+ the fix's
///   accuracy): only a fix inside by m enters, only one outside by m leaves; a device's first
///   fix within m of the boundary leaves the pair `unknown`, which the first fix inside by m
///   makes inside (`enter`, `initial`) and the first one outside by m makes outside.
/// - A pair inside: a fix outside (by m) exits, or with an exit delay d starts a pending exit,
///   which fires at the first fix at least d after the first outside fix; a fix inside the
///   fence or within the margin cancels it. `dwell` fires once per visit, at the first fix at
///   least the dwell time after the enter that keeps the status inside without being outside
///   by the margin (a covered fix, or one held in the outer band; SPEC: "first fix still
///   inside"). Status is stayed from then on.
/// - `cross`: the pair is outside (or unknown) just before the fix and still is after it, the
///   device has a previous fix, both fixes lie outside the fence's area as the fence is at
///   this fix, and the straight lon/lat segment between them meets that area.
/// - Masks: a fence's own, else the engine's (with `cross` when detection is on); they filter
///   events only, status is kept whatever the mask. `cross` needs `crossDetection` too
///   (`EventSettings.crossDetection`'s doc: "also needs .cross in the mask that applies").
/// - Edits (between batches): `remove` ends visits (`fence-removed`, at the last fix). `add` of
///   an id that exists replaces it: first, a fence whose expiry the clock (latest fix so far)
///   has passed expires at once (visits end `fence-expired`, worded with the new fence, whose
///   expiry it is: its group and mask; `EventEngine.add`'s doc); then a new shape that does not cover a device's
///   last fix ends its visit (`fence-replaced`, at the last fix, worded with the fence's old
///   group and mask, as `restoreReportingChanges`'s doc says of a restore, which the README
///   says reports edits as the live engine does); the same shape ends none, a pending exit
///   included. Then, for visits still open, a mask under which the pair's status is newly
///   reported re-triggers (`reason: actions-changed`, at the last fix): `enter` (not
///   `initial`) for an inside pair, a pending one included, `dwell` (with `inside_s`) for a
///   stayed one. Later events carry the new group. Unknown pairs make no event on any edit,
///   are judged afresh by the next fix, and go with their fence.
///
/// Choices where SPEC and README are silent or loose, each counted in the statistics printed
/// (and the engine agrees with each):
/// - A pending exit whose last fix a new shape covers is cancelled (SPEC: "exit fires only
///   once the device has stayed outside for d", and under the fence as it now is the device
///   was inside at that fix); until session 37 the engine kept it running from the first
///   outside fix (`testAPendingExitEndsWhenAReshapeCoversTheLastFix`; the random tests
///   can take that reading with `cancelPendingOnCoveringReshape` off).
/// - An expiry at `add` of a replaced fence is worded with the new fence (whose expiry it is),
///   unlike the `fence-replaced` exits (the old one's): worded with the old one, its wording
///   would depend on whether the clock had passed the expiry at the add, that is on other
///   devices' fixes (a review's finding, session 37).
/// - `cross` judged by status alone ("both fixes are outside it") would also fire from a fix
///   held outside in the inner margin band, or from a last fix inside a fence added or
///   reshaped since; both fixes must be outside the area (SPEC: "two consecutive fixes both
///   outside whose straight segment passes through the fence").
/// - A fence added after a device's previous fix can be crossed by the next segment.
/// - A stayed pair re-triggers only for `dwell` (Baidu's statuses are one each).
/// - A fence added under a device already seen starts `outside` for it (no `unknown`, no
///   `initial`), margin or not.
/// - `status` of a device never seen is `unknown` (`FenceStatus.unknown`'s doc); only devices
///   seen are compared here.
final class EventOracleReplacementTests: XCTestCase {
    typealias Base = EventOracleTests

    // MARK: Geometry, by brute force

    typealias XY = (x: Double, y: Double)

    /// Metres east and north of `p` from `o`, with the WGS84 radii of curvature at `o`.
    static func local(_ p: LonLat, from o: LonLat) -> XY {
        let f = Geodesic.wgs84F
        let e2 = f * (2 - f)
        let phi = o.lat * .pi / 180
        let w = 1 - e2 * sin(phi) * sin(phi)
        let n = Geodesic.wgs84A / w.squareRoot()
        let m = Geodesic.wgs84A * (1 - e2) / (w * w.squareRoot())
        return ((p.lon - o.lon) * .pi / 180 * n * cos(phi), (p.lat - o.lat) * .pi / 180 * m)
    }

    /// Distance from `p` to the segment a-b, in the plane.
    static func segmentDistance(_ p: XY, _ a: XY, _ b: XY) -> Double {
        let dx = b.x - a.x, dy = b.y - a.y
        let l2 = dx * dx + dy * dy
        let t = l2 > 0 ? min(1, max(0, ((p.x - a.x) * dx + (p.y - a.y) * dy) / l2)) : 0
        let ex = a.x + t * dx - p.x, ey = a.y + t * dy - p.y
        return (ex * ex + ey * ey).squareRoot()
    }

    static func orient(_ a: LonLat, _ b: LonLat, _ c: LonLat) -> Double {
        (b.lon - a.lon) * (c.lat - a.lat) - (b.lat - a.lat) * (c.lon - a.lon)
    }

    static let tolerance = 0.5  // metres kept from every decision

    /// One shape's answers: covered, signed distance to the boundary (positive inside), whether
    /// a segment meets the area, and whether any of those is too close to call.
    final class Judge {
        let shape: FenceShape
        let ring: [LonLat]
        init(_ shape: FenceShape) {
            self.shape = shape
            if case .polygons(let p) = shape { ring = p[0].exterior } else { ring = [] }
        }

        func covers(_ p: LonLat) -> Bool {
            switch shape {
            case .circle(let c, let r):
                return Geodesic.distance(lon1: c.lon, lat1: c.lat, lon2: p.lon, lat2: p.lat) <= r
            case .polygons:
                var inside = false
                for i in 0..<(ring.count - 1) {
                    let a = ring[i], b = ring[i + 1]
                    if (a.lat > p.lat) != (b.lat > p.lat) {
                        let x = a.lon + (p.lat - a.lat) * (b.lon - a.lon) / (b.lat - a.lat)
                        if p.lon < x { inside.toggle() }
                    }
                }
                return inside
            }
        }

        /// Metres to the boundary, positive inside.
        func signedDistance(_ p: LonLat) -> Double {
            switch shape {
            case .circle(let c, let r):
                return r - Geodesic.distance(lon1: c.lon, lat1: c.lat, lon2: p.lon, lat2: p.lat)
            case .polygons:
                var best = Double.infinity
                for i in 0..<(ring.count - 1) {
                    best = min(best, segmentDistance((0, 0), local(ring[i], from: p), local(ring[i + 1], from: p)))
                }
                return covers(p) ? best : -best
            }
        }

        /// Closest approach of the straight lon/lat segment p-q to a circle's centre: by the
        /// plane when clearly away from the radius, else sampled on the ellipsoid.
        func circleApproach(_ p: LonLat, _ q: LonLat, _ c: LonLat, _ r: Double) -> Double {
            let planar = segmentDistance((0, 0), local(p, from: c), local(q, from: c))
            if abs(planar - r) > 10 + 0.01 * r { return planar }
            return minimumOverUnitInterval(samples: 200, rounds: 60) { t in
                Geodesic.distance(lon1: c.lon, lat1: c.lat, lon2: p.lon + t * (q.lon - p.lon), lat2: p.lat + t * (q.lat - p.lat))
            }
        }

        func meets(_ p: LonLat, _ q: LonLat) -> Bool {
            switch shape {
            case .circle(let c, let r):
                return circleApproach(p, q, c, r) <= r
            case .polygons:
                if covers(p) || covers(q) { return true }
                for i in 0..<(ring.count - 1) {
                    let a = ring[i], b = ring[i + 1]
                    let o1 = orient(p, q, a), o2 = orient(p, q, b), o3 = orient(a, b, p), o4 = orient(a, b, q)
                    if (o1 > 0) != (o2 > 0) && (o3 > 0) != (o4 > 0) { return true }
                }
                return false
            }
        }

        /// A fix too close to the boundary or to a margin band's edge to call.
        func borderline(_ p: LonLat, margin: Double) -> Bool {
            let s = signedDistance(p)
            let tol = tolerance + 0.005 * margin
            if abs(s) < tol { return true }
            return margin > 0 && (abs(s - margin) < tol || abs(s + margin) < tol)
        }

        /// A segment too close to grazing the area to call.
        func borderlineSegment(_ p: LonLat, _ q: LonLat) -> Bool {
            switch shape {
            case .circle(let c, let r):
                return abs(circleApproach(p, q, c, r) - r) < tolerance
            case .polygons:
                let pp = local(p, from: p), qq = local(q, from: p)
                for v in ring.dropLast() where segmentDistance(local(v, from: p), pp, qq) < tolerance { return true }
                return false
            }
        }
    }

    final class Judges {
        var cache: [FenceShape: Judge] = [:]
        subscript(_ s: FenceShape) -> Judge {
            if let j = cache[s] { return j }
            let j = Judge(s)
            cache[s] = j
            return j
        }
    }

    // MARK: The oracle

    typealias Stats = RuleCounts

    final class Tracker {
        struct Visit {
            var enter: Double
            var stayed = false
            var pending: Double?
        }
        enum Pair {
            case unknown
            case inside(Visit)
        }
        struct Device {
            var id: String
            var time: Double, lon: Double, lat: Double
            var pairs: [String: Pair] = [:]
            /// The edit count at its last fix (statistics).
            var editsSeen = 0
        }

        let settings: EventSettings
        let judges: Judges
        var fences: [String: Fence] = [:]
        var devices: [String: Device] = [:]
        var watermark = -Double.infinity
        var stats = Stats()
        /// Statistics: per fence, the edit count at its last replacement and what changed.
        var edited: [String: (at: Int, what: Set<String>)] = [:]
        var editCount = 0
        /// A pending exit whose last fix the new shape covers: cancelled (this oracle's reading of
        /// SPEC, "exit fires only once the device has stayed outside for d": under the fence as
        /// it now is, the device was inside at that fix), or kept running from the first outside
        /// fix (the engine's behaviour until session 37;
        /// `testAPendingExitEndsWhenAReshapeCoversTheLastFix`). The engine cancels it now.
        var cancelPendingOnCoveringReshape = true
        var trace = ProcessInfo.processInfo.environment["ORACLE_TRACE"] != nil
        private var produced: [(event: FenceEvent, seq: Int)] = []
        private var seq = 0

        init(fences: [Fence], settings: EventSettings, judges: Judges) {
            self.settings = settings
            self.judges = judges
            for f in fences { self.fences[f.id] = f }
        }

        func mask(_ f: Fence) -> FenceActions {
            f.actions ?? (settings.crossDetection ? settings.actions.union(.cross) : settings.actions)
        }

        func emit(
            _ kind: FenceEventKind, _ f: Fence, _ device: String, time: Double, lon: Double, lat: Double,
            initial: Bool = false, reason: FenceEventReason? = nil, inside: Double? = nil
        ) {
            guard mask(f).contains(kind.action) else {
                stats["masked \(kind)"] += 1
                return
            }
            produced.append(
                (FenceEvent(
                    time: time, device: device, fence: f.id, group: f.group, kind: kind, lon: lon, lat: lat,
                    initial: initial, reason: reason, insideSeconds: inside), seq))
            seq += 1
            if let e = edited[f.id], e.what.contains("group") { stats["events after a group change"] += 1 }
        }

        /// Output order: (written millisecond, device, fence), then the order they happened in.
        func take() -> [FenceEvent] {
            func key(_ e: FenceEvent) -> Double { (e.time * 1000).rounded() }
            let out = produced.sorted {
                (key($0.event), $0.event.device, $0.event.fence, $0.seq) < (key($1.event), $1.event.device, $1.event.fence, $1.seq)
            }
            produced = []
            return out.map(\.event)
        }

        /// Visits of fences whose expiry is at or before `t` end (clock-timed); unknown pairs go.
        func endExpired(_ id: String, _ d: inout Device, upTo t: Double, _ counter: String, wording: [String: Fence] = [:]) {
            for fid in d.pairs.keys.sorted() {
                guard let f = wording[fid] ?? fences[fid], let e = f.expires, e <= t else { continue }
                if case .inside(let v) = d.pairs[fid]! {
                    let time = max(e, d.time)
                    emit(.exit, f, id, time: time, lon: d.lon, lat: d.lat, reason: .fenceExpired, inside: time - v.enter)
                    stats[counter] += 1
                    if v.pending != nil { stats["expired while pending"] += 1 }
                } else {
                    stats["unknown pair expired"] += 1
                }
                d.pairs[fid] = nil
            }
        }

        func evaluate(_ fixes: [Position]) -> [FenceEvent] {
            var clock = watermark
            var byDevice: [String: [(Int, Position)]] = [:]
            for (i, f) in fixes.enumerated() {
                byDevice[f.device, default: []].append((i, f))
                clock = max(clock, f.time)
            }
            for device in byDevice.keys.sorted() {
                for (_, fix) in byDevice[device]!.sorted(by: { ($0.1.time, $0.0) < ($1.1.time, $1.0) }) {
                    if let d = devices[device], fix.time <= d.time {
                        stats["not applied (late or duplicate)"] += 1
                        continue
                    }
                    apply(fix)
                }
            }
            for device in devices.keys.sorted() {
                var d = devices[device]!
                endExpired(device, &d, upTo: clock, "expired at batch end")
                devices[device] = d
            }
            for id in fences.keys.sorted() where fences[id]!.expires.map({ $0 <= clock }) ?? false { fences[id] = nil }
            watermark = clock
            return take()
        }

        func apply(_ fix: Position) {
            let t = fix.time, p = LonLat(lon: fix.lon, lat: fix.lat)
            let previous = devices[fix.device]
            let first = previous == nil
            var d = previous ?? Device(id: fix.device, time: t, lon: fix.lon, lat: fix.lat)
            if previous != nil {
                for (fid, pair) in d.pairs where fences[fid]?.expires == t { if case .inside = pair { stats["a fix exactly at the expiry of a visit"] += 1 } }
                endExpired(fix.device, &d, upTo: t, "expired at a fix")
            }
            let margin = settings.hysteresisMargin > 0 ? settings.hysteresisMargin + (fix.accuracy ?? 0) : 0
            for id in fences.keys.sorted() {
                let f = fences[id]!
                if let e = f.expires, e <= t { continue }  // not there for this fix
                let judge = judges[f.shape]
                let covered = judge.covers(p)
                let s = margin > 0 ? judge.signedDistance(p) : 0
                let deepIn = margin > 0 ? covered && s >= margin : covered
                let farOut = margin > 0 ? !covered && -s >= margin : !covered
                func here(_ kind: FenceEventKind, initial: Bool = false, inside: Double? = nil) {
                    emit(kind, f, fix.device, time: t, lon: fix.lon, lat: fix.lat, initial: initial, inside: inside)
                }
                func dwellCheck(_ v: inout Visit) {
                    if !v.stayed && t - v.enter >= (f.dwell ?? settings.dwell) {
                        v.stayed = true
                        here(.dwell, inside: t - v.enter)
                        stats["dwell"] += 1
                    }
                }
                let before = d.pairs[id]
                if trace { print("TRACE \(fix.device) t=\(t) \(id) covered=\(covered) s=\(s) m=\(margin) before=\(String(describing: before))") }
                switch before {
                case nil:
                    if deepIn {
                        var v = Visit(enter: t)
                        if !first || settings.initialEvents { here(.enter, initial: first) }
                        dwellCheck(&v)
                        d.pairs[id] = .inside(v)
                        if !first, let e = edited[id], e.at > d.editsSeen, e.what.contains("new") { stats["enter a fence added since"] += 1 }
                    } else if first && margin > 0 && !farOut {
                        d.pairs[id] = .unknown
                        stats["unknown at first fix"] += 1
                    } else if margin > 0 && covered {
                        stats["outside pair held in the inner band"] += 1
                    }
                case .unknown:
                    if deepIn {
                        var v = Visit(enter: t)
                        if settings.initialEvents { here(.enter, initial: true) }
                        dwellCheck(&v)
                        d.pairs[id] = .inside(v)
                        stats["unknown entered"] += 1
                        if let e = edited[id], e.at > d.editsSeen, e.what.contains("shape") { stats["unknown judged afresh after a reshape"] += 1 }
                    } else if farOut {
                        d.pairs[id] = nil
                        stats["unknown to outside"] += 1
                    } else {
                        stats["unknown held"] += 1
                        if let e = edited[id], e.at > d.editsSeen { for w in e.what { stats["unknown held after \(w)"] += 1 } }
                    }
                case .inside(var v):
                    if covered {
                        if v.pending != nil { stats["pending cancelled by a fix"] += 1 }
                        v.pending = nil
                        dwellCheck(&v)
                        d.pairs[id] = .inside(v)
                    } else if !farOut {
                        if v.pending != nil { stats["pending cancelled in the band"] += 1 }
                        v.pending = nil
                        if !v.stayed && t - v.enter >= (f.dwell ?? settings.dwell) { stats["dwell in the outer band"] += 1 }
                        dwellCheck(&v)
                        d.pairs[id] = .inside(v)
                        stats["inside pair held in the outer band"] += 1
                    } else if settings.exitDelay <= 0 {
                        here(.exit, inside: t - v.enter)
                        d.pairs[id] = nil
                    } else if let since = v.pending {
                        if t - since >= settings.exitDelay {
                            here(.exit, inside: t - v.enter)
                            d.pairs[id] = nil
                            stats["delayed exit"] += 1
                        }
                    } else {
                        v.pending = t
                        d.pairs[id] = .inside(v)
                        stats["pending started"] += 1
                    }
                }
                // cross: outside (or unknown) before and after, along the segment from the last fix.
                if let prev = previous, settings.crossDetection, mask(f).contains(.cross) {
                    let outsideBefore: Bool, outsideAfter: Bool
                    if case .inside = before { outsideBefore = false } else { outsideBefore = true }
                    if case .inside = d.pairs[id] { outsideAfter = false } else { outsideAfter = true }
                    let from = LonLat(lon: prev.lon, lat: prev.lat)
                    // Both fixes outside the area as the fence now is (a fence added or reshaped
                    // over the last fix: the device leaves it, it does not pass through it).
                    let geometricallyOutside = !covered && !judge.covers(from)
                    if outsideBefore && outsideAfter && !geometricallyOutside && judge.meets(from, p) { stats["no cross: a fix of the segment inside the area"] += 1 }
                    if outsideBefore && outsideAfter && geometricallyOutside && judge.meets(from, p) {
                        here(.cross)
                        stats["cross"] += 1
                        if let e = edited[id], e.at > prev.editsSeen {
                            for w in e.what { stats["cross after \(w)"] += 1 }
                        }
                        if before != nil || d.pairs[id] != nil { stats["cross while unknown"] += 1 }
                        if covered { stats["cross ending in the inner band"] += 1 }
                        if f.expires != nil { stats["cross on an expiring fence"] += 1 }
                    }
                }
            }
            d.time = t
            d.lon = fix.lon
            d.lat = fix.lat
            d.editsSeen = editCount
            devices[fix.device] = d
        }

        // Edits

        func remove(id: String) -> [FenceEvent] {
            editCount += 1
            guard let f = fences[id] else { return [] }
            for device in devices.keys.sorted() {
                var d = devices[device]!
                if case .inside(let v)? = d.pairs[id] {
                    emit(.exit, f, device, time: d.time, lon: d.lon, lat: d.lat, reason: .fenceRemoved, inside: d.time - v.enter)
                    stats["removed exit"] += 1
                }
                d.pairs[id] = nil
                devices[device] = d
            }
            fences[id] = nil
            return take()
        }

        func add(_ new: [Fence]) -> [FenceEvent] {
            editCount += 1
            var old: [String: Fence] = [:]
            for f in new {
                if let o = fences[f.id] { old[f.id] = o }
                fences[f.id] = f
                var what: Set<String> = []
                if let o = old[f.id] {
                    if o.shape != f.shape { what.insert("shape") }
                    if o.actions != f.actions { what.insert("mask") }
                    if o.group != f.group { what.insert("group") }
                    if o.expires != f.expires { what.insert("expiry") }
                    if what.isEmpty { what.insert("nothing") }
                } else {
                    what.insert("new")
                }
                edited[f.id] = (editCount, what)
            }
            // A fence whose expiry the clock already passed expires at once, before anything else.
            for device in devices.keys.sorted() {
                var d = devices[device]!
                endExpired(device, &d, upTo: watermark, "expired at add")
                devices[device] = d
            }
            for f in new where f.expires.map({ $0 <= watermark }) ?? false {
                fences[f.id] = nil
                stats[old[f.id] == nil ? "added already expired" : "replaced already expired"] += 1
            }
            for f in new {
                guard fences[f.id] != nil, let o = old[f.id] else { continue }
                let sameShape = o.shape == f.shape
                let retriggerEnter = mask(f).contains(.enter) && !mask(o).contains(.enter)
                let retriggerDwell = mask(f).contains(.dwell) && !mask(o).contains(.dwell)
                for device in devices.keys.sorted() {
                    var d = devices[device]!
                    guard case .inside(var v)? = d.pairs[f.id] else { continue }
                    let last = LonLat(lon: d.lon, lat: d.lat)
                    if !sameShape {
                        if trace { print("TRACE reshape \(f.id) \(device) last covered=\(judges[f.shape].covers(last)) s=\(judges[f.shape].signedDistance(last)) old s=\(judges[o.shape].signedDistance(last))") }
                        if settings.hysteresisMargin > 0 && abs(judges[f.shape].signedDistance(last)) < settings.hysteresisMargin {
                            stats[judges[f.shape].covers(last) ? "reshape: last fix in the new inner band" : "reshape: last fix in the new outer band (exit)"] += 1
                        }
                        if !judges[f.shape].covers(last) {
                            emit(.exit, o, device, time: d.time, lon: d.lon, lat: d.lat, reason: .fenceReplaced, inside: d.time - v.enter)
                            d.pairs[f.id] = nil
                            devices[device] = d
                            stats["replaced exit"] += 1
                            if v.pending != nil { stats["replaced exit while pending"] += 1 }
                            if o.group != f.group { stats["replaced exit with a new group"] += 1 }
                            if mask(o) != mask(f) { stats["replaced exit with a new mask"] += 1 }
                            continue
                        }
                        stats["reshaped, still covered"] += 1
                        if v.pending != nil {
                            if cancelPendingOnCoveringReshape {
                                v.pending = nil
                                stats["pending cancelled by a reshape covering the last fix"] += 1
                            } else {
                                stats["pending kept over a reshape covering the last fix"] += 1
                            }
                        }
                    } else if v.pending != nil {
                        stats["same shape, pending goes on"] += 1
                    }
                    if v.pending != nil && (o.actions != f.actions || o.group != f.group) { stats["mask or group edit while pending"] += 1 }
                    if v.stayed && (o.actions != f.actions || o.group != f.group) { stats["mask or group edit while stayed"] += 1 }
                    if v.stayed && retriggerEnter && !retriggerDwell { stats["stayed pair, only enter newly reported: no event"] += 1 }
                    if v.stayed {
                        if retriggerDwell {
                            emit(.dwell, f, device, time: d.time, lon: d.lon, lat: d.lat, reason: .actionsChanged, inside: d.time - v.enter)
                            stats["re-trigger dwell"] += 1
                        }
                    } else if retriggerEnter {
                        emit(.enter, f, device, time: d.time, lon: d.lon, lat: d.lat, reason: .actionsChanged)
                        stats[v.pending != nil ? "re-trigger enter while pending" : "re-trigger enter"] += 1
                    }
                    d.pairs[f.id] = .inside(v)
                    devices[device] = d
                }
            }
            return take()
        }

        func status(device: String, fence: String) -> FenceStatus {
            guard let d = devices[device] else { return .unknown }
            switch d.pairs[fence] {
            case nil: return .outside
            case .unknown: return .unknown
            case .inside(let v): return v.stayed ? .stayed : .inside
            }
        }

        func insideFences(of device: String) -> [String] {
            guard let d = devices[device] else { return [] }
            return d.pairs.compactMap { k, v in if case .inside = v { return k } else { return nil } }.sorted()
        }

        func insideDevices(of fence: String) -> [String] {
            devices.keys.filter { if case .inside? = devices[$0]!.pairs[fence] { return true } else { return false } }.sorted()
        }

        func describeState() -> String {
            var lines: [String] = []
            for id in devices.keys.sorted() {
                let d = devices[id]!
                let pairs = d.pairs.keys.sorted().map { k -> String in
                    switch d.pairs[k]! {
                    case .unknown: return "\(k)(unknown)"
                    case .inside(let v): return "\(k)(enter \(v.enter)\(v.stayed ? " stayed" : "")\(v.pending.map { " pending \($0)" } ?? ""))"
                    }
                }
                lines.append("  \(id) last \(d.time) (\(d.lon), \(d.lat)) \(pairs.joined(separator: " "))")
            }
            for id in fences.keys.sorted() {
                let f = fences[id]!
                lines.append(
                    "  \(id) group \(f.group ?? "-") actions \(f.actions.map { "\($0.rawValue)" } ?? "-") mask \(mask(f).rawValue) dwell \(f.dwell ?? settings.dwell) expires \(f.expires.map { "\($0)" } ?? "-") \(f.shape)"
                )
            }
            return lines.joined(separator: "\n")
        }
    }

    // MARK: Scenarios

    enum EditKind: CaseIterable {
        case mask, group, shape, expiry, same, combo, remove, readd
    }

    struct Options {
        var margin = false
        var cross = true
        var expiry = true
        var exitDelayAlways = false
        /// One step in this many is a jump of 400-1200 m (segments through fences).
        var jumps = 8
        /// Share of edits aimed at fences some device is inside, in quarters.
        var aimAtVisits = 3
        var edits: [EditKind] = EditKind.allCases
    }

    struct Scenario {
        var settings: EventSettings
        var fences: [Fence]
        /// Every shape each fence id takes in the scenario, the first its initial one.
        var pool: [String: [FenceShape]]
        var batches: [[Position]]
    }

    static let lon0 = 13.40, lat0 = 52.50, span = 0.022, t0 = 1_700_000_000.0

    static func int(_ rng: inout TestRandom, _ r: ClosedRange<Int>) -> Int { r.lowerBound + Int(rng.next() % UInt64(r.count)) }

    static func randomMask(_ rng: inout TestRandom, cross: Bool) -> FenceActions {
        FenceActions(rawValue: UInt8(rng.next() % (cross ? 16 : 8)))
    }

    static func makeScenario(seed: UInt64, _ o: Options) -> Scenario {
        var rng = TestRandom(mixing: seed)
        var settings = EventSettings()
        settings.dwell = Double(int(&rng, 40...200))
        settings.initialEvents = rng.next() % 4 != 0
        settings.exitDelay = o.exitDelayAlways || rng.next() % 2 == 0 ? Double(int(&rng, 20...90)) : 0
        if rng.next() % 4 == 0 { settings.actions = randomMask(&rng, cross: o.cross) }
        if o.cross { settings.crossDetection = o.jumps < 8 || rng.next() % 3 != 0 }
        if o.margin { settings.hysteresisMargin = rng.uniform(8, 35) }

        var fences: [Fence] = []
        var pool: [String: [FenceShape]] = [:]
        for i in 0..<int(&rng, 4...6) {
            let id = "f\(i)"
            let lon = lon0 + rng.uniform(0.15, 0.85) * span, lat = lat0 + rng.uniform(0.15, 0.85) * span
            var shapes: [FenceShape] = []
            if rng.next() % 2 == 0 {
                let r = rng.uniform(150, 500)
                shapes.append(.circle(center: LonLat(lon: lon, lat: lat), radius: r))
                let q = Geodesic.destination(lon: lon, lat: lat, azimuth: rng.uniform(0, 360), distance: rng.uniform(0.3, 1.0) * r)
                shapes.append(.circle(center: LonLat(lon: q.lon, lat: q.lat), radius: r))
                shapes.append(.circle(center: LonLat(lon: lon, lat: lat), radius: r * rng.uniform(0.5, 1.4)))
            } else {
                let radius = rng.uniform(0.003, 0.0065)
                let ring = Shapes.star(&rng, lon: lon, lat: lat, radius: radius, vertices: int(&rng, 5...10), inner: 0.6...1.0)
                shapes.append(.polygons([Polygon(exterior: ring)]))
                let a = rng.uniform(0, 2 * .pi), dist = rng.uniform(0.3, 1.0) * radius
                var moved = ring.map { LonLat(lon: $0.lon + dist * cos(a), lat: $0.lat + dist * sin(a)) }
                moved[moved.count - 1] = moved[0]
                shapes.append(.polygons([Polygon(exterior: moved)]))
                let k = rng.uniform(0.5, 1.4)
                var scaled = ring.map { LonLat(lon: lon + k * ($0.lon - lon), lat: lat + k * ($0.lat - lat)) }
                scaled[scaled.count - 1] = scaled[0]
                shapes.append(.polygons([Polygon(exterior: scaled)]))
            }
            pool[id] = shapes
            var f = Fence(id: id, shape: shapes[0])
            if rng.next() % 2 == 0 { f.group = "g\(rng.next() % 3)" }
            if rng.next() % 2 == 0 { f.actions = randomMask(&rng, cross: o.cross) }
            if rng.next() % 4 == 0 { f.dwell = Double(int(&rng, 30...150)) }
            fences.append(f)
        }

        // Tracks, every fix and segment clear of every decision for every shape in the pool.
        let judges = Judges()
        let allShapes = pool.keys.sorted().flatMap { pool[$0]! }.map { judges[$0] }
        func clear(_ p: LonLat, accuracy: Double?, after prev: LonLat?) -> Bool {
            let m = settings.hysteresisMargin > 0 ? settings.hysteresisMargin + (accuracy ?? 0) : 0
            for j in allShapes {
                if j.borderline(p, margin: m) { return false }
                if let prev, j.borderlineSegment(prev, p) { return false }
            }
            return true
        }
        let centers = fences.map { f -> LonLat in
            switch f.shape {
            case .circle(let c, _): return c
            case .polygons(let p): return LonLat(lon: p[0].exterior.dropLast().map(\.lon).reduce(0, +) / Double(p[0].exterior.count - 1), lat: p[0].exterior.dropLast().map(\.lat).reduce(0, +) / Double(p[0].exterior.count - 1))
            }
        }
        var fixes: [Position] = []
        for dev in 0..<int(&rng, 3...5) {
            var lon = lon0 + rng.uniform(0, span), lat = lat0 + rng.uniform(0, span)
            var heading = rng.uniform(0, 2 * .pi)
            var t = t0 + Double(rng.next() % 2 == 0 ? int(&rng, 0...60) : int(&rng, 0...1500))
            var prev: LonLat? = nil
            var prevAccuracy: Double? = nil
            // With a margin, half the devices start within the band of some fence (unknown
            // pairs) and linger there for a few fixes.
            var linger = 0
            if o.margin && rng.next() % 2 == 0 {
                for _ in 0..<400 {
                    let cand = LonLat(lon: lon0 + rng.uniform(0, span), lat: lat0 + rng.uniform(0, span))
                    let m = settings.hysteresisMargin
                    if allShapes.contains(where: { abs($0.signedDistance(cand)) < m - 2 }) && clear(cand, accuracy: nil, after: nil) {
                        lon = cand.lon
                        lat = cand.lat
                        linger = int(&rng, 2...6)
                        break
                    }
                }
            }
            for n in 0..<int(&rng, 60...110) {
                var accuracy: Double? = o.margin && rng.next() % 3 == 0 && n > 0 ? rng.uniform(0, 25) : nil
                var placed: LonLat? = nil
                if n == 0 && linger > 0 && clear(LonLat(lon: lon, lat: lat), accuracy: nil, after: nil) { placed = LonLat(lon: lon, lat: lat) }
                for attempt in 0..<40 where placed == nil {
                    var h = heading, step = 0.0
                    if prev != nil {
                        h += rng.uniform(-0.8, 0.8)
                        if rng.next() % 5 == 0 {  // head for a fence
                            let c = centers[int(&rng, 0...(centers.count - 1))]
                            h = atan2((c.lon - lon) * cos(lat * .pi / 180), c.lat - lat) + rng.uniform(-0.3, 0.3)
                        }
                        step = rng.next() % UInt64(o.jumps) == 0 ? rng.uniform(400, 1200) : rng.uniform(10, 180)
                        if attempt > 20 || n <= linger { step = rng.uniform(1, 8) }
                    }
                    var nlat = lat + step * cos(h) / 111_320
                    var nlon = lon + step * sin(h) / (111_320 * cos(lat * .pi / 180))
                    if nlon < lon0 || nlon > lon0 + span { nlon = min(max(nlon, lon0), lon0 + span); h = -h }
                    if nlat < lat0 || nlat > lat0 + span { nlat = min(max(nlat, lat0), lat0 + span); h = .pi - h }
                    let cand = LonLat(lon: nlon, lat: nlat)
                    if prev == nil && attempt > 0 {
                        lon = lon0 + rng.uniform(0, span)
                        lat = lat0 + rng.uniform(0, span)
                    }
                    if clear(cand, accuracy: accuracy, after: prev) {
                        placed = cand
                        heading = h
                        break
                    }
                }
                if placed == nil, let prev {  // stay where it was (that spot was clear)
                    placed = prev
                    accuracy = prevAccuracy
                }
                guard let here = placed else { continue }
                fixes.append(Position(device: "d\(dev)", time: t, lon: here.lon, lat: here.lat, accuracy: accuracy))
                prev = here
                prevAccuracy = accuracy
                lon = here.lon
                lat = here.lat
                t += Double(int(&rng, 5...40))
                if rng.next() % 10 == 0 { t += Double(int(&rng, 60...240)) }
            }
        }
        let times = fixes.map(\.time)
        let first = times.min()!, last = times.max()!
        if o.expiry {
            for i in fences.indices where rng.next() % 3 == 0 {
                // Often exactly at the time of a fix inside it, or of any fix.
                let judge = judges[fences[i].shape]
                let inside = fixes.filter { judge.covers(LonLat(lon: $0.lon, lat: $0.lat)) }.map(\.time)
                switch rng.next() % 3 {
                case 0 where !inside.isEmpty: fences[i].expires = inside[int(&rng, 0...(inside.count - 1))]
                case 1: fences[i].expires = times[int(&rng, 0...(times.count - 1))]
                default: fences[i].expires = Double(int(&rng, Int(first + 100)...Int(last)))
                }
            }
        }
        // Batches cut by time; each shuffled (the engine orders each device's fixes itself).
        var cuts = (0..<int(&rng, 4...8)).map { _ in Double(int(&rng, Int(first + 1)...Int(last))) }
        cuts = Array(Set(cuts)).sorted()
        var batches = Array(repeating: [Position](), count: cuts.count + 1)
        for f in fixes { batches[cuts.filter { f.time >= $0 }.count].append(f) }
        for b in batches.indices {
            for i in stride(from: batches[b].count - 1, to: 0, by: -1) {
                batches[b].swapAt(i, int(&rng, 0...i))
            }
        }
        return Scenario(settings: settings, fences: fences, pool: pool, batches: batches.filter { !$0.isEmpty })
    }

    // MARK: Running

    struct Totals {
        var seeds = 0, batches = 0, edits = 0, events = 0
        var byKind: [String: Int] = [:]
        var stats = Stats()
        mutating func tally(_ events: [FenceEvent]) {
            self.events += events.count
            for e in events { byKind["\(e.kind)" + (e.reason.map { " " + $0.rawValue } ?? ""), default: 0] += 1 }
        }
        var line: String {
            "\(seeds) seeds, \(batches) batches, \(edits) edits, \(events) events compared \(byKind.sorted { $0.key < $1.key }); rules: \(stats.description)"
        }
    }

    static func same(_ a: [FenceEvent], _ b: [FenceEvent]) -> Bool { a.count == b.count && zip(a, b).allSatisfy(Base.same) }

    static func compareStatus(_ engine: EventEngine, _ oracle: Tracker, _ ctx: String, report: Bool) -> Bool {
        var ok = true
        func fail(_ s: String) {
            ok = false
            if report { XCTFail("\(ctx): \(s)") }
        }
        for device in oracle.devices.keys.sorted() {
            let got = engine.fences(insideOf: device), want = oracle.insideFences(of: device)
            if got != want { fail("fences(insideOf: \(device)) \(got), expected \(want)") }
            for fence in oracle.fences.keys.sorted() {
                let s = engine.status(device: device, fence: fence), w = oracle.status(device: device, fence: fence)
                if s != w { fail("status(\(device), \(fence)) \(s), expected \(w)") }
            }
        }
        for fence in oracle.fences.keys.sorted() {
            let got = engine.devices(insideOf: fence), want = oracle.insideDevices(of: fence)
            if got != want { fail("devices(insideOf: \(fence)) \(got), expected \(want)") }
        }
        return ok
    }

    static func describe(_ s: EventSettings) -> String {
        "dwell \(s.dwell), initial \(s.initialEvents), exitDelay \(s.exitDelay), margin \(s.hysteresisMargin), cross \(s.crossDetection), actions \(s.actions.rawValue)"
    }

    /// One scenario through the engine and the oracle, batch by batch, with edits between
    /// batches; false at the first difference (reported when `report`).
    static func run(seed: UInt64, _ o: Options, totals: inout Totals, report: Bool) -> Bool {
        let s = makeScenario(seed: seed, o)
        var rng = TestRandom(mixing: seed ^ 0x0DD_BA11)
        var store = FenceStore()
        let loaded = store.add(s.fences, threads: 1)
        precondition(loaded.allSatisfy { $0.error == nil }, "\(loaded.compactMap(\.error))")
        var engine = try! EventEngine(store: store, settings: s.settings)
        let judges = Judges()
        let oracle = Tracker(fences: s.fences, settings: s.settings, judges: judges)
        defer { totals.stats.add(oracle.stats) }
        let threads = 1 + Int(seed % 2)
        let base = Dictionary(uniqueKeysWithValues: s.fences.map { ($0.id, $0) })
        totals.seeds += 1
        func check(_ actual: [FenceEvent], _ expected: [FenceEvent], _ ctx: @autoclosure () -> String) -> Bool {
            totals.tally(expected)
            if same(actual, expected) { return true }
            if report { Base.assertSame(actual, expected, ctx()) }
            return false
        }
        for (b, batch) in s.batches.enumerated() {
            let ctx = "seed \(seed) batch \(b)/\(s.batches.count) (\(describe(s.settings)))"
            let before = oracle.describeState()
            let expected = oracle.evaluate(batch)
            let actual = engine.evaluate(batch, threads: threads).events
            totals.batches += 1
            guard check(actual, expected, "\(ctx)\noracle before the batch:\n\(before)") else { return false }
            guard compareStatus(engine, oracle, ctx, report: report) else { return false }
            guard b + 1 < s.batches.count else { continue }

            for k in 0..<int(&rng, 1...4) {
                // Fences some device holds a pair with (inside always, unknown half the time), in a
                // fixed order so that the draws, and so the seeds, replay.
                let inside = Set(
                    oracle.devices.keys.sorted().flatMap { id in
                        oracle.devices[id]!.pairs.keys.sorted().filter { rng.next() % 2 == 0 || oracle.insideDevices(of: $0).contains(id) }
                    }
                ).sorted()
                let current = oracle.fences.keys.sorted()
                func pick() -> String? {
                    if !inside.isEmpty && rng.next() % 4 < o.aimAtVisits { return inside[int(&rng, 0...(inside.count - 1))] }
                    return current.isEmpty ? nil : current[int(&rng, 0...(current.count - 1))]
                }
                let now = oracle.watermark
                let kind = o.edits[int(&rng, 0...(o.edits.count - 1))]
                var what = "\(kind)"
                let stateBefore = oracle.describeState()
                var expected: [FenceEvent], actual: [FenceEvent]
                func newExpiry(_ old: Double?) -> Double? {
                    switch rng.next() % 5 {
                    case 0: return nil
                    case 1: return (max(old ?? now, now)) + Double(int(&rng, 1...600))
                    case 2:
                        let e = old ?? now + 400
                        return e > now + 1 ? Double(int(&rng, Int(now + 1)...Int(e))) : now + 1
                    case 3: return now - Double(int(&rng, 0...3) == 0 ? 0 : int(&rng, 1...300))  // passed
                    default: return old
                    }
                }
                func changed(_ f: Fence, _ k: EditKind) -> Fence {
                    var g = f
                    switch k {
                    case .mask:
                        // Mostly the mask in force with some of enter, dwell, exit toggled (re-trigger).
                        repeat {
                            if rng.next() % 4 == 0 {
                                g.actions = rng.next() % 2 == 0 ? nil : randomMask(&rng, cross: o.cross)
                            } else {
                                let inForce = f.actions ?? s.settings.actions
                                g.actions = FenceActions(rawValue: inForce.rawValue ^ UInt8(1 + rng.next() % 7))
                            }
                        } while g.actions == f.actions
                    case .group:
                        let groups: [String?] = [nil, "g0", "g1", "g2", "h"]
                        repeat { g.group = groups[int(&rng, 0...4)] } while g.group == f.group
                    case .shape:
                        g.shape = s.pool[f.id]![int(&rng, 0...2)]
                    case .expiry:
                        if o.expiry { g.expires = newExpiry(f.expires) }
                    case .same:
                        break
                    case .combo:
                        for part in [EditKind.mask, .group, .shape, .expiry] where rng.next() % 2 == 0 { g = changed(g, part) }
                    case .remove, .readd:
                        break
                    }
                    return g
                }
                switch kind {
                case .remove:
                    guard let id = pick() else { continue }
                    what = "remove \(id)"
                    expected = oracle.remove(id: id)
                    actual = engine.remove(id: id)
                case .readd:
                    let gone = base.keys.sorted().filter { oracle.fences[$0] == nil }
                    guard !gone.isEmpty else { continue }
                    var f = base[gone[int(&rng, 0...(gone.count - 1))]]!
                    f.shape = s.pool[f.id]![int(&rng, 0...2)]
                    f.expires = o.expiry && rng.next() % 2 == 0 ? newExpiry(nil) : nil
                    if rng.next() % 2 == 0 { f.actions = rng.next() % 3 == 0 ? nil : randomMask(&rng, cross: o.cross) }
                    what = "re-add \(f.id) expires \(f.expires.map { "\($0)" } ?? "-") actions \(f.actions.map { "\($0.rawValue)" } ?? "-")"
                    expected = oracle.add([f])
                    let (results, events) = engine.add([f], threads: 1)
                    actual = events
                    if let e = results.compactMap(\.error).first {
                        if report { XCTFail("\(ctx) edit \(k): \(e)") }
                        return false
                    }
                default:
                    var fences: [Fence] = []
                    for _ in 0..<(rng.next() % 4 == 0 ? 2 : 1) {
                        guard let id = pick(), !fences.contains(where: { $0.id == id }) else { continue }
                        fences.append(changed(oracle.fences[id]!, kind))
                    }
                    guard !fences.isEmpty else { continue }
                    what = "replace " + fences.map { f -> String in
                        let old = oracle.fences[f.id]!
                        var parts: [String] = []
                        if old.shape != f.shape { parts.append("shape") }
                        if old.actions != f.actions { parts.append("actions \(old.actions.map { "\($0.rawValue)" } ?? "-")->\(f.actions.map { "\($0.rawValue)" } ?? "-")") }
                        if old.group != f.group { parts.append("group \(old.group ?? "-")->\(f.group ?? "-")") }
                        if old.expires != f.expires { parts.append("expires \(old.expires.map { "\($0)" } ?? "-")->\(f.expires.map { "\($0)" } ?? "-")") }
                        return "\(f.id) [\(parts.joined(separator: ", "))]"
                    }.joined(separator: "; ")
                    expected = oracle.add(fences)
                    let (results, events) = engine.add(fences, threads: 1)
                    actual = events
                    if let e = results.compactMap(\.error).first {
                        if report { XCTFail("\(ctx) edit \(k): \(e)") }
                        return false
                    }
                }
                totals.edits += 1
                let ectx = "\(ctx) edit \(k) (\(what), clock \(now))"
                guard check(actual, expected, "\(ectx)\noracle before the edit:\n\(stateBefore)") else { return false }
                guard compareStatus(engine, oracle, ectx, report: report) else { return false }
            }
        }
        return true
    }

    func check(_ name: String, seeds: ClosedRange<UInt64>, _ o: Options, require: (Totals) -> Void) {
        var totals = Totals(), failed: [UInt64] = []
        let start = Date()
        for seed in seeds where !Self.run(seed: seed, o, totals: &totals, report: failed.count < 2) { failed.append(seed) }
        print("\(name): \(totals.line); failed seeds \(failed); \(String(format: "%.1f", Date().timeIntervalSince(start))) s")
        XCTAssertEqual(failed, [], "\(name): seeds where the engine and the oracle differ")
        require(totals)
    }

    // MARK: Tests

    /// One seed, reported in full: `ORACLE_SEED` (seed 1 without it), with the options of its
    /// test (by the hundreds digit), reporting the first difference; `ORACLE_TRACE=1` prints
    /// every judgement of the oracle.
    func testOneSeedReported() {
        let seed = ProcessInfo.processInfo.environment["ORACLE_SEED"].flatMap(UInt64.init) ?? 1
        let o: Options
        switch seed / 100 {
        case 0: o = Options(margin: false, cross: true, expiry: true, jumps: 3, aimAtVisits: 2)
        case 1: o = Options(margin: false, cross: true, expiry: false, exitDelayAlways: true, edits: [.mask, .group, .same])
        case 2: o = Options(margin: true, cross: false, expiry: true)
        default: o = Options(margin: true, cross: true, expiry: true, jumps: 4, aimAtVisits: 2)
        }
        var t = Totals()
        XCTAssertTrue(Self.run(seed: seed, o, totals: &t, report: true))
    }

    /// The smallest case of a difference the random tests found (seed 1 of test 1, with the
    /// oracle's reading): exit delay 60 s, a 100 m circle. The device enters (t=0, 50 m from the
    /// centre), leaves (t=10, 150 m: exit pending). The fence is then replaced by a 200 m circle,
    /// which covers that last fix (no `fence-replaced`: the visit goes on). At t=30 the device
    /// is 250 m out, at t=75 260 m, at t=95 270 m. Under the fence as it now is, the device was
    /// first seen outside at t=30, so SPEC's "exit fires only once the device has stayed outside
    /// for d" gives the exit at t=95 (65 s after t=30); t=75 is only 45 s after it. Until
    /// session 37 the engine kept the pending exit from t=10 (judged against the old shape) and
    /// exited at t=75.
    /// Also run by hand through the oracle with the engine's choice, to show that choice.
    func testAPendingExitEndsWhenAReshapeCoversTheLastFix() {
        var settings = EventSettings()
        settings.exitDelay = 60
        settings.dwell = 1000
        let t0 = Self.t0
        let c = LonLat(lon: Self.lon0, lat: Self.lat0)
        func at(_ metres: Double, _ t: Double) -> Position {
            let p = Geodesic.destination(lon: c.lon, lat: c.lat, azimuth: 90, distance: metres)
            return Position(device: "v", time: t0 + t, lon: p.lon, lat: p.lat)
        }
        let small = Fence.circle(id: "c", lon: c.lon, lat: c.lat, radius: 100)
        let large = Fence.circle(id: "c", lon: c.lon, lat: c.lat, radius: 200)
        var engine = try! EventEngine(store: FenceStore(), settings: settings)
        _ = engine.add([small], threads: 1)
        var events = engine.evaluate([at(50, 0), at(150, 10)], threads: 1).events
        XCTAssertEqual(summary(events), ["\(Int(t0)) v c enter initial"])
        let edit = engine.add([large], threads: 1).events
        XCTAssertEqual(summary(edit), [], "the new shape covers the last fix: the visit goes on")
        XCTAssertEqual(engine.status(device: "v", fence: "c"), .inside)
        events = engine.evaluate([at(250, 30), at(260, 75), at(270, 95)], threads: 1).events

        // The oracle, both readings.
        for cancel in [true, false] {
            let oracle = Tracker(fences: [small], settings: settings, judges: Judges())
            oracle.cancelPendingOnCoveringReshape = cancel
            _ = oracle.evaluate([at(50, 0), at(150, 10)])
            _ = oracle.add([large])
            let expected = oracle.evaluate([at(250, 30), at(260, 75), at(270, 95)])
            XCTAssertEqual(summary(expected), ["\(Int(t0) + (cancel ? 95 : 75)) v c exit \(cancel ? 95 : 75)s"])
        }
        XCTAssertEqual(
            summary(events), ["\(Int(t0) + 95) v c exit 95s"],
            "exit 45 s after the device was first seen outside the fence as it now is (delay 60 s)")
    }

    /// `cross` around edits, by hand: a device walking east along one parallel, one fix a batch,
    /// 1 km a step, with circles of 100 m put on its way between batches.
    func testCrossAcrossEditsByHand() {
        var settings = EventSettings()
        settings.crossDetection = true
        let t0 = Self.t0
        let o = LonLat(lon: Self.lon0, lat: Self.lat0)
        func point(_ metres: Double) -> LonLat {
            let p = Geodesic.destination(lon: o.lon, lat: o.lat, azimuth: 90, distance: metres)
            return LonLat(lon: p.lon, lat: p.lat)
        }
        func fix(_ metres: Double, _ t: Double) -> Position {
            let p = point(metres)
            return Position(device: "v", time: t0 + t, lon: p.lon, lat: p.lat)
        }
        func circle(_ id: String, at metres: Double, group: String? = nil, actions: FenceActions? = nil, expires: Double? = nil) -> Fence {
            let c = point(metres)
            var f = Fence.circle(id: id, lon: c.lon, lat: c.lat, radius: 100)
            f.group = group
            f.actions = actions
            f.expires = expires
            return f
        }
        // (edit before the fix, fix, events expected at it)
        let steps: [([Fence], Position, [String])] = [
            ([circle("m", at: 3500)], fix(0, 0), []),
            ([circle("n", at: 500)], fix(1000, 10), ["\(Int(t0) + 10) v n cross"]),  // added since the last fix
            ([circle("n", at: 1500)], fix(2000, 20), ["\(Int(t0) + 20) v n cross"]),  // moved onto the next segment
            ([circle("n", at: 2500, expires: t0 + 25)], fix(3000, 30), []),  // expired at 25: not there at 30
            ([circle("m", at: 3500, actions: [.enter, .exit])], fix(4000, 40), []),  // its mask has no cross
            ([circle("m", at: 3500, group: "g")], fix(3000, 50), ["\(Int(t0) + 50) v m cross"]),  // the engine's mask again
        ]
        var engine = try! EventEngine(store: FenceStore(), settings: settings)
        let oracle = Tracker(fences: [], settings: settings, judges: Judges())
        for (i, (edit, position, expected)) in steps.enumerated() {
            let (results, editEvents) = engine.add(edit, threads: 1)
            XCTAssertTrue(results.allSatisfy { $0.error == nil })
            XCTAssertEqual(editEvents, [])
            XCTAssertEqual(oracle.add(edit), [])
            let events = engine.evaluate([position], threads: 1).events
            XCTAssertEqual(summary(events), expected, "step \(i)")
            XCTAssertEqual(summary(oracle.evaluate([position])), expected, "step \(i), the oracle")
            if i == 5 { XCTAssertEqual(events.first?.group, "g") }
            XCTAssertEqual(engine.fences(insideOf: "v"), [])
        }
        XCTAssertNil(engine.store.fence(id: "n"), "n expired at the end of the batch at 30")
    }

    /// Unknown pairs (hysteresis) through edits, by hand: margin 20 m, circles of 100 m. A first
    /// fix 110 m from the centre (outside, within the margin) leaves the pair unknown; a new
    /// mask and a new group make no event; a reshape (300 m) makes no event either and the
    /// next fix, inside the new shape by the margin, enters with `initial`. Another device's
    /// unknown pair with an expiring fence goes with the fence, without an event.
    func testUnknownPairsThroughEditsByHand() {
        var settings = EventSettings()
        settings.hysteresisMargin = 20
        let t0 = Self.t0
        let o = LonLat(lon: Self.lon0, lat: Self.lat0)
        func fix(_ device: String, _ metres: Double, _ t: Double, from c: LonLat = o) -> Position {
            let p = Geodesic.destination(lon: c.lon, lat: c.lat, azimuth: 90, distance: metres)
            return Position(device: device, time: t0 + t, lon: p.lon, lat: p.lat)
        }
        let far = Geodesic.destination(lon: o.lon, lat: o.lat, azimuth: 0, distance: 3000)
        let c = Fence.circle(id: "c", lon: o.lon, lat: o.lat, radius: 100)
        var e = Fence.circle(id: "e", lon: far.lon, lat: far.lat, radius: 100)
        e.expires = t0 + 50
        var engine = try! EventEngine(store: FenceStore(), settings: settings)
        _ = engine.add([c, e], threads: 1)
        let oracle = Tracker(fences: [c, e], settings: settings, judges: Judges())
        let farLL = LonLat(lon: far.lon, lat: far.lat)
        let first = [fix("v", 110, 0), fix("w", 95, 0, from: farLL)]
        XCTAssertEqual(summary(engine.evaluate(first, threads: 1).events), [])
        XCTAssertEqual(oracle.evaluate(first), [])
        XCTAssertEqual(engine.status(device: "v", fence: "c"), .unknown)
        XCTAssertEqual(engine.status(device: "w", fence: "e"), .unknown)
        var masked = c
        masked.actions = [.enter, .cross]
        masked.group = "g"
        XCTAssertEqual(summary(engine.add([masked], threads: 1).events), [])
        XCTAssertEqual(oracle.add([masked]), [])
        var reshaped = masked
        reshaped.shape = .circle(center: o, radius: 300)
        XCTAssertEqual(summary(engine.add([reshaped], threads: 1).events), [])
        XCTAssertEqual(oracle.add([reshaped]), [])
        XCTAssertEqual(engine.status(device: "v", fence: "c"), .unknown)
        XCTAssertEqual(engine.devices(insideOf: "c"), [])
        // w stays within e's margin until e expires at 50: no event, the pair goes.
        let second = [fix("v", 115, 60), fix("w", 105, 60, from: farLL)]
        let events = engine.evaluate(second, threads: 1).events
        XCTAssertEqual(summary(events), ["\(Int(t0) + 60) v c enter initial"])
        XCTAssertEqual(events.first?.group, "g")
        XCTAssertEqual(summary(oracle.evaluate(second)), summary(events))
        XCTAssertEqual(engine.fences(insideOf: "w"), [])
        XCTAssertNil(engine.store.fence(id: "e"))
    }

    /// 1. `cross` with expiring fences and every kind of replacement (shape, mask, group,
    /// expiry, all at once, the same fence again), removals and re-additions.
    func testCrossWithExpiryAndReplacementMatchesOracle() {
        check("cross, expiry, replacement", seeds: 1...60, Options(margin: false, cross: true, expiry: true, jumps: 3, aimAtVisits: 2)) { t in
            XCTAssertGreaterThan(t.byKind["cross"] ?? 0, 200)
            XCTAssertGreaterThan(t.stats["cross after shape"], 0)
            XCTAssertGreaterThan(t.stats["cross after new"], 2)
            XCTAssertGreaterThan(t.stats["pending cancelled by a reshape covering the last fix"], 0)
            XCTAssertGreaterThan(t.stats["cross on an expiring fence"], 20)
            XCTAssertGreaterThan(t.byKind["exit fence-expired"] ?? 0, 20)
            XCTAssertGreaterThan(t.byKind["exit fence-replaced"] ?? 0, 10)
            XCTAssertGreaterThan(t.stats["expired at add"], 3)
            XCTAssertGreaterThan(t.stats["a fix exactly at the expiry of a visit"], 5)
        }
    }

    /// 2. Replacements that change only the mask or only the group (or nothing), with devices
    /// inside, stayed and waiting out an exit delay.
    func testMaskOrGroupOnlyReplacementMatchesOracle() {
        check(
            "mask or group only", seeds: 101...140, Options(margin: false, cross: true, expiry: false, exitDelayAlways: true, edits: [.mask, .group, .same])
        ) { t in
            XCTAssertGreaterThan(t.stats["re-trigger enter"], 10)
            XCTAssertGreaterThan(t.stats["re-trigger dwell"], 10)
            XCTAssertGreaterThan(t.stats["re-trigger enter while pending"], 0)
            XCTAssertGreaterThan(t.stats["mask or group edit while pending"], 10)
            XCTAssertGreaterThan(t.stats["mask or group edit while stayed"], 20)
            XCTAssertGreaterThan(t.stats["events after a group change"], 50)
            XCTAssertGreaterThan(t.byKind["enter actions-changed"] ?? 0, 10)
            XCTAssertGreaterThan(t.byKind["dwell actions-changed"] ?? 0, 10)
            XCTAssertGreaterThan(t.stats["stayed pair, only enter newly reported: no event"], 5)
        }
    }

    /// 3. Hysteresis margins (raised by accuracy; unknown pairs) with expiry and replacement.
    func testMarginWithExpiryAndReplacementMatchesOracle() {
        check("margin, expiry, replacement", seeds: 201...250, Options(margin: true, cross: false, expiry: true)) { t in
            XCTAssertGreaterThan(t.stats["unknown at first fix"], 20)
            XCTAssertGreaterThan(t.stats["unknown held"], 20)
            XCTAssertGreaterThan(t.stats["unknown entered"], 5)
            XCTAssertGreaterThan(t.stats["unknown to outside"], 5)
            XCTAssertGreaterThan(t.stats["unknown judged afresh after a reshape"] + t.stats["unknown held after shape"], 0)
            XCTAssertGreaterThan(t.stats["unknown pair expired"], 0)
            XCTAssertGreaterThan(t.stats["inside pair held in the outer band"], 20)
            XCTAssertGreaterThan(t.stats["outside pair held in the inner band"], 20)
            XCTAssertGreaterThan(t.byKind["exit fence-expired"] ?? 0, 10)
            XCTAssertGreaterThan(t.byKind["exit fence-replaced"] ?? 0, 5)
            XCTAssertGreaterThan(t.stats["re-trigger enter"] + t.stats["re-trigger dwell"], 5)
        }
    }

    /// 4. Margins and `cross` together, with everything else.
    func testMarginWithCrossMatchesOracle() {
        check("margin and cross", seeds: 301...330, Options(margin: true, cross: true, expiry: true, jumps: 4, aimAtVisits: 2)) { t in
            XCTAssertGreaterThan(t.byKind["cross"] ?? 0, 100)
        }
    }
}
