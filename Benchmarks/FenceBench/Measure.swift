import Foundation
import FenceEngine

enum Measure {
    /// Monotonic seconds.
    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
    }

    /// Resident set size in bytes, from /proc/self/statm, after returning freed memory to the OS.
    static func residentBytes() -> Int {
        AllocatorTuning.returnFreedMemory()
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    static var swiftVersion: String {
        #if swift(>=6.3)
            return "6.3"
        #elseif swift(>=6.2)
            return "6.2"
        #elseif swift(>=6.1)
            return "6.1"
        #else
            return "6.0"
        #endif
    }

    static var isReleaseBuild: Bool {
        #if DEBUG
            return false
        #else
            return true
        #endif
    }
}
