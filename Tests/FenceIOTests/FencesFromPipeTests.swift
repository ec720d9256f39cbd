import Foundation
import XCTest

/// Fences from a pipe or a device (`--fences <(zcat zones.geojson.gz)`, a named pipe) are read
/// as standard input is, by the built-in reader: found by a README audit, which got "You don't
/// have permission" (a pipe cannot be mapped) or OGR's "Failed to read GeoJSON data".
final class FencesFromPipeTests: XCTestCase {
    /// Writes `text` into the named pipe at `path` once a reader opens it (giving up after 20
    /// seconds, so a reader that never comes cannot hang the test).
    func feed(_ path: String, _ text: String) -> Thread {
        let thread = Thread {
            let deadline = Date().addingTimeInterval(20)
            var fd: Int32 = -1
            while fd < 0 && Date() < deadline {
                fd = open(path, O_WRONLY | O_NONBLOCK)
                if fd < 0 { usleep(10_000) }
            }
            guard fd >= 0 else { return }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
            let bytes = Array(text.utf8)
            var written = 0
            while written < bytes.count {
                let n = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress!, $0.count) }
                if n <= 0 { break }
                written += n
            }
            close(fd)
        }
        thread.start()
        return thread
    }

    func testFencesFromANamedPipe() throws {
        let file = try CLI.temp(self, "zones.geojson", CLI.fences)
        let pipe = (file as NSString).deletingLastPathComponent + "/zones-pipe"
        XCTAssertEqual(mkfifo(pipe, 0o600), 0)
        let direct = try CLI.run(["contains", "--fences", file, "--positions", "-"], stdin: "device,time,lon,lat\nv,0,0.5,0.5\nw,0,50,50\n")
        XCTAssertEqual(direct.status, 0, direct.err)
        _ = feed(pipe, CLI.fences)
        let piped = try CLI.run(["contains", "--fences", pipe, "--positions", "-"], stdin: "device,time,lon,lat\nv,0,0.5,0.5\nw,0,50,50\n")
        XCTAssertEqual(piped.status, 0, piped.err)
        XCTAssertEqual(piped.out, direct.out)
        XCTAssertNotEqual(direct.out, "")
    }

    func testADeviceOfZerosIsRefusedAtOnce() throws {
        for reader in ["auto", "native"] {
            let r = try CLI.run(["check", "--fences", "/dev/zero", "--fence-reader", reader])
            XCTAssertEqual(r.status, 1, r.err)
            XCTAssertEqual(r.err, "fence: /dev/zero: malformed-input: /dev/zero holds binary data (a NUL byte): it is not GeoJSON\n")
        }
    }
}
