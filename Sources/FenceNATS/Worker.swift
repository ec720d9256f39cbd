import FenceEngine
import Foundation

/// A fence worker: runs its partitions, each on its own connection and thread, until stopped.
///
/// The base fences are loaded into one engine once; every partition starts from a copy of it
/// (copy-on-write: the fence store is shared until a fence change edits a partition's copy).
public final class Worker: @unchecked Sendable {
    public let config: WorkerConfiguration
    public let stop: StopSignal
    /// This process's name in checkpoints: host, process id and a random suffix.
    public let owner: String
    let partitions: [PartitionWorker]
    /// What became of each base fence (rejected ones carry their error).
    public let baseResults: [FenceAddResult]

    /// - Parameter owner: the name to write checkpoints under (`newOwner()` when nil).
    /// - Throws: `FenceError` (invalid-setting) when `config.settings` has a `problem`.
    public init(
        config: WorkerConfiguration, stop: StopSignal = StopSignal(), threads: Int = FenceStore.defaultThreads, owner: String? = nil
    ) throws(FenceError) {
        self.config = config
        self.stop = stop
        let owner = owner ?? Self.newOwner()
        self.owner = owner
        var store = FenceStore()
        store.limits = config.fenceLimits
        var base = try EventEngine(store: store, settings: config.settings)
        baseResults = base.add(config.baseFences, repair: config.repair, threads: threads).results
        partitions = config.partitions.map {
            PartitionWorker(partition: $0, config: config, base: base, stop: stop, owner: owner)
        }
    }

    /// A name for a worker process: host, process id and a random suffix, followed by the
    /// process's boot and pid namespace where known (`PartitionLease.processSpace`: a lease
    /// holder's process id is judged only within its own namespace).
    public static func newOwner() -> String {
        "\(ProcessInfo.processInfo.hostName):\(getpid()):\(String(UInt32.random(in: 0...UInt32.max), radix: 36))"
            + (PartitionLease.processSpace.map { ".\($0)" } ?? "")
    }

    /// An error's text for a line that names its partition already: without the
    /// `partition N: ` some errors begin with (the summary said `partition 0: partition 0: ...`).
    public static func describe(_ error: Error, partition p: Int) -> String {
        let text = "\(error)"
        let named = "partition \(p): "
        return text.hasPrefix(named) ? String(text.dropFirst(named.count)) : text
    }

    /// Progress of every partition, in the order they were given.
    public var progress: [PartitionProgress] { partitions.map(\.progress) }

    /// Runs every partition until `stop` is requested and each has drained and checkpointed.
    /// A partition that cannot go on (another owner, other settings, a damaged checkpoint)
    /// requests the stop for all. The partitions take their leases (`PartitionLease`) one
    /// after another in partition order, so two workers started together on the same
    /// partitions do not split them.
    /// - Returns: the errors of partitions that could not go on (empty when all stopped well).
    public func run(progressEvery: Double = 0, report: (([PartitionProgress]) -> Void)? = nil) -> [Int: Error] {
        let group = DispatchGroup()
        let failures = FailureList()
        let ordered = partitions.sorted { $0.partition < $1.partition }
        for (before, after) in zip(ordered, ordered.dropFirst()) { after.turn = before.turnDone }
        for pw in partitions {
            let thread = Thread {
                do {
                    try pw.run()
                } catch {
                    // A partition that cannot go on stops the whole worker, so a supervisor
                    // sees the exit status instead of a worker quietly running fewer partitions.
                    failures.add(pw.partition, error)
                    pw.config.log("partition \(pw.partition): stopped: \(Self.describe(error, partition: pw.partition))")
                    pw.stop.request()
                }
                // After the stop request: a partition refused its lease stops the worker
                // before the next one takes its own.
                pw.passTurn()
                group.leave()
            }
            thread.name = "fence-p\(pw.partition)"
            thread.stackSize = 8 << 20
            group.enter()
            thread.start()
        }
        while group.wait(timeout: .now() + (progressEvery > 0 ? progressEvery : 3600)) == .timedOut {
            report?(progress)
        }
        return failures.all
    }
}

private final class FailureList: @unchecked Sendable {
    private let lock = NSLock()
    private var errors: [Int: Error] = [:]
    func add(_ p: Int, _ e: Error) { lock.withLock { errors[p] = e } }
    var all: [Int: Error] { lock.withLock { errors } }
}
