import Foundation

/// The process's peak resident size so far (Linux `VmHWM`), for summaries; nil elsewhere.
enum PeakMemory {
    static var megabytes: Int? { kibibytes.map { ($0 + 1023) / 1024 } }

    static var kibibytes: Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
        else { return nil }
        return line.split(separator: " ").compactMap({ Int($0) }).first
    }
}
