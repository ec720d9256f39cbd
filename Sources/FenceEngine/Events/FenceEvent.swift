/// What happened between a device and a fence.
public enum FenceEventKind: UInt8, Sendable, Hashable, Comparable, CaseIterable, CustomStringConvertible {
    case enter = 0, exit = 1, dwell = 2, cross = 3

    public var description: String {
        switch self {
        case .enter: return "enter"
        case .exit: return "exit"
        case .dwell: return "dwell"
        case .cross: return "cross"
        }
    }

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

    /// The action that reports this kind.
    public var action: FenceActions {
        switch self {
        case .enter: return .enter
        case .exit: return .exit
        case .dwell: return .dwell
        case .cross: return .cross
        }
    }
}

/// Why an event happened other than a fix moving the device.
public enum FenceEventReason: String, Sendable, Hashable, Comparable {
    /// The fence was removed (by id, group or all) while the device was inside.
    case fenceRemoved = "fence-removed"
    /// The fence passed its `expires` time while the device was inside.
    case fenceExpired = "fence-expired"
    /// The fence was replaced by a shape that no longer covers the device's last fix.
    case fenceReplaced = "fence-replaced"
    /// An action mask changed so that the pair's current status is newly reported.
    case actionsChanged = "actions-changed"
    /// The device sent no fix for the idle-eviction time and the engine forgot it.
    case deviceIdle = "device-idle"

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// One event record (SPEC "Status and events").
///
/// The one-byte fields are stored last, after the optional `insideSeconds`, so they fill its
/// padding: 88 bytes a record instead of 104 in declaration order. Every event is built,
/// sorted and copied into the output, so the size is paid per event.
public struct FenceEvent: Sendable, Hashable, Comparable {
    /// Event time, epoch seconds.
    public var time: Double
    /// Of the fix that caused the event (the device's last fix for edits), WGS84.
    public var lon: Double
    public var lat: Double
    public var device: String
    public var fence: String
    public var group: String?
    /// Seconds since enter, on `dwell` and `exit`.
    public var insideSeconds: Double?
    public var kind: FenceEventKind
    /// An `enter` on the device's first fix.
    public var initial: Bool
    public var reason: FenceEventReason?

    public init(
        time: Double, device: String, fence: String, group: String? = nil, kind: FenceEventKind, lon: Double, lat: Double,
        initial: Bool = false, reason: FenceEventReason? = nil, insideSeconds: Double? = nil
    ) {
        self.time = time
        self.device = device
        self.fence = fence
        self.group = group
        self.kind = kind
        self.lon = lon
        self.lat = lat
        self.initial = initial
        self.reason = reason
        self.insideSeconds = insideSeconds
    }

    /// Field by field, ids and group by their bytes (`ExactID`), as `<` orders them: two events
    /// that differ only in an id's spelling (NFC against NFD) are two events. The synthesised
    /// hash stays consistent: byte-equal strings are equal strings.
    /// The millisecond an event time is written as (`ISO8601.append` rounds the same way,
    /// to the nearest, halves away from zero), as a whole number of milliseconds since the
    /// epoch; exact for every time of the years 1-9999.
    @inline(__always)
    public static func outputMillisecond(_ time: Double) -> Double { (time * 1000).rounded() }

    public static func == (a: FenceEvent, b: FenceEvent) -> Bool {
        a.time == b.time && a.lon == b.lon && a.lat == b.lat && a.insideSeconds == b.insideSeconds && a.kind == b.kind
            && a.initial == b.initial && a.reason == b.reason && ExactID.sameBytes(a.device, b.device)
            && ExactID.sameBytes(a.fence, b.fence) && ExactID.sameBytes(a.group, b.group)
    }

    /// Two lists in output order (`<`) merged into one, `a`'s first among equals.
    /// - Complexity: O(a + b); returns the other list as it is when one is empty.
    public static func merged(_ a: [FenceEvent], _ b: [FenceEvent]) -> [FenceEvent] {
        if a.isEmpty { return b }
        if b.isEmpty { return a }
        var out: [FenceEvent] = []
        out.reserveCapacity(a.count + b.count)
        var i = 0
        var j = 0
        while i < a.count && j < b.count {
            if b[j] < a[i] {
                out.append(b[j])
                j += 1
            } else {
                out.append(a[i])
                i += 1
            }
        }
        out.append(contentsOf: a[i...])
        out.append(contentsOf: b[j...])
        return out
    }

    /// An `exit` timed by a clock, not by a fix: `device-idle` (the last fix plus the eviction
    /// time) or `fence-expired` (the expiry). It ends the visit as of the state before any fix
    /// at its time. (`fence-removed` and `fence-replaced` exits are timed at the device's last
    /// fix, after what that fix caused: they keep the kind order.)
    var endsStateBeforeTheFix: Bool { kind == .exit && (reason == .deviceIdle || reason == .fenceExpired) }

    /// Output order: (time, device, fence, event), the time as it is written (to the
    /// millisecond, `outputMillisecond`), then the remaining fields so the order is total and
    /// output is byte-identical however it was produced.
    ///
    /// Within one written millisecond, one device's events with one fence keep the order they
    /// happened in (the exact time decides before the event kind): fixes less than a
    /// millisecond apart (an exit, then a re-enter) would otherwise be written enter first.
    /// Two devices in one millisecond go by device, as written; before, the unwritten
    /// sub-millisecond part decided, so the output did not look sorted.
    public static func < (a: FenceEvent, b: FenceEvent) -> Bool {
        let ma = outputMillisecond(a.time)
        let mb = outputMillisecond(b.time)
        if ma != mb { return ma < mb }
        // Ids by their bytes: `String !=` would call canonically equivalent spellings one id.
        let device = UTF8Order.compare(a.device, b.device)
        if device != 0 { return device < 0 }
        let fence = UTF8Order.compare(a.fence, b.fence)
        if fence != 0 { return fence < 0 }
        if a.time != b.time { return a.time < b.time }
        // At one exact time, an exit that ends what was before the fix (the device idle for
        // exactly the eviction time, the fence expired then) happened before what the fix
        // causes: a re-enter at that time goes after it, not first by kind.
        if a.endsStateBeforeTheFix != b.endsStateBeforeTheFix { return a.endsStateBeforeTheFix }
        if a.kind != b.kind { return a.kind < b.kind }
        if a.reason != b.reason { return (a.reason?.rawValue ?? "") < (b.reason?.rawValue ?? "") }
        if a.initial != b.initial { return !a.initial }
        if a.lon != b.lon { return a.lon < b.lon }
        return a.lat < b.lat
    }
}

/// The engine's event settings (SPEC "Status and events").
public struct EventSettings: Sendable, Hashable {
    /// Events reported for fences without their own mask. Bits of a raw value that are no
    /// action are dropped as it is set: the mask is written to state files, which refuse them.
    public var actions: FenceActions = .standard {
        didSet { if !FenceActions.all.isSuperset(of: actions) { actions = actions.intersection(.all) } }
    }
    /// Seconds inside before `dwell`, for fences without their own (Baidu's 10 minutes).
    public var dwell: Double = 600
    /// Report `enter` with `initial: true` on a device's first fix inside a fence.
    public var initialEvents = true
    /// Hysteresis margin in metres (0: off). A fix's `accuracy` raises it for that fix.
    public var hysteresisMargin: Double = 0
    /// Seconds a device must stay outside before `exit` fires (0: at once).
    public var exitDelay: Double = 0
    /// Detect `cross` (also needs `.cross` in the mask that applies).
    public var crossDetection = false
    /// Seconds of event time without a fix after which a device's state is dropped (0: never),
    /// so that a long stream over a changing fleet holds bounded memory. The device's open
    /// visits end with `exit`, reason `device-idle`, at its last fix time plus this; its next
    /// fix is a first fix again. At least `exitDelay` is used, for the judgement and the exit's
    /// time alike (a device is dropped after max(this, exitDelay)), so a pending exit resolves
    /// first. See `EventEngine` for how the watermark judges idleness.
    public var idleEviction: Double = 0

    public init() {}

    /// The largest hysteresis margin taken, in metres: the largest circle radius (half a
    /// meridian, the longest distance on the Earth).
    public static var maxHysteresisMargin: Double { FenceValidation.maxRadius }

    /// Why these settings cannot run, or nil. The engine refuses them (`EventEngine.init`,
    /// `updateSettings`): a NaN exit delay would hold every exit forever, a NaN dwell never
    /// fire, a negative one fire at once, an infinite margin let no fix enter.
    /// - Complexity: O(1).
    public var problem: String? {
        if !(dwell.isFinite && dwell >= 0) { return "dwell must be a finite number of seconds >= 0, got \(dwell)" }
        if !(exitDelay.isFinite && exitDelay >= 0) { return "exitDelay must be a finite number of seconds >= 0, got \(exitDelay)" }
        if !(idleEviction.isFinite && idleEviction >= 0) {
            return "idleEviction must be a finite number of seconds >= 0 (0: off), got \(idleEviction)"
        }
        if !(hysteresisMargin >= 0 && hysteresisMargin <= Self.maxHysteresisMargin) {
            return "hysteresisMargin must be a number of metres from 0 to \(Int(Self.maxHysteresisMargin)) (the longest distance "
                + "on the Earth), got \(hysteresisMargin)"
        }
        return nil
    }
}
