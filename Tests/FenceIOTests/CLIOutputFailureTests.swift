import Foundation
import XCTest

/// Where a run's inputs and outputs can fail around it: standard error closed or full, a
/// standard input that cannot be read, an output that names an input, a reader that goes
/// away. Each case found by an outside audit; before, several of them crashed (a Swift trap,
/// exit 132) or lost files.
final class CLIOutputFailureTests: XCTestCase {
    /// Runs `script` with bash, `$F` the `fence` binary; its status, output and error.
    func shell(_ script: String) throws -> (status: Int32, out: String, err: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/bash")
        p.arguments = ["-c", "F='\(CLI.binary.path)'; " + script]
        let out = Pipe()
        let err = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
    }

    func testClosedOrFullStandardErrorDoesNotCrash() throws {
        let fences = try CLI.temp(self, "fences.geojson", CLI.fences)
        let dir = (fences as NSString).deletingLastPathComponent
        try Data("device,time,lon,lat\nv,0,0,0\nv,60,nan,0\n".utf8).write(to: URL(fileURLWithPath: dir + "/pos.csv"))
        // A bad line is reported on standard error; the run goes on and succeeds.
        for redirect in ["2>&-", "2>/dev/full"] {
            let r = try shell("\"$F\" eval --fences '\(fences)' --positions '\(dir)/pos.csv' --max-bad 1 \(redirect); echo \"rc=$?\"")
            XCTAssertTrue(r.out.contains("\"event\":\"enter\""), redirect + ": " + r.out)
            XCTAssertTrue(r.out.hasSuffix("rc=0\n"), redirect + ": " + r.out)
        }
        let usage = try shell("\"$F\" eval --bogus 2>/dev/full; echo \"rc=$?\"")
        XCTAssertEqual(usage.out, "rc=2\n")
    }

    func testFencesFromAnUnreadableStandardInputAreRefused() throws {
        let closed = try shell("\"$F\" check --fences - <&-; echo \"rc=$?\"")
        XCTAssertEqual(closed.out, "rc=1\n")
        XCTAssertTrue(closed.err.contains("standard input") && closed.err.contains("Bad file descriptor"), closed.err)
        let directory = try shell("\"$F\" check --fences - < /; echo \"rc=$?\"")
        XCTAssertEqual(directory.out, "rc=1\n")
        XCTAssertTrue(directory.err.contains("Is a directory"), directory.err)
        // An endless binary stream is refused at its first chunk, not read until memory runs out.
        let zeros = try shell("timeout 20 \"$F\" check --fences - < /dev/zero; echo \"rc=$?\"")
        XCTAssertEqual(zeros.out, "rc=1\n")
        XCTAssertTrue(zeros.err.contains("NUL byte"), zeros.err)
        let ok = try CLI.run(["check", "--fences", "-"], stdin: CLI.fences)
        XCTAssertEqual(ok.status, 0, ok.err)
        XCTAssertTrue(ok.err.contains("2 good fences"), ok.err)
    }

    func testOutputNamingAnInputIsRefusedAndTouchesNothing() throws {
        let fences = try CLI.temp(self, "fences.geojson", CLI.fences)
        let dir = (fences as NSString).deletingLastPathComponent
        let positions = dir + "/pos.csv"
        let text = "device,time,lon,lat\nv,0,0,0\n"
        try Data(text.utf8).write(to: URL(fileURLWithPath: positions))
        for (option, output) in [("positions", positions), ("positions", dir + "/./pos.csv"), ("fences", fences)] {
            let r = try CLI.run(["eval", "--fences", fences, "--positions", positions, "--output", output])
            XCTAssertEqual(r.status, 2, r.err)
            XCTAssertTrue(r.err.contains("--output and --\(option) name the same file"), r.err)
        }
        XCTAssertEqual(try String(contentsOfFile: positions, encoding: .utf8), text)
        XCTAssertEqual(try String(contentsOfFile: fences, encoding: .utf8), CLI.fences)
        let state = dir + "/run.state"
        let same = try CLI.run(["eval", "--fences", fences, "--positions", positions, "--output", state, "--state", state])
        XCTAssertEqual(same.status, 2, same.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: state))
    }

    /// A run refused at its input's header leaves the previous output file as it was; one
    /// that ran writes it.
    func testRefusedInputLeavesThePreviousOutput() throws {
        let fences = try CLI.temp(self, "fences.geojson", CLI.fences)
        let dir = (fences as NSString).deletingLastPathComponent
        try Data("device,time,lon\nv,0,0\n".utf8).write(to: URL(fileURLWithPath: dir + "/bad.csv"))
        try Data("device,time,lon,lat\nv,0,0,0\n".utf8).write(to: URL(fileURLWithPath: dir + "/good.csv"))
        let output = dir + "/events.ndjson"
        try Data("yesterday\n".utf8).write(to: URL(fileURLWithPath: output))
        let bad = try CLI.run(["eval", "--fences", fences, "--positions", dir + "/bad.csv", "--output", output])
        XCTAssertEqual(bad.status, 1)
        XCTAssertTrue(bad.err.contains("bad.csv: line 1:") && bad.err.contains("lacks lat"), bad.err)
        XCTAssertEqual(try String(contentsOfFile: output, encoding: .utf8), "yesterday\n")
        let good = try CLI.run(["eval", "--fences", fences, "--positions", dir + "/good.csv", "--output", output])
        XCTAssertEqual(good.status, 0, good.err)
        XCTAssertTrue(try String(contentsOfFile: output, encoding: .utf8).contains("\"fence\":\"port\""))
    }

    func testFailedWritesAreNamed() throws {
        let fences = try CLI.temp(self, "fences.geojson", CLI.fences)
        let dir = (fences as NSString).deletingLastPathComponent
        try Data("device,time,lon,lat\nv,0,0,0\n".utf8).write(to: URL(fileURLWithPath: dir + "/pos.csv"))
        let file = try CLI.run(["eval", "--fences", fences, "--positions", dir + "/pos.csv", "--output", "/dev/full"])
        XCTAssertEqual(file.status, 1)
        XCTAssertTrue(file.err.contains("cannot write /dev/full: No space left on device"), file.err)
        let standard = try shell("\"$F\" contains --fences '\(fences)' --positions '\(dir)/pos.csv' > /dev/full")
        XCTAssertEqual(standard.status, 1)
        XCTAssertTrue(standard.err.contains("cannot write standard output"), standard.err)
        let help = try shell("\"$F\" eval --help > /dev/full")
        XCTAssertEqual(help.status, 1, help.err)
        // A state file in a folder that is not there is refused before the run, not after it.
        let state = try CLI.run(["eval", "--fences", fences, "--positions", dir + "/pos.csv", "--state", dir + "/no/such.state"])
        XCTAssertEqual(state.status, 1)
        XCTAssertEqual(state.out, "")
        XCTAssertTrue(state.err.contains("cannot write \(dir)/no/such.state"), state.err)
    }

    /// A reader that goes away (`| head`) ends the run quietly, unless the run has a state
    /// file to write: then it says the state was not written and exits 1.
    func testClosedPipeWithAStateFileIsAFailure() throws {
        let fences = try CLI.temp(self, "fences.geojson", CLI.fences)
        let dir = (fences as NSString).deletingLastPathComponent
        // Enough events to fill the pipe many times over.
        var lines = ["device,time,lon,lat"]
        for t in 0..<4000 {
            for d in 0..<10 { lines.append("v\(d),\(t * 10),\(t % 2 == 0 ? 0 : 0.5),0") }
        }
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: dir + "/pos.csv"))
        let state = dir + "/run.state"
        let args = "eval --fences '\(fences)' --positions '\(dir)/pos.csv' --batch 1000"
        let withState = try shell("\"$F\" \(args) --state '\(state)' | head -c 100 > /dev/null; echo \"rc=${PIPESTATUS[0]}\"")
        XCTAssertEqual(withState.out, "rc=1\n", withState.err)
        XCTAssertTrue(withState.err.contains("the state file \(state) was not written"), withState.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: state))
        let without = try shell("\"$F\" \(args) | head -c 100 > /dev/null; echo \"rc=${PIPESTATUS[0]}\"")
        XCTAssertEqual(without.out, "rc=0\n", without.err)
    }

    func testStrayRepeatedAndHexadecimalArgumentsAreUsageErrors() throws {
        let fences = try CLI.temp(self, "fences.geojson", CLI.fences)
        let stray = try CLI.run(["eval", "--fences", fences, "positions.csv"])
        XCTAssertEqual(stray.status, 2)
        XCTAssertTrue(stray.err.contains("unexpected argument positions.csv"), stray.err)
        let both = try CLI.run(["contains", "--fences", "-", "--positions", "-"], stdin: CLI.fences)
        XCTAssertEqual(both.status, 2)
        XCTAssertTrue(both.err.contains("cannot both come from standard input"), both.err)
        let state = try CLI.run(["eval", "--fences", fences, "--state", "-"], stdin: "device,time,lon,lat\n")
        XCTAssertEqual(state.status, 2)
        // A single-valued option given twice, and a number in hexadecimal (Double("0x10") is 16).
        let twice = try CLI.run(["check", "--fences", fences, "--fences", fences])
        XCTAssertEqual(twice.status, 2)
        XCTAssertTrue(twice.err.contains("--fences is given twice"), twice.err)
        let hex = try CLI.run(["eval", "--fences", fences, "--dwell", "0x10"], stdin: "device,time,lon,lat\n")
        XCTAssertEqual(hex.status, 2)
        XCTAssertTrue(hex.err.contains("--dwell must be a finite decimal number, got 0x10"), hex.err)
        let infinite = try CLI.run(["eval", "--fences", "x", "--dwell", "inf"])
        XCTAssertTrue(infinite.err.contains("--dwell must be a finite decimal number, got inf"), infinite.err)
        // A fence file that does not exist: the C library's words.
        let missing = try CLI.run(["eval", "--fences", "/nonexistent/f.geojson", "--positions", "-"], stdin: "device,time,lon,lat\n")
        XCTAssertEqual(missing.status, 1, missing.err)
        XCTAssertTrue(missing.err.contains("cannot read /nonexistent/f.geojson: No such file or directory"), missing.err)
    }

    /// `--name=value` splits at the first `=` byte: a value starting with a combining mark
    /// (which Swift's Characters join to the `=`) is the value, not part of an unknown option's
    /// name; the value is kept whole, its exact bytes (`--fences=`, `--remove-id=`). A name
    /// given twice to `fence change` (in one form or across both) is refused before anything
    /// is published.
    func testAnEqualsValueStartingWithACombiningMarkIsTheValue() throws {
        let missing = try CLI.run(["check", "--fences=\u{301}no-such.geojson"])
        XCTAssertEqual(missing.status, 1, missing.err)
        XCTAssertTrue(missing.err.contains("\u{301}no-such.geojson"), missing.err)
        XCTAssertFalse(missing.err.contains("unknown option"), missing.err)
        let change = try CLI.run(["change", "--nats", "nats://127.0.0.1:1", "--remove-id=\u{301}x"])
        XCTAssertEqual(change.status, 1, change.err)
        XCTAssertFalse(change.err.contains("unknown option"), change.err)
        for names in [["--remove", "a,b,a"], ["--remove", " a", "--remove-id", "a"], ["--remove-group-name", "g", "--remove-group-name", "g"]] {
            let twice = try CLI.run(["change", "--nats", "nats://127.0.0.1:1"] + names)
            XCTAssertEqual(twice.status, 2, "\(names): \(twice.err)")
            XCTAssertTrue(twice.err.contains("named twice"), twice.err)
        }
    }

    /// A usage error says what was wrong and where a command's options are, without the whole
    /// help after it; an unknown command lists the commands. An empty `--actions` would report
    /// nothing and is refused.
    func testUsageErrorsPointAtTheCommandsHelp() throws {
        let fences = try CLI.temp(self, "fences.geojson", CLI.fences)
        let bad = try CLI.run(["eval", "--fences", fences, "--dwell", "soon"], stdin: "device,time,lon,lat\n")
        XCTAssertEqual(bad.status, 2)
        XCTAssertEqual(bad.err, "fence: --dwell must be a finite decimal number, got soon\nRun `fence eval --help` for its options.\n")
        let unknown = try CLI.run(["evaluate"])
        XCTAssertEqual(unknown.status, 2)
        XCTAssertTrue(unknown.err.hasPrefix("fence: unknown command evaluate\nUsage: fence COMMAND"), unknown.err)
        // No command at all is bad usage too (it was status 0, from a README audit); help is success.
        let none = try CLI.run([])
        XCTAssertEqual(none.status, 2)
        XCTAssertEqual(none.out, "")
        XCTAssertTrue(none.err.hasPrefix("fence: no command given\nUsage: fence COMMAND"), none.err)
        let help = try CLI.run(["--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.out.hasPrefix("Usage: fence COMMAND"), help.out)
        for list in ["", ",", " "] {
            let empty = try CLI.run(["eval", "--fences", fences, "--actions", list], stdin: "device,time,lon,lat\n")
            XCTAssertEqual(empty.status, 2, list)
            XCTAssertTrue(empty.err.contains("--actions takes one or more of enter,exit,dwell,cross"), empty.err)
        }
        let some = try CLI.run(["eval", "--fences", fences, "--actions", "exit"], stdin: "device,time,lon,lat\n")
        XCTAssertEqual(some.status, 0, some.err)
    }

    /// A `--state` whose folder the run cannot write is refused before the run, with the
    /// system's reason, and nothing is written. Root passes `access`, so as root the run drops
    /// to `nobody` with setpriv; skipped where that cannot run the binary.
    func testAStateFolderThatCannotBeWrittenIsRefusedFirst() throws {
        let fences = try CLI.temp(self, "fences.geojson", CLI.fences)
        let dir = (fences as NSString).deletingLastPathComponent
        let locked = dir + "/locked"
        try FileManager.default.createDirectory(atPath: locked, withIntermediateDirectories: false)
        chmod(dir, 0o755)
        chmod(fences, 0o644)
        chmod(locked, 0o555)
        addTeardownBlock { chmod(locked, 0o755) }
        var command = [CLI.binary.path]
        if getuid() == 0 {
            let setpriv = "/usr/bin/setpriv"
            guard FileManager.default.isExecutableFile(atPath: setpriv) else { throw XCTSkip("root, and no setpriv to drop to nobody") }
            command = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"] + command
            let probe = try shell(command.map { "'\($0)'" }.joined(separator: " ") + " --version")
            guard probe.out.hasPrefix("fence") else { throw XCTSkip("nobody cannot run \(CLI.binary.path): \(probe.err)") }
        }
        let state = locked + "/run.state"
        let r = try shell(
            command.map { "'\($0)'" }.joined(separator: " ") + " eval --fences '\(fences)' --positions - --state '\(state)' <<< 'device,time,lon,lat'; echo rc=$?")
        XCTAssertTrue(r.out.hasSuffix("rc=1\n"), r.out + r.err)
        XCTAssertTrue(r.err.contains("cannot write \(state): Permission denied"), r.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: state))
    }

    /// Another user's state lock file that this user cannot write (made 0644 by the first
    /// run) still locks, read-only: the run goes on and replaces the state in the shared
    /// folder (it was refused, "Permission denied"; review). As root the run drops to `nobody`
    /// with setpriv; skipped where that cannot run the binary.
    func testALockFileOfAnotherUserStillLocks() throws {
        guard getuid() == 0 else { throw XCTSkip("needs root to make a file another user cannot write") }
        let setpriv = "/usr/bin/setpriv"
        guard FileManager.default.isExecutableFile(atPath: setpriv) else { throw XCTSkip("no setpriv to drop to nobody") }
        let fences = try CLI.temp(self, "fences.geojson", CLI.fences)
        let dir = (fences as NSString).deletingLastPathComponent
        let shared = dir + "/shared"
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: false)
        chmod(dir, 0o755)
        chmod(fences, 0o644)
        chmod(shared, 0o777)
        let lockFile = shared + "/.run.state.lock"
        XCTAssertTrue(FileManager.default.createFile(atPath: lockFile, contents: Data("1\n".utf8), attributes: [.posixPermissions: 0o644]))
        let command = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", CLI.binary.path]
        let probe = try shell(command.map { "'\($0)'" }.joined(separator: " ") + " --version")
        guard probe.out.hasPrefix("fence") else { throw XCTSkip("nobody cannot run \(CLI.binary.path): \(probe.err)") }
        let state = shared + "/run.state"
        let r = try shell(
            command.map { "'\($0)'" }.joined(separator: " ")
                + " eval --fences '\(fences)' --positions - --state '\(state)' <<< $'device,time,lon,lat\\nv,0,0.001,0.001'; echo rc=$?")
        XCTAssertTrue(r.out.hasSuffix("rc=0\n"), r.out + r.err)
        XCTAssertTrue(r.out.contains(#""event":"enter""#), r.out)
        XCTAssertTrue(FileManager.default.fileExists(atPath: state), r.err)
    }

    /// Errors about a whole input name it.
    func testWholeInputErrorsNameTheInput() throws {
        let broken = try CLI.temp(self, "broken.geojson", "{\"type\":\"FeatureCollection\",\"features\":[}")
        let r = try CLI.run(["check", "--fences", broken])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.err.contains("fence: \(broken): malformed-input: not valid JSON"), r.err)
        let fences = try CLI.temp(self, "fences.geojson", CLI.fences)
        let empty = try CLI.run(["contains", "--fences", fences], stdin: "")
        XCTAssertEqual(empty.status, 1)
        XCTAssertTrue(empty.err.contains("fence: standard input: malformed-input: the input is empty"), empty.err)
        // A state file that is not a file says so (it was "error 256", or a permission problem).
        let dir = (fences as NSString).deletingLastPathComponent
        for (state, kind) in [(dir, "it is a directory"), ("/dev/null", "it is not a regular file")] {
            let r = try CLI.run(["eval", "--fences", fences, "--state", state], stdin: "device,time,lon,lat\n")
            XCTAssertEqual(r.status, 1)
            XCTAssertTrue(r.err.contains("cannot read state file \(state): \(kind)"), r.err)
        }
        // An output that is a directory is refused before any input is read, and the
        // directory is left as it was.
        let before = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        let out = try CLI.run(["eval", "--fences", fences, "--output", dir], stdin: "device,time,lon,lat\nv,0,0,0\n")
        XCTAssertEqual(out.status, 1, out.err)
        XCTAssertEqual(out.out, "")
        XCTAssertTrue(out.err.contains("cannot write \(dir): it is a directory"), out.err)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir).sorted(), before)
    }

    /// From a review of the fixes above: positions from standard input are the same file as
    /// `--output` too; a new output and a new state spelt two ways are one file; a short
    /// input name inside the reason ("data" in "binary data") still gets the input named.
    func testMoreSpellingsOfOneFile() throws {
        let fences = try CLI.temp(self, "fences.geojson", CLI.fences)
        let dir = (fences as NSString).deletingLastPathComponent
        let text = "device,time,lon,lat\nv,0,0,0\n"
        try Data(text.utf8).write(to: URL(fileURLWithPath: dir + "/p.csv"))
        let stdin = try shell("cd '\(dir)' && \"$F\" eval --fences fences.geojson --output p.csv < p.csv; echo \"rc=$?\"")
        XCTAssertEqual(stdin.out, "rc=2\n", stdin.err)
        XCTAssertTrue(stdin.err.contains("--output and --positions name the same file"), stdin.err)
        XCTAssertEqual(try String(contentsOfFile: dir + "/p.csv", encoding: .utf8), text)
        let new = try shell("cd '\(dir)' && \"$F\" eval --fences fences.geojson --positions p.csv --state x.state --output ./x.state; echo \"rc=$?\"")
        XCTAssertEqual(new.out, "rc=2\n", new.err)
        try Data([0x64, 0, 0x0A]).write(to: URL(fileURLWithPath: dir + "/data"))
        let data = try shell("cd '\(dir)' && \"$F\" contains --fences fences.geojson --positions data")
        XCTAssertTrue(data.err.contains("fence: data: line 1:"), data.err)
    }

    /// A FIFO as `--output` is opened at once, so its reader sees the end even when the run
    /// is refused at its input's header; a regular file would be left as it was.
    func testFIFOOutputIsOpenedAtOnce() throws {
        let fences = try CLI.temp(self, "fences.geojson", CLI.fences)
        let dir = (fences as NSString).deletingLastPathComponent
        try Data("device,time,lon\nv,0,0\n".utf8).write(to: URL(fileURLWithPath: dir + "/bad.csv"))
        let r = try shell(
            "cd '\(dir)' && mkfifo o && (timeout 20 cat o > got; echo \"cat=$?\" > cat.rc) & "
                + "cd '\(dir)' && \"$F\" eval --fences fences.geojson --positions bad.csv --output o; echo \"rc=$?\"; wait; cat '\(dir)/cat.rc'")
        XCTAssertEqual(r.out, "rc=1\ncat=0\n", r.err)
    }

    /// `check | head`: the closed pipe keeps the status the bad fences gave (it said 0).
    func testClosedPipeKeepsCheckStatus() throws {
        var features: [String] = []
        for i in 0..<5000 {
            features.append("{\"type\":\"Feature\",\"properties\":{\"id\":\"bad-\(i)\",\"radius\":-1},\"geometry\":{\"type\":\"Point\",\"coordinates\":[0,0]}}")
        }
        let fences = try CLI.temp(self, "bad.geojson", "{\"type\":\"FeatureCollection\",\"features\":[" + features.joined(separator: ",") + "]}")
        let r = try shell("\"$F\" check --fences '\(fences)' | head -1 > /dev/null; echo \"rc=${PIPESTATUS[0]}\"")
        XCTAssertEqual(r.out, "rc=1\n", r.err)
    }

    /// Restoring a state can write many events (exits for fences no longer loaded) before the
    /// first batch is read: they are held, and a refused header still leaves the old output.
    func testRestoreEventsDoNotOpenTheOutputEarly() throws {
        let fences = try CLI.temp(self, "fences.geojson", CLI.fences)
        let dir = (fences as NSString).deletingLastPathComponent
        var lines = ["device,time,lon,lat"]
        for d in 0..<12_000 { lines.append("device-number-\(d),0,0,0") }
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: dir + "/in.csv"))
        let state = dir + "/run.state"
        let first = try CLI.run(["eval", "--fences", fences, "--positions", dir + "/in.csv", "--state", state, "--output", dir + "/first.ndjson"])
        XCTAssertEqual(first.status, 0, first.err)
        let other = dir + "/other.geojson"
        try Data(CLI.fences.replacingOccurrences(of: "\"port\"", with: "\"quay\"").utf8).write(to: URL(fileURLWithPath: other))
        try Data("device,time,lon\nv,0,0\n".utf8).write(to: URL(fileURLWithPath: dir + "/bad.csv"))
        let output = dir + "/events.ndjson"
        try Data("yesterday\n".utf8).write(to: URL(fileURLWithPath: output))
        let r = try CLI.run(["eval", "--fences", other, "--positions", dir + "/bad.csv", "--state", state, "--output", output])
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(try String(contentsOfFile: output, encoding: .utf8), "yesterday\n")
    }

    /// Durations past what NATS takes (Int64 nanoseconds) trapped (exit 132); `change --add`
    /// of a file that cannot be read is bad input with the reason, not a usage error. Both
    /// are decided before any server is reached.
    func testNATSCommandsRefuseHugeDurationsAndUnreadableFiles() throws {
        let fences = try CLI.temp(self, "fences.geojson", CLI.fences)
        let nowhere = "nats://127.0.0.1:1"
        for args in [
            ["worker", "--nats", nowhere, "--partitions", "0", "--fences", fences, "--ack-wait", "1e10"],
            ["worker", "--nats", nowhere, "--partitions", "0", "--fences", fences, "--lateness", "1e308"],
            ["setup", "--nats", nowhere, "--partitions", "2", "--dedup-window", "1e10"],
            ["setup", "--nats", nowhere, "--partitions", "2", "--max-age", "1e308"],
        ] {
            let r = try CLI.run(args)
            XCTAssertEqual(r.status, 2, "\(args) \(r.err)")
            XCTAssertTrue(r.err.contains("at most 1000000000 seconds"), r.err)
        }
        let missing = try CLI.run(["change", "--nats", nowhere, "--add", fences + ".missing"])
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.err.contains("cannot read \(fences).missing:"), missing.err)
        // A folder is named as one, not as "NSCocoaErrorDomain error 256".
        let folder = (fences as NSString).deletingLastPathComponent
        let dir = try CLI.run(["change", "--nats", nowhere, "--add", folder])
        XCTAssertEqual(dir.status, 1)
        XCTAssertTrue(dir.err.contains("cannot read \(folder): it is a directory"), dir.err)
    }

    /// `fence worker --max-ack-pending N`: a whole number from 1 to 10,000,000, refused
    /// otherwise as a usage error naming the option, before any file is read or server
    /// reached; a good value passes (the run then fails to connect, status 1); the help lists
    /// it.
    func testWorkerMaxAckPendingIsValidated() throws {
        let nowhere = "nats://127.0.0.1:1"
        let broken = try CLI.temp(self, "broken.geojson", "{not geojson")
        for bad in ["0", "-1", "10000001", "1.5", "many", ""] {
            let r = try CLI.run(["worker", "--nats", nowhere, "--partitions", "0", "--fences", broken, "--max-ack-pending", bad])
            XCTAssertEqual(r.status, 2, "'\(bad)': \(r.err)")
            XCTAssertTrue(r.err.contains("--max-ack-pending must be a whole number in 1...10000000, got \(bad)"), "'\(bad)': \(r.err)")
        }
        for good in ["1", "10000000"] {
            let r = try CLI.run(["worker", "--nats", nowhere, "--partitions", "0", "--fences", broken, "--max-ack-pending", good])
            XCTAssertEqual(r.status, 1, "'\(good)': \(r.err)")
            XCTAssertTrue(r.err.contains("connect to \(nowhere)"), "'\(good)': \(r.err)")
        }
        let help = try CLI.run(["worker", "--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.out.contains("--max-ack-pending N "), help.out)
    }

    /// Usage is checked before any file is read or server reached: two changes at once, and
    /// a partition list with an empty item or a partition twice.
    /// A SIGTERM while the worker is still connecting (a server that is not there: the
    /// connection retries for about 10 s) ends it at once and cleanly, as one while it loads
    /// its fences does (a review found it held until the connection gave up, status 1).
    func testAStopWhileConnectingIsClean() throws {
        let fences = try CLI.temp(self, "f.geojson", CLI.fences)
        let p = Process()
        p.executableURL = CLI.binary(named: "fence")
        p.arguments = ["worker", "--nats", "nats://127.0.0.1:1", "--partitions", "0", "--fences", fences]
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        Thread.sleep(forTimeInterval: 0.5)
        let stopped = Date()
        p.terminate()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let text = String(decoding: e, as: UTF8.self)
        XCTAssertEqual(p.terminationReason, .exit, text)
        XCTAssertEqual(p.terminationStatus, 0, text)
        XCTAssertLessThan(Date().timeIntervalSince(stopped), 3, text)
        XCTAssertTrue(text.contains("fence worker: stopped while connecting to the server; nothing consumed"), text)
    }

    func testNATSUsageErrorsComeFirst() throws {
        let nowhere = "nats://127.0.0.1:1"
        let broken = try CLI.temp(self, "broken.geojson", "{not geojson")
        let both = try CLI.run(["change", "--nats", nowhere, "--add", broken, "--remove", "x"])
        XCTAssertEqual(both.status, 2, both.err)
        XCTAssertTrue(both.err.contains("give exactly one of"), both.err)
        for (list, reason) in [("0,,1", "none empty"), ("0,0", "names partition 0 twice"), ("1,", "none empty"), ("", "none empty")] {
            let r = try CLI.run(["worker", "--nats", nowhere, "--partitions", list, "--fences", broken])
            XCTAssertEqual(r.status, 2, "'\(list)': \(r.err)")
            XCTAssertTrue(r.err.contains(reason), "'\(list)': \(r.err)")
        }
        // The worker reaches the server before it reads its fences; the fence options are
        // still usage, checked first.
        for (extra, reason) in [([String](), "--fences is required"), (["--fences", broken, "--fence-reader", "gdal"], "--fence-reader must be")] {
            let r = try CLI.run(["worker", "--nats", nowhere, "--partitions", "0"] + extra)
            XCTAssertEqual(r.status, 2, "\(extra): \(r.err)")
            XCTAssertTrue(r.err.contains(reason), "\(extra): \(r.err)")
        }
    }
}
