import Foundation

/// Buffered writes to standard output.
final class StandardOutput {
    func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Foundation.write(1, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    // A closed pipe (`| head`) ends the run quietly.
                    exit(errno == EPIPE ? 0 : 1)
                }
                offset += n
            }
        }
    }
}

/// Unbuffered writes to standard error.
struct StandardError {
    func write(_ s: String) {
        FileHandle.standardError.write(Data(s.utf8))
    }
}
