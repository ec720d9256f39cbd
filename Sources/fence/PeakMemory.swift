import Foundation

/// The process's peak resident size so far (Linux `VmHWM`), for summaries; nil elsewhere.
enum PeakMemory {
    static var megabytes: Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kiB = line.split(separator: " ").compactMap({ Int($0) }).first
        else { return nil }
        return (kiB + 1023) / 1024
    }
}
