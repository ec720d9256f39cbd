import FenceEngine
@testable import FenceIO
import Foundation
import XCTest

/// `CheckpointFile`'s paths the coverage audit found no XCTest executing (the crash script
/// `Tests/Reliability/crash.sh` reaches some, outside the suite): temporary files of killed
/// writers removed by the next write, a write that cannot open or rename, and a lock held by a
/// run that wrote no process id.
final class CheckpointFileTests: XCTestCase {
    func folder() throws -> String {
        let dir = NSTemporaryDirectory() + "checkpoint-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        return dir
    }

    /// One device's state, as an engine writes it.
    static let snapshot: TrackerSnapshot = {
        var engine = EventEngine()
        _ = engine.add([.circle(id: "c", lon: 1, lat: 2, radius: 100)])
        _ = engine.evaluate([Position(device: "v", time: 20, lon: 1, lat: 2)])
        return engine.snapshot()
    }()

    /// The id of a process that has ended (and been reaped).
    func deadProcessID() throws -> pid_t {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/true")
        try p.run()
        p.waitUntilExit()
        return p.processIdentifier
    }

    /// README: "Temporary files of killed writers are removed by the next write". Only this
    /// state's temporaries of processes that no longer exist go; a live writer's, another
    /// state's and a name that is no process id stay.
    func testTemporariesOfKilledWritersAreRemovedByTheNextWrite() throws {
        let dir = try folder()
        let dead = try deadProcessID()
        XCTAssertEqual(kill(dead, 0), -1)
        let stale = ".state.bin.tmp-\(dead)"
        let kept = [".state.bin.tmp-\(getppid())", ".state.bin.tmp-x1", ".other.bin.tmp-\(dead)", "state.bin.tmp-\(dead)"]
        for name in [stale] + kept { XCTAssertTrue(FileManager.default.createFile(atPath: dir + "/" + name, contents: Data([1, 2, 3]))) }
        try CheckpointFile.write(Self.snapshot, path: dir + "/state.bin")
        let left = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        XCTAssertEqual(left, (kept + ["state.bin"]).sorted())
        XCTAssertEqual(try CheckpointFile.read(path: dir + "/state.bin"), Self.snapshot)
    }

    /// A state file that cannot be written says which step failed and why, leaves no
    /// temporary file, and leaves what was there: a folder that does not exist (open), and a
    /// path that is a folder (rename).
    func testAWriteThatCannotOpenOrRenameSaysWhy() throws {
        let dir = try folder()
        let missing = dir + "/no-such-folder/state.bin"
        XCTAssertThrowsError(try CheckpointFile.write(Self.snapshot, path: missing)) { error in
            XCTAssertEqual((error as? FenceError)?.reason, "cannot write state file \(missing): open: No such file or directory")
        }
        let taken = dir + "/state.bin"
        try FileManager.default.createDirectory(atPath: taken + "/inside", withIntermediateDirectories: true)
        XCTAssertThrowsError(try CheckpointFile.write(Self.snapshot, path: taken)) { error in
            XCTAssertEqual((error as? FenceError)?.reason, "cannot write state file \(taken): rename: Is a directory")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir).sorted(), ["state.bin"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: taken), ["inside"])
    }

    /// A lock held by a run that wrote no process id (an older build, or one killed between
    /// taking the lock and writing it) is still refused, without a process id; once it goes,
    /// the lock is taken and names this process.
    func testALockHeldWithoutAProcessIDIsRefused() throws {
        let dir = try folder()
        let path = dir + "/state.bin"
        let other = open(dir + "/.state.bin.lock", O_RDWR | O_CREAT, 0o644)
        XCTAssertGreaterThanOrEqual(other, 0)
        XCTAssertEqual(flock(other, LOCK_EX | LOCK_NB), 0)
        XCTAssertThrowsError(try CheckpointFile.lock(path: path)) { error in
            XCTAssertEqual(
                (error as? FenceError)?.reason, "state file \(path) is in use by another run; runs sharing a state file must take turns")
        }
        close(other)
        let lock = try CheckpointFile.lock(path: path)
        let second = open(dir + "/.state.bin.lock", O_RDONLY)
        defer { close(second) }
        XCTAssertNotEqual(flock(second, LOCK_EX | LOCK_NB), 0)
        XCTAssertEqual(try String(contentsOfFile: dir + "/.state.bin.lock", encoding: .utf8), "\(getpid())\n")
        withExtendedLifetime(lock) {}
    }
}
