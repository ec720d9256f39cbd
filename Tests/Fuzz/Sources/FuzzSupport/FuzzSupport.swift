import FenceEngine
import FenceIO
import Foundation

/// What the fuzz targets share: feeding bytes to the position reader through a real file
/// descriptor (the path the CLI takes), and failing loudly when an invariant breaks.
public enum FuzzSupport {
    /// Where an empty input points when libFuzzer passes no buffer.
    nonisolated(unsafe) public static let empty = UnsafePointer(UnsafeMutablePointer<UInt8>.allocate(capacity: 1))

    /// One scratch file in /dev/shm (memory), rewritten for every input.
    nonisolated(unsafe) static var scratch: Int32 = -1

    /// A descriptor positioned at the start of a file holding exactly `bytes`.
    public static func descriptor(holding bytes: UnsafeBufferPointer<UInt8>) -> Int32 {
        if scratch < 0 {
            let dir = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
            let path = dir + "/fence-fuzz-\(getpid())"
            scratch = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
            precondition(scratch >= 0, "cannot open \(path)")
            unlink(path)
        }
        precondition(ftruncate(scratch, 0) == 0)
        var offset = 0
        while offset < bytes.count {
            let n = pwrite(scratch, bytes.baseAddress! + offset, bytes.count - offset, off_t(offset))
            precondition(n > 0, "write failed")
            offset += n
        }
        precondition(lseek(scratch, 0, SEEK_SET) == 0)
        return scratch
    }

    /// Everything a reader gives for one input, in one comparable value.
    public struct Outcome: Equatable {
        public var positions: [Position] = []
        public var errors: [PositionLineError] = []
        public var thrown: String?
    }

    /// Reads the whole input with `PositionReader`, in batches of `batch`, and checks what the
    /// reader promises: every position it returns is usable, bad lines are numbered in order
    /// within the lines read, nothing is both.
    public static func readPositions(
        _ bytes: UnsafeBufferPointer<UInt8>, format: PositionReader.Format?, maxLineBytes: Int, batch: Int
    ) -> Outcome {
        let fd = descriptor(holding: bytes)
        let reader = PositionReader(fileDescriptor: fd, format: format, maxLineBytes: maxLineBytes)
        var out = Outcome()
        do throws(FenceError) {
            while try reader.read(limit: batch, into: &out.positions, errors: &out.errors) {}
        } catch {
            out.thrown = error.description
        }
        let lines = bytes.reduce(0) { $0 + ($1 == 10 ? 1 : 0) } + ((bytes.last ?? 10) == 10 ? 0 : 1)
        check(reader.lineNumber <= lines, "line number \(reader.lineNumber) beyond the \(lines) lines of the input")
        check(out.positions.count + out.errors.count <= lines, "more results than lines")
        for p in out.positions {
            check(p.problem == nil, "a returned position has a problem: \(p.problem!)")
            check(!p.device.isEmpty, "a returned position has an empty device")
        }
        var last = 0
        for e in out.errors {
            check(e.line > last && e.line <= reader.lineNumber, "error line \(e.line) out of order (after \(last), of \(reader.lineNumber))")
            last = e.line
        }
        check(reader.rejected == out.errors.count, "rejected count \(reader.rejected) != \(out.errors.count) errors")
        return out
    }

    /// Stops the fuzzer with a message (libFuzzer records the input as a crash).
    public static func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
        if !condition() {
            FileHandle.standardError.write(Data("fuzz invariant broken: \(message())\n".utf8))
            abort()
        }
    }
}
