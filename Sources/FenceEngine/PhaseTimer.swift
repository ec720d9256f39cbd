import Foundation

/// Wall-clock time per phase of a batch, printed to standard error when the environment sets
/// `FENCE_PHASES` (profiling aid; off, it costs one branch per mark).
package struct PhaseTimer {
    private let enabled: Bool
    private let label: String
    private var last: UInt64
    private var phases: [(String, UInt64)] = []

    /// `label` is only made when `FENCE_PHASES` is set.
    package init(_ label: @autoclosure () -> String) {
        enabled = PhaseTimer.isEnabled
        self.label = enabled ? label() : ""
        last = enabled ? DispatchTime.now().uptimeNanoseconds : 0
    }

    package static let isEnabled = ProcessInfo.processInfo.environment["FENCE_PHASES"] != nil

    /// Ends the phase called `name`.
    package mutating func mark(_ name: String) {
        guard enabled else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        phases.append((name, now - last))
        last = now
    }

    package func report() {
        guard enabled else { return }
        let parts = phases.map { "\($0.0) \(String(format: "%.1f", Double($0.1) / 1e6))" }
        // write(2), not FileHandle.write, which traps when standard error is closed or full.
        var line = "\(label) ms: \(parts.joined(separator: ", "))\n"
        _ = line.withUTF8 { write(2, $0.baseAddress, $0.count) }
    }
}
