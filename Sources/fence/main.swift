import FenceEngine
import FenceIO
import Foundation

let topHelp = """
    Usage: fence COMMAND [options]

    Commands:
      eval       fences + positions in, enter / exit / dwell / cross events out
      contains   for each position, the fences covering it
      check      validate fences and list each one with a problem
      nearest    per position, the nearest fence boundary and a suggested report delay
      inside     who is inside each fence, from a state file of `eval --state` or a cluster's checkpoints

    Distributed, on NATS JetStream:
      setup      create the streams and the checkpoint bucket; print the server mapping
      publish    load positions into the fix stream, as producers would
      worker     run partitions of the fix stream through the event engine
      change     publish a fence change every worker applies at one stream position
      status     where each partition stands (or wait until all are drained)
      events     read the events stream back as NDJSON

    Run `fence COMMAND --help` for a command's options.
    Exit status: 0 success, 1 bad input, 2 bad usage.
    """

signal(SIGPIPE, SIG_IGN)
// Batch after batch reuses freed memory instead of faulting fresh pages in (see AllocatorTuning).
AllocatorTuning.keepFreedMemory()
let arguments = CommandLine.arguments
guard arguments.count > 1 else {
    // No command is bad usage (status 2), with the command list, on standard error.
    StandardError().write("fence: no command given\n\(topHelp)\n")
    exit(2)
}
let command = arguments[1]
let rest = arguments.dropFirst(2)
/// Every command, by name: the dispatch below and the usage-error pointer read this one table.
let commands: [String: (ArraySlice<String>) throws -> Int32] = [
    "contains": ContainsCommand.run, "eval": EvalCommand.run, "check": CheckCommand.run, "nearest": NearestCommand.run,
    "inside": InsideCommand.run,
    "setup": SetupCommand.run, "publish": PublishCommand.run, "worker": WorkerCommand.run, "change": ChangeCommand.run,
    "status": StatusCommand.run, "events": EventsCommand.run,
]
let status: Int32
do {
    switch command {
    case let name where commands[name] != nil:
        status = try commands[name]!(rest)
    case "--help", "-h", "help":
        printLine(topHelp)
        status = 0
    case "--version":
        printLine("fence (GEOS \(FenceEngineInfo.geosVersion), GDAL \(FenceInput.gdalVersion))")
        status = 0
    default:
        throw UsageError("unknown command \(command)")
    }
} catch let e as UsageError {
    // The message and where the options are: a command's whole help after every mistake
    // buried the one line that said what was wrong. An unknown command gets the command list.
    let pointer = commands[command] != nil ? "Run `fence \(command) --help` for its options." : topHelp
    StandardError().write("fence: \(e.message)\n\(pointer)\n")
    status = 2
} catch let e as FenceError {
    StandardError().write("fence: \(e)\n")
    status = 1
} catch {
    StandardError().write("fence: \(error)\n")
    status = 1
}
// For tests that bound memory: the process's own high-water mark. A parent's wait4 rusage
// would count the parent too (Linux carries its resident size into the child's maximum).
if ProcessInfo.processInfo.environment["FENCE_REPORT_PEAK"] != nil, let kiB = PeakMemory.kibibytes {
    StandardError().write("fence: peak resident \(kiB) KiB\n")
}
exit(status)
