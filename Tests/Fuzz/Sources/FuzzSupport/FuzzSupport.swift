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
    /// Layouts the position targets also read times in (`--time-format`).
    public static let timeFormats = [try! TimeFormat("%a %b %e %Y %I:%M:%S %p %z"), try! TimeFormat("%d.%m.%y %T.%f")]

    public static func readPositions(
        _ bytes: UnsafeBufferPointer<UInt8>, format: PositionReader.Format?, maxLineBytes: Int, batch: Int,
        columns: [String]? = nil, fields: [PositionField: String] = [:], timeFormat: TimeFormat? = nil
    ) -> Outcome {
        let fd = descriptor(holding: bytes)
        let reader = PositionReader(
            fileDescriptor: fd, format: format, maxLineBytes: maxLineBytes, columns: columns, fields: fields, timeFormat: timeFormat)
        var out = Outcome()
        do throws(FenceError) {
            while try reader.read(limit: batch, into: &out.positions, errors: &out.errors) {}
        } catch {
            out.thrown = error.description
        }
        // Lines of the text: a compressed input (gzip's or zstd's magic first) is decoded by
        // the reader, so its own line breaks say nothing.
        let gzip = bytes.count >= 2 && bytes[0] == 0x1F && bytes[1] == 0x8B
        let zstd = bytes.count >= 4 && (bytes[0] == 0x28 || bytes[0] & 0xF0 == 0x50)
        let lines = gzip || zstd ? Int.max : bytes.reduce(0) { $0 + ($1 == 10 ? 1 : 0) } + ((bytes.last ?? 10) == 10 ? 0 : 1)
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

    /// Engines with the seed fences (a 1 km circle "port" at 0,0 and a square "yard" east of
    /// it), built once: plain, and with hysteresis, an exit delay and cross detection.
    nonisolated(unsafe) static let engines: [EventEngine] = {
        var hysteresis = EventSettings()
        hysteresis.dwell = 60
        hysteresis.hysteresisMargin = 20
        hysteresis.exitDelay = 30
        hysteresis.crossDetection = true
        return [EventSettings(), hysteresis].map { settings in
            var engine = try! EventEngine(settings: settings)
            var port = Fence.circle(id: "port", lon: 0, lat: 0, radius: 1000)
            port.group = "harbor"
            port.properties["name"] = "\"Pier 7\""
            _ = engine.add([
                port,
                .polygon(id: "yard", exterior: [
                    LonLat(lon: 0.02, lat: 0), LonLat(lon: 0.04, lat: 0), LonLat(lon: 0.04, lat: 0.02),
                    LonLat(lon: 0.02, lat: 0.02), LonLat(lon: 0.02, lat: 0),
                ]),
            ], threads: 1)
            return engine
        }
    }()

    /// The positions a reader returned, on through the event engine and both event writers, as
    /// `fence eval` takes them: every fix is applied, late or a duplicate; events come out in
    /// (time, device, fence, event) order; the state survives a snapshot round trip, and the
    /// same fixes applied again after a restore are all late or duplicates and cause nothing.
    public static func evaluate(_ positions: [Position]) {
        guard !positions.isEmpty else { return }
        for template in engines {
            var engine = template
            let result = engine.evaluate(positions, threads: 1)
            check(result.rejected.isEmpty, "a position the reader returned was rejected: \(result.rejected[0].reason)")
            check(result.applied + result.late + result.duplicates == positions.count, "fixes neither applied, late nor duplicate")
            check(zip(result.events, result.events.dropFirst()).allSatisfy { $0 <= $1 }, "events out of order")
            var bytes: [UInt8] = []
            for format in [EventWriter.Format.ndjson, .csv] {
                let writer = EventWriter(format: format, propertyNames: ["name"], fences: [])
                for e in result.events { writer.append(e, to: &bytes) }
            }
            let encoded = engine.snapshot().encoded()
            guard let snapshot = try? TrackerSnapshot(decoding: encoded) else {
                check(false, "the engine's own snapshot does not decode")
                return
            }
            check(snapshot.encoded() == encoded, "snapshot round trip changed the bytes")
            var restored = template
            try! restored.restore(snapshot)
            let again = restored.evaluate(positions, threads: 1)
            check(again.applied == 0 && again.events.isEmpty, "fixes applied twice after a restore")
        }
    }

    /// Stops the fuzzer with a message (libFuzzer records the input as a crash).
    public static func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
        if !condition() {
            FileHandle.standardError.write(Data("fuzz invariant broken: \(message())\n".utf8))
            abort()
        }
    }
}
