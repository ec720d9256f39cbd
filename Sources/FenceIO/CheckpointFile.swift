import FenceEngine
import Foundation

/// The tracker's state on disk: `TrackerSnapshot`'s versioned, checksummed bytes, written
/// atomically (a temporary file in the same folder, fsync, rename, fsync of the folder), so a
/// crash at any point leaves either the old file or the new one, never a torn one.
public enum CheckpointFile {
    /// Reads a checkpoint; nil when the file does not exist.
    /// - Throws: `FenceError` when it exists but cannot be read, or is truncated, corrupted or
    ///   of another version. It is never treated as an empty state.
    public static func read(path: String) throws(FenceError) -> TrackerSnapshot? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        // Named plainly: Foundation words a directory as "error 256" and a FIFO or device
        // (which the atomic write would replace anyway) as a permission problem.
        var s = stat()
        if stat(path, &s) == 0 && (s.st_mode & S_IFMT) != S_IFREG {
            let kind = (s.st_mode & S_IFMT) == S_IFDIR ? "a directory" : "not a regular file"
            throw FenceError(.malformedInput, reason: "cannot read state file \(path): it is \(kind)")
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw FenceError(.malformedInput, reason: "cannot read state file \(path): \(error.localizedDescription)")
        }
        return try decode([UInt8](data), from: path)
    }

    /// A checkpoint's bytes read from elsewhere (standard input), decoded as `read` decodes a
    /// file's.
    /// - Throws: `FenceError` naming `source` when the bytes are truncated, corrupted or of
    ///   another version.
    public static func decode(_ bytes: [UInt8], from source: String) throws(FenceError) -> TrackerSnapshot {
        do {
            return try TrackerSnapshot(decoding: bytes)
        } catch {
            throw FenceError(.malformedInput, reason: "\(source): \(error.reason)")
        }
    }

    /// Writes a checkpoint atomically.
    public static func write(_ snapshot: TrackerSnapshot, path: String) throws(FenceError) {
        let bytes = snapshot.encoded()
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        let temp = folder + "/." + url.lastPathComponent + ".tmp-\(getpid())"
        func fail(_ what: String) -> FenceError {
            FenceError(.malformedInput, reason: "cannot write state file \(path): \(what): \(String(cString: strerror(errno)))")
        }
        let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw fail("open") }
        let ok = bytes.withUnsafeBytes { writeAll(fd, $0) }
        guard ok, fsync(fd) == 0 else {
            let e = fail("write")
            close(fd)
            unlink(temp)
            throw e
        }
        close(fd)
        guard rename(temp, path) == 0 else {
            let e = fail("rename")
            unlink(temp)
            throw e
        }
        let dir = open(folder.isEmpty ? "." : folder, O_RDONLY)
        if dir >= 0 {
            _ = fsync(dir)
            close(dir)
        }
        removeStaleTemporaries(folder: folder, name: url.lastPathComponent)
    }

    /// Holds a state file for one run: an exclusive `flock` on `.NAME.lock` beside it (the
    /// state itself is replaced by rename, so a lock on it would be on the old file). Two runs
    /// sharing a state file would each read the same state and the last to finish would
    /// replace the other's, losing its visits without a word; the second is refused instead.
    /// The lock goes with the process (closed, or the process killed); the lock file stays, so
    /// that no two runs ever lock two different files of one name.
    public final class Lock {
        private let fd: Int32
        fileprivate init(fd: Int32) { self.fd = fd }
        deinit { close(fd) }
    }

    /// Takes the lock of the state file `path` without waiting (see `Lock`).
    /// - Throws: `FenceError` (malformed-input) naming the state file when another process
    ///   holds it (with that process's id, when it wrote one), or when the lock file cannot be
    ///   created (the folder is not writable).
    /// - Complexity: a few system calls.
    public static func lock(path: String) throws(FenceError) -> Lock {
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        let lockPath = (folder.isEmpty ? "." : folder) + "/." + url.lastPathComponent + ".lock"
        // Made as the state is (0666 less the umask); another user who may replace the state
        // but not write this file still locks it, read-only (flock needs no write access).
        var fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o666)
        if fd < 0 {
            let reason = String(cString: strerror(errno))
            if errno == EACCES { fd = open(lockPath, O_RDONLY | O_CLOEXEC) }
            // Said as a folder that cannot be written is said for the state itself.
            guard fd >= 0 else { throw FenceError(.malformedInput, reason: "cannot write \(path): \(reason)") }
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let busy = errno == EWOULDBLOCK
            let reason = String(cString: strerror(errno))
            var text = [UInt8](repeating: 0, count: 32)
            let n = pread(fd, &text, text.count, 0)
            close(fd)
            guard busy else { throw FenceError(.malformedInput, reason: "cannot lock state file \(path) (\(lockPath)): \(reason)") }
            let holder = n > 0 ? Int32(String(decoding: text[..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) : nil
            throw FenceError(
                .malformedInput,
                reason: "state file \(path) is in use by another run\(holder.map { " (process \($0))" } ?? ""); "
                    + "runs sharing a state file must take turns")
        }
        // Who holds it, for the message above; the lock does not depend on it.
        let pid = Array("\(getpid())\n".utf8)
        if ftruncate(fd, 0) == 0 { _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) } }  // fails read-only
        return Lock(fd: fd)
    }

    /// Removes the temporary files that writers killed mid-write left behind (`.NAME.tmp-PID`
    /// of a process that no longer exists), so repeated crashes do not fill the folder. A live
    /// writer's file is left alone.
    static func removeStaleTemporaries(folder: String, name: String) {
        let prefix = "." + name + ".tmp-"
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: folder.isEmpty ? "." : folder) else { return }
        for entry in entries where entry.hasPrefix(prefix) {
            guard let pid = pid_t(entry.dropFirst(prefix.count)), pid != getpid() else { continue }
            if kill(pid, 0) == -1 && errno == ESRCH { unlink((folder.isEmpty ? "." : folder) + "/" + entry) }
        }
    }
}
