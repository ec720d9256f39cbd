import Foundation
import XCTest

/// A throwaway PostgreSQL server with PostGIS for one test: a new cluster in a temporary
/// folder (initdb), started on 127.0.0.1 at a free port (pg_ctl, trust authentication, no
/// fsync), stopped by the postmaster's PID (SIGINT: fast shutdown) and its folder removed.
///
/// PostgreSQL refuses to run as root, so as root every server command runs as the `postgres`
/// user (runuser), which owns the folder. The test is skipped, saying why, only when the
/// binaries are absent; .ci/setup installs them.
final class PostGISServer {
    let port: Int
    let folder: String
    private let bin: String
    private var pid: pid_t?

    /// The newest installed PostgreSQL whose share folder has the PostGIS extension.
    static func installation() -> (bin: String, version: String)? {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).sorted { (Int($0) ?? 0) > (Int($1) ?? 0) }
        for v in versions {
            let bin = "\(root)/\(v)/bin"
            let tools = ["initdb", "pg_ctl", "postgres", "psql"].allSatisfy { FileManager.default.isExecutableFile(atPath: "\(bin)/\($0)") }
            if tools && FileManager.default.fileExists(atPath: "/usr/share/postgresql/\(v)/extension/postgis.control") { return (bin, v) }
        }
        return nil
    }

    init() throws {
        guard let installation = Self.installation() else {
            throw XCTSkip(
                "PostgreSQL with PostGIS is not installed (apt-get install postgresql postgresql-15-postgis-3); the PostGIS test needs a real server")
        }
        bin = installation.bin
        let asRoot = getuid() == 0
        if asRoot {
            guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/runuser"), getpwnam("postgres") != nil else {
                throw XCTSkip("running as root without runuser or a postgres user: cannot start PostgreSQL unprivileged")
            }
        }
        // In /tmp, not $TMPDIR: the postgres user must be able to reach it.
        folder = "/tmp/fence-pg-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        if asRoot, let pw = getpwnam("postgres") {
            guard chown(folder, pw.pointee.pw_uid, pw.pointee.pw_gid) == 0 else { throw Failure("chown \(folder) failed") }
        }
        port = try Self.freePort()
        try runServerCommand("initdb", ["-D", "\(folder)/data", "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync"])
        try runServerCommand(
            "pg_ctl",
            [
                "-D", "\(folder)/data", "-l", "\(folder)/server.log", "-w", "-t", "60", "-o",
                "-p \(port) -k \(folder) -c listen_addresses=127.0.0.1 -c fsync=off", "start",
            ])
        // The postmaster's PID is the first line of postmaster.pid.
        let pidFile = try String(contentsOfFile: "\(folder)/data/postmaster.pid", encoding: .utf8)
        guard let first = pidFile.split(separator: "\n").first, let pid = pid_t(first) else { throw Failure("no PID in postmaster.pid") }
        self.pid = pid
    }

    deinit { stop() }

    /// `PG:` connection string for OGR.
    var connection: String { "PG:host=127.0.0.1 port=\(port) dbname=postgres user=postgres" }

    /// Runs SQL with psql, stopping at the first error.
    func sql(_ statements: String) throws {
        try Self.run("\(bin)/psql", ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", "\(port)", "-U", "postgres", "-d", "postgres", "-c", statements])
    }

    /// Fast shutdown of the postmaster by its PID; waits for it to go, then removes the folder.
    func stop() {
        guard let pid else { return }
        self.pid = nil
        kill(pid, SIGINT)
        let deadline = Date().addingTimeInterval(30)
        while kill(pid, 0) == 0 && Date() < deadline { usleep(50_000) }
        if kill(pid, 0) == 0 { kill(pid, SIGKILL) }
        try? FileManager.default.removeItem(atPath: folder)
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ d: String) { description = d }
    }

    private func runServerCommand(_ tool: String, _ arguments: [String]) throws {
        if getuid() == 0 {
            try Self.run("/usr/sbin/runuser", ["-u", "postgres", "--", "\(bin)/\(tool)"] + arguments)
        } else {
            try Self.run("\(bin)/\(tool)", arguments)
        }
    }

    /// Runs a program with its output in a file and waits for it; throws with that output
    /// when it fails. posix_spawn and waitpid, not Foundation's Process: Process learns that
    /// its child ended when a socket the child inherited closes, and the postmaster that
    /// pg_ctl leaves running would inherit it and keep it open.
    static func run(_ executable: String, _ arguments: [String]) throws {
        let log = NSTemporaryDirectory() + "fence-pg-cmd-\(UUID().uuidString).log"
        defer { try? FileManager.default.removeItem(atPath: log) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard spawned == 0 else { throw Failure("cannot start \(executable): \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        // WIFEXITED and WEXITSTATUS, which Swift does not import.
        let exited = status & 0x7f == 0
        let code = (status >> 8) & 0xff
        guard exited && code == 0 else {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw Failure("\(executable) \(arguments.joined(separator: " ")) failed (status \(status)): \(text)")
        }
    }

    /// A port nobody listens on now: bind port 0 on 127.0.0.1 and read what the kernel chose.
    static func freePort() throws -> Int {
        let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard s >= 0 else { throw Failure("socket failed") }
        defer { close(s) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(s, $0, length) } }
        guard bound == 0 else { throw Failure("bind failed") }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(s, $0, &length) }
        }
        guard named == 0 else { throw Failure("getsockname failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
