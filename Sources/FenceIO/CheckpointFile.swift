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
        do {
            return try TrackerSnapshot(decoding: [UInt8](data))
        } catch {
            throw FenceError(.malformedInput, reason: "\(path): \(error.reason)")
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
