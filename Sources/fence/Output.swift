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
    /// The status a quiet end on a closed pipe exits with: 0 unless the command already knows
    /// the run failed (`check` with bad fences prints them, and `| head` must not turn its 1
    /// into 0). Set on the main thread before the output it concerns.
    nonisolated(unsafe) static var statusOnClose: Int32 = 0

    /// Ends the run after a write to `what` failed with `errno`. A closed pipe (`| head`) ends
    /// it quietly with `statusOnClose`, unless `unfinishedOnClose` says what would be lost;
    /// any other failure (a full disk, a bad descriptor) is named, with status 1.
    static func exitAfterFailedWrite(to what: String) -> Never {
        let code = errno
        if code == EPIPE {
            guard let unfinished = unfinishedOnClose else { exit(statusOnClose) }
            StandardError().write("fence: \(what) was closed before the run ended; \(unfinished)\n")
            exit(1)
        }
        StandardError().write("fence: cannot write \(what): \(String(cString: strerror(code)))\n")
        exit(1)
    }
}

/// Writes `text` and a line break to standard output at once, with write(2): the commands'
/// help, `check`'s report and `status` lines. Not `print`, whose stdio buffer drops a failed
/// write without a word (`--help > /dev/full` said 0).
func printLine(_ text: String) {
    var line = text + "\n"
    let ok = line.withUTF8 { writeAll(1, UnsafeRawBufferPointer($0)) }
    if !ok { OutputFailure.exitAfterFailedWrite(to: "standard output") }
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
/// With `deferOpening`, a regular file is opened (created, or emptied) only at the first
/// explicit `flush()`, which `fence eval` makes once its first batch of input was read: a run
/// refused at its input's header leaves the previous output as it was. Until then everything
/// written is held, however much (the events of restoring a state come before that batch).
/// Anything else at the path (a FIFO, a device) is opened at once: its reader waits for it.
final class OutputSink {
    private var fd: Int32
    private let path: String?
    private var buffer: [UInt8] = []
    /// Compresses the file's bytes (`--output` ending `.gz` or `.zst`); nil for plain output.
    private let encoder: OutputEncoder?
    private var finished = false

    init() {
        fd = 1
        path = nil
        encoder = nil
    }

    /// Output to the file at `path`, checked now (a directory, or one that could not be
    /// created or written, is refused), compressed when its name ends `.gz` or `.zst`.
    /// - Throws: `malformedInput` when it could not be written.
    init(path: String, deferOpening: Bool = false) throws(FenceError) {
        fd = -1
        self.path = path
        encoder = OutputEncoder.kind(forName: path).map(OutputEncoder.init)
        try refuseUnwritable(path)
        var s = stat()
        let regularOrNew = stat(path, &s) != 0 || (s.st_mode & S_IFMT) == S_IFREG
        if !(deferOpening && regularOrNew) {
            fd = Self.create(path)
            if fd < 0 { throw FenceError(.malformedInput, reason: "cannot open \(path) for writing: \(String(cString: strerror(errno)))") }
        }
    }

    /// Writes what is left and ends a compressed stream, but opens nothing: a deferred file
    /// not yet opened is left as it was (the run ended before its first batch of input was read).
    deinit {
        if fd >= 0 && !finished { finish() }
        if path != nil && fd >= 0 { close(fd) }
    }

    /// Adds to the buffer; writes it out past 1 MiB once the file is open.
    func write(_ bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= 1 << 20 && fd >= 0 { flush() }
    }

    /// Opens `path` for writing, created or emptied; -1 (with `errno`) when it cannot be.
    private static func create(_ path: String) -> Int32 { open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644) }

    /// Writes the buffer, opening (creating or emptying) a deferred file first. Compressed,
    /// it ends on a flush point: what is in the file so far can be decoded.
    func flush() { flush(final: false) }

    /// The last write: flushes and ends a compressed stream (its trailer), before the run
    /// goes on to what follows its output (the state file). Nothing is written after it.
    func finish() {
        flush(final: true)
        finished = true
    }

    private func flush(final: Bool) {
        precondition(!finished, "OutputSink written after finish()")
        if fd < 0, let path {
            fd = Self.create(path)
            if fd < 0 { OutputFailure.exitAfterFailedWrite(to: path) }
        }
        let ok: Bool
        if let encoder {
            // An empty flush would add a flush marker (5 bytes of gzip) and nothing else.
            guard final || !buffer.isEmpty else { return }
            let bytes = buffer.withUnsafeBytes { encoder.encode($0, final: final) }
            ok = bytes.withUnsafeBytes { writeAll(fd, $0) }
        } else {
            ok = buffer.withUnsafeBytes { writeAll(fd, $0) }
        }
        if !ok { OutputFailure.exitAfterFailedWrite(to: path ?? "standard output") }
        buffer.removeAll(keepingCapacity: true)
    }
}

/// Refuses an `--output` named for a compressed format that is not written (`.xz`, `.bz2`,
/// an archive: `OutputEncoder.unwrittenEnding`), rather than writing plain text under it.
func refuseUnwrittenCompression(_ outputPath: String?) throws(UsageError) {
    guard let outputPath, let ending = OutputEncoder.unwrittenEnding(ofName: outputPath) else { return }
    throw UsageError("--output \(outputPath): \(ending) is not written; name it .gz or .zst, or pipe --output - to the compressor")
}

/// The folder of `path` ("." for a bare name).
private func folder(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return slash == path.startIndex ? "/" : String(path[..<slash])
}

/// Refuses, before any work, a file the run will write: a directory, or a file that could not
/// be written or created. With `byRename` (the state file: a new file is written beside it and
/// renamed over it) only its folder must be writable, whatever the file's own mode.
/// - Throws: `malformedInput` naming the path and why.
func refuseUnwritable(_ path: String, byRename: Bool = false) throws(FenceError) {
    var s = stat()
    if stat(path, &s) == 0 && (s.st_mode & S_IFMT) == S_IFDIR {
        throw FenceError(.malformedInput, reason: "cannot write \(path): it is a directory")
    }
    let writable = byRename || access(path, F_OK) != 0 ? access(folder(of: path), W_OK) == 0 : access(path, W_OK) == 0
    if !writable {
        throw FenceError(.malformedInput, reason: "cannot write \(path): \(String(cString: strerror(errno)))")
    }
}

/// Refuses an `--output` that names the same file as one of the run's inputs or its state
/// file: opening it for writing would empty the input before it is read, or the state's
/// rename would replace the events. Existing files are compared by device and inode, so
/// another spelling of the path (`./x`, a link) is caught too, and positions from standard
/// input (`-`) are compared by what standard input is. Paths not there yet (a new output, a
/// new state) are compared by their folder's real path and their name.
/// - Throws: `UsageError` naming both options.
func refuseSameFile(output: String?, others: [(option: String, path: String?)]) throws(UsageError) {
    guard let output, output != "-" else { return }
    func identity(_ path: String) -> (dev: UInt64, ino: UInt64)? {
        var s = stat()
        let found = path == "-" ? fstat(0, &s) == 0 : stat(path, &s) == 0
        guard found, (s.st_mode & S_IFMT) == S_IFREG else { return nil }
        return (UInt64(s.st_dev), UInt64(s.st_ino))
    }
    func newName(_ path: String) -> String? {
        guard path != "-", access(path, F_OK) != 0, let real = realpath(folder(of: path), nil) else { return nil }
        defer { free(real) }
        return String(cString: real) + "/" + (path.split(separator: "/").last.map(String.init) ?? path)
    }
    let o = identity(output)
    let oNew = o == nil ? newName(output) : nil
    for (option, path) in others {
        guard let path else { continue }
        let same: Bool
        if let o, let p = identity(path) {
            same = o.dev == p.dev && o.ino == p.ino
        } else if let oNew, let p = newName(path) {
            same = oNew == p
        } else {
            same = false
        }
        if same { throw UsageError("--output and --\(option) name the same file \(output)") }
    }
}

/// Output rows formatted on the workers and kept in order.
enum ChunkedRows {
    /// Rows `0..<count` as bytes, `row(i, &bytes)` appending row i, formatted on up to
    /// `threads` workers a chunk of `chunkSize` rows each: the chunks' bytes, in row order,
    /// the same for every thread count. Formatting a million rows on one thread was most of a
    /// `fence contains` run against a small fence set, and a third of `fence eval`'s.
    /// - Complexity: O(count) row calls over the workers, and one copy of the bytes.
    static func formatted(
        count: Int, chunkSize: Int, threads: Int, bytesPerRow: Int, row: (Int, inout [UInt8]) -> Void
    ) -> [[UInt8]] {
        var pieces = [[UInt8]](repeating: [], count: (count + chunkSize - 1) / chunkSize)
        pieces.withUnsafeMutableBufferPointer { buffer in
            nonisolated(unsafe) let pieces = buffer
            Parallel.forEachChunk(count: count, chunkSize: chunkSize, threads: threads, makeState: { () }) { _, c, range in
                var bytes: [UInt8] = []
                bytes.reserveCapacity(range.count * bytesPerRow)
                for i in range { row(i, &bytes) }
                pieces[c] = bytes
            }
        }
        return pieces
    }
}
