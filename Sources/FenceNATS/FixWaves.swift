import FenceEngine

/// How `FixPublisher` groups fixes into messages and waves, apart from sending them: each
/// message is one device's fixes of one event-time window (at most `maxFixesPerMessage`), and
/// a wave holds at most one message per device.
///
/// A wave closes before a fix whose window is later than the latest window seen, or later
/// than the window of its own device's buffered fixes. The second rule is what keeps one fix
/// dated far ahead from stalling everyone: it moves the latest window out of reach, but every
/// other device still closes a wave as soon as it moves on, so no message spans more than one
/// window. (With the first rule alone, every device's fixes piled up to `maxFixesPerMessage`
/// per message, in every partition, and workers dropped most of them as late.) For
/// time-ordered input the two rules agree, since a wave closes whenever the latest window
/// moves, leaving every buffered fix in it.
///
/// Within one wave, a fix is never more than one window older than a fix in a message
/// before it, if the input is in time order (the outlier's own partition aside, whose
/// event time the worker takes from the outlier).
/// - Complexity: O(1) per fix, besides the table lookup.
struct FixWaves {
    /// Seconds of event time per message (0: one fix per message).
    let window: Double
    let maxFixesPerMessage: Int
    private var buffers = IDTable<[Position]>()
    /// Devices in the order of their first buffered fix: the order of the wave's messages.
    private var order: [String] = []
    private var latestWindow: Double?

    init(window: Double, maxFixesPerMessage: Int) {
        self.window = max(0, window)
        self.maxFixesPerMessage = max(1, maxFixesPerMessage)
    }

    var isEmpty: Bool { order.isEmpty }

    /// The window index of an event time (the time itself when `window` is 0 or the time is
    /// not finite).
    func windowOf(_ time: Double) -> Double {
        window > 0 && time.isFinite ? (time / window).rounded(.down) : time
    }

    /// Whether the buffered wave must be sent before `fix` joins it.
    func closesWave(before fix: Position) -> Bool {
        guard !order.isEmpty else { return false }
        if window == 0 { return true }
        let w = windowOf(fix.time)
        if let latest = latestWindow, w > latest { return true }
        if let last = buffers[fix.device]?.last, w > windowOf(last.time) { return true }
        return false
    }

    /// Buffers `fix`; true when its device's message is full and the wave must be sent.
    mutating func append(_ fix: Position) -> Bool {
        let w = windowOf(fix.time)
        if latestWindow == nil || w > latestWindow! { latestWindow = w }
        if buffers[fix.device] == nil {
            order.append(fix.device)
            buffers[fix.device] = [fix]
            return maxFixesPerMessage == 1
        }
        buffers[fix.device]!.append(fix)
        return buffers[fix.device]!.count >= maxFixesPerMessage
    }

    /// The buffered wave, one message per device in first-buffered order; empties the buffer.
    mutating func take() -> [(device: String, fixes: [Position])] {
        let wave = order.map { ($0, buffers[$0]!) }
        buffers.removeAll(keepingCapacity: true)
        order.removeAll(keepingCapacity: true)
        return wave
    }
}
