import FenceEngine
import FenceIO
import Foundation

/// What ends the run when its output cannot be written.
enum OutputFailure {
    /// Said when the reader of standard output or `--output` goes away (a closed pipe) while
    /// the run still has something to finish that the user relies on, such as the state file
    /// of `fence eval --state`; the run then exits 1 instead of quietly. Set once, before any
    /// output, by the command on the main thread.
    nonisolated(unsafe) static var unfinishedOnClose: String?

    /// Ends the run after a write to `what` failed with `errno`. A closed pipe (`| head`) ends
    /// it quietly with status 0, unless `unfinishedOnClose` says what would be lost; any other
    /// failure (a full disk, a bad descriptor) is named, with status 1.
    static func exitAfterFailedWrite(to what: String) -> Never {
        let code = errno
        if code == EPIPE {
            guard let unfinished = unfinishedOnClose else { exit(0) }
            StandardError().write("fence: \(what) was closed before the run ended; \(unfinished)\n")
            exit(1)
        }
        StandardError().write("fence: cannot write \(what): \(String(cString: strerror(code)))\n")
        exit(1)
    }

    /// Flushes what `print` buffered for standard output and ends the run as above if it
    /// could not be written (`print` itself ignores the failure: `--help > /dev/full` said 0).
    static func flushStandardOutput() {
        // All streams (only standard output is written through stdio): a write that failed
        // before leaves its bytes buffered, so this flush fails again and says so.
        if fflush(nil) != 0 { exitAfterFailedWrite(to: "standard output") }
    }
}

/// Writes to standard output, unbuffered here (callers hand it large blocks).
final class StandardOutput {
    func write(_ bytes: [UInt8]) {
        let ok = bytes.withUnsafeBytes { writeAll(1, $0) }
        if !ok { OutputFailure.exitAfterFailedWrite(to: "standard output") }
    }
}

/// Unbuffered writes to standard error. A message that cannot be written is dropped: there is
/// nowhere left to say so, and the run's own work (its output, its state file) goes on.
struct StandardError {
    func write(_ s: String) {
        var s = s
        _ = s.withUTF8 { writeAll(2, UnsafeRawBufferPointer($0)) }
    }
}

/// Where events go: standard output or a file, written in large blocks.
///
/// A file is opened (created, or truncated) only when the first block is written, which is
/// after the command has read its first batch of input: a run refused at its input's header
/// leaves the previous output as it was.
final class OutputSink {
    private var fd: Int32
    private let path: String?
    private var buffer: [UInt8] = []

    init() {
        fd = 1
        path = nil
    }

    /// Output to the file at `path`, checked now (its directory must let it be created) but
    /// opened at the first flush.
    /// - Throws: `malformedInput` when it could not be written.
    init(path: String) throws(FenceError) {
        fd = -1
        self.path = path
        try refuseUnwritable(path)
    }

    /// Writes what is left, but opens nothing: a file not yet opened is left as it was (the
    /// run ended before its first batch of input was read).
    deinit {
        if path == nil || fd >= 0 { flush() }
        if path != nil && fd >= 0 { close(fd) }
    }

    func write(_ bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= 1 << 20 { flush() }
    }

    /// Writes the buffer, opening (creating or truncating) the file first if need be.
    func flush() {
        if fd < 0, let path {
            fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            if fd < 0 { OutputFailure.exitAfterFailedWrite(to: path) }
        }
        let ok = buffer.withUnsafeBytes { writeAll(fd, $0) }
        if !ok { OutputFailure.exitAfterFailedWrite(to: path ?? "standard output") }
        buffer.removeAll(keepingCapacity: true)
    }

}

/// Refuses, before any work, a file the run will write at its end or on its first output:
/// a directory, or a file that could not be written or created (a missing or read-only
/// directory).
/// - Throws: `malformedInput` naming the path and why.
func refuseUnwritable(_ path: String) throws(FenceError) {
    var s = stat()
    if stat(path, &s) == 0 && (s.st_mode & S_IFMT) == S_IFDIR {
        throw FenceError(.malformedInput, reason: "cannot write \(path): it is a directory")
    }
    let directory: String
    if let slash = path.lastIndex(of: "/") {
        directory = slash == path.startIndex ? "/" : String(path[..<slash])
    } else {
        directory = "."
    }
    if access(path, F_OK) == 0 ? access(path, W_OK) != 0 : access(directory, W_OK) != 0 {
        throw FenceError(.malformedInput, reason: "cannot write \(path): \(String(cString: strerror(errno)))")
    }
}

/// Refuses an `--output` that names the same file as one of the run's inputs or its state
/// file: opening it for writing would empty the input before it is read, or the state's
/// rename would replace the events. Files are compared by device and inode, so another
/// spelling of the path (`./x`, a link) is caught too. Paths that do not exist yet are not
/// compared (only `--output` and `--state` may be new).
/// - Throws: `UsageError` naming both options.
func refuseSameFile(output: String?, others: [(option: String, path: String?)]) throws(UsageError) {
    guard let output, output != "-" else { return }
    var o = stat()
    guard stat(output, &o) == 0 else {
        // Not there yet: it can only clash with another new path spelt the same.
        for (option, path) in others where path == output {
            throw UsageError("--output and --\(option) name the same file \(output)")
        }
        return
    }
    for (option, path) in others {
        guard let path, path != "-" else { continue }
        var s = stat()
        if stat(path, &s) == 0 && s.st_dev == o.st_dev && s.st_ino == o.st_ino && (o.st_mode & S_IFMT) == S_IFREG {
            throw UsageError("--output and --\(option) name the same file \(output)")
        }
    }
}
