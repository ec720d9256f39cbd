import Foundation
import XCTest

/// `nats-server` processes for the integration tests: loopback only, free ports, a temporary
/// store folder each, stopped by PID.
final class NATSServer {
    static let binary = ["/usr/sbin/nats-server", "/usr/bin/nats-server", "/usr/local/bin/nats-server"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    let name: String
    let port: Int
    let clusterPort: Int?
    let folder: String
    let config: String
    private var process: Process?

    var url: String { "nats://127.0.0.1:\(port)" }
    var pid: Int32? { process?.processIdentifier }
    var isRunning: Bool { process?.isRunning ?? false }

    /// - Parameters:
    ///   - routes: cluster ports of the other servers (empty: a single server).
    ///   - mapping: the `mappings` line (`fence setup` prints it).
    init(name: String, folder: String, port: Int, clusterPort: Int? = nil, routes: [Int] = [], mapping: String) throws {
        self.name = name
        self.port = port
        self.clusterPort = clusterPort
        self.folder = folder
        try FileManager.default.createDirectory(atPath: folder + "/store", withIntermediateDirectories: true)
        var text = """
            server_name: \(name)
            listen: 127.0.0.1:\(port)
            max_payload: 1MB
            jetstream { store_dir: "\(folder)/store", max_memory_store: 256MB, max_file_store: 4GB }
            mappings = { \(mapping) }

            """
        if let clusterPort {
            text += """
                cluster {
                  name: fence-test
                  listen: 127.0.0.1:\(clusterPort)
                  routes: [\(routes.map { "nats-route://127.0.0.1:\($0)" }.joined(separator: ", "))]
                }

                """
        }
        config = folder + "/server.conf"
        try Data(text.utf8).write(to: URL(fileURLWithPath: config))
    }

    func start() throws {
        guard let binary = Self.binary else { throw XCTSkip("nats-server is not installed") }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: binary)
        p.arguments = ["-c", config]
        let log = FileHandle(forWritingAtPath: folder + "/server.log") ?? {
            _ = FileManager.default.createFile(atPath: folder + "/server.log", contents: nil)
            return FileHandle(forWritingAtPath: folder + "/server.log")!
        }()
        log.seekToEndOfFile()
        p.standardOutput = log
        p.standardError = log
        try p.run()
        process = p
        try waitForPort(port, timeout: 60)
    }

    /// Sends `signal` and waits for the process to end.
    func stop(signal: Int32 = SIGTERM) {
        guard let p = process, p.isRunning else { return }
        kill(p.processIdentifier, signal)
        let deadline = Date().addingTimeInterval(10)
        while p.isRunning && Date() < deadline { usleep(20_000) }
        if p.isRunning {
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
        }
    }

    /// A free TCP port on the loopback interface (bound once, then released).
    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    private func waitForPort(_ port: Int, timeout: Double) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var addr = sockaddr_in()
            addr.sin_family = sa_family_t(AF_INET)
            addr.sin_addr.s_addr = inet_addr("127.0.0.1")
            addr.sin_port = UInt16(port).bigEndian
            let ok = withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            close(fd)
            if ok == 0 { return }
            guard process?.isRunning == true else { break }
            usleep(50_000)
        }
        let log = (try? String(contentsOfFile: folder + "/server.log", encoding: .utf8)) ?? ""
        throw NSError(domain: "NATSServer", code: 1, userInfo: [NSLocalizedDescriptionKey: "\(name) did not listen on \(port): \(log.suffix(2000))"])
    }
}

/// The `fence` binary: `FENCE_BIN` when set (CI points it at the release build), else the one
/// built next to the test bundle.
enum FenceCLI {
    static var binary: String {
        if let b = ProcessInfo.processInfo.environment["FENCE_BIN"], FileManager.default.isExecutableFile(atPath: b) { return b }
        let bundle = Bundle(for: NATSClusterTests.self).bundleURL
        let candidates = [bundle.appendingPathComponent("fence"), bundle.deletingLastPathComponent().appendingPathComponent("fence")]
        return (candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]).path
    }

    /// Starts `fence` with its output in `log` (appended).
    /// `executable`: another program to start (e.g. `unshare` running `fence`).
    static func start(_ args: [String], log: String, environment: [String: String] = [:], executable: String? = nil) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable ?? binary)
        p.arguments = args
        if !environment.isEmpty { p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        if !FileManager.default.fileExists(atPath: log) { _ = FileManager.default.createFile(atPath: log, contents: nil) }
        let h = FileHandle(forWritingAtPath: log)!
        h.seekToEndOfFile()
        p.standardOutput = h
        p.standardError = h
        try p.run()
        return p
    }

    /// Runs `fence` to the end; standard output to `output` when given.
    @discardableResult
    static func run(_ args: [String], output: String? = nil, log: String) throws -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: binary)
        p.arguments = args
        if !FileManager.default.fileExists(atPath: log) { _ = FileManager.default.createFile(atPath: log, contents: nil) }
        let h = FileHandle(forWritingAtPath: log)!
        h.seekToEndOfFile()
        if let output {
            _ = FileManager.default.createFile(atPath: output, contents: nil)
            p.standardOutput = FileHandle(forWritingAtPath: output)!
        } else {
            p.standardOutput = h
        }
        p.standardError = h
        try p.run()
        p.waitUntilExit()
        return p.terminationStatus
    }
}
