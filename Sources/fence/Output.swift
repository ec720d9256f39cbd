import FenceEngine
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

/// Where events go: standard output or a file, written in large blocks.
final class OutputSink {
    private let fd: Int32
    private let owned: Bool
    private var buffer: [UInt8] = []

    init() {
        fd = 1
        owned = false
    }

    init(path: String) throws(FenceError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else {
            throw FenceError(.malformedInput, reason: "cannot open \(path) for writing: \(String(cString: strerror(errno)))")
        }
        self.fd = fd
        owned = true
    }

    deinit {
        flush()
        if owned { close(fd) }
    }

    func write(_ bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= 1 << 20 { flush() }
    }

    func flush() {
        var offset = 0
        buffer.withUnsafeBytes { raw in
            while offset < raw.count {
                let n = Foundation.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    exit(errno == EPIPE ? 0 : 1)
                }
                offset += n
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
