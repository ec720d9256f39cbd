import Foundation

/// Which worker process runs a partition: a lease in the state bucket, key `p<N>.lease`, one
/// line of text, `held <owner>` or `free <owner>`, written only by a conditioned write (on the
/// revision the writer last read), so two workers can never both believe they took it.
///
/// The holder renews it (writes it again) every `renewal` seconds from its fetch loop. A worker
/// that finds it held by another owner watches it: renewed within `timeout` seconds means the
/// holder is alive, and the newcomer is refused (`CheckpointError.partitionLeased`); not
/// renewed for that long means the holder is gone (killed, or cut off from the servers), and
/// the newcomer takes it over, conditioned on the revision it watched. A holder on this host
/// whose process no longer exists (a restart right after `kill -9`: owner names carry the host,
/// the process id and its namespace, `isGoneFromThisHost`) is taken over at once, without the wait. A holder whose renewal finds
/// another owner's write stops (`CheckpointError.leaseLost`): it was cut off longer than the
/// timeout and its partition has moved on. A clean stop writes `free`, so the next worker
/// takes the lease at once.
///
/// This closes what the start-time look at the consumer (`PartitionWorker.consumerIsLive`)
/// leaves open: two workers started within the same second on a partition nobody runs (both
/// saw no consumer; one now loses the conditioned write), and a running worker over a second
/// without a fetch waiting (it still renews within `timeout`). The checkpoint's own
/// conditioned write stays the last word on what a partition has applied.
///
/// Judged by renewals seen, not by clocks: nothing compares one machine's time with
/// another's. The price: after a worker is killed on another host, its partitions wait up to
/// `timeout` seconds before a new worker takes them.
struct PartitionLease {
    /// What the key says.
    struct Record: Equatable {
        var held: Bool
        var owner: String

        func encoded() -> [UInt8] { Array("\(held ? "held" : "free") \(owner)".utf8) }

        /// Nil for anything but `held <owner>` or `free <owner>` with a non-empty owner.
        init?(decoding bytes: [UInt8]) {
            let text = String(decoding: bytes, as: UTF8.self)
            guard let space = text.firstIndex(of: " ") else { return nil }
            let state = text[..<space]
            let owner = String(text[text.index(after: space)...])
            guard state == "held" || state == "free", !owner.isEmpty else { return nil }
            self.init(held: state == "held", owner: owner)
        }

        init(held: Bool, owner: String) {
            self.held = held
            self.owner = owner
        }

        /// The owner while the lease is held; nil when it is free.
        var holder: String? { held ? owner : nil }
    }

    let key: String
    let owner: String
    /// The revision of this process's latest write of the key.
    private(set) var revision: UInt64
    /// When this process last wrote it, in `clock()` seconds.
    private(set) var renewed: Double
    /// The latest renewal tried (`renewIfDue`).
    private var attempted = -Double.infinity

    /// Seconds between renewals, and seconds without one after which a holder is taken for gone.
    static let renewal = 2.0
    static let timeout = 7.0

    /// Takes the lease of `key` for `owner`: at once when it is free, missing, unreadable or
    /// held by a process of this host that no longer runs; after watching it for `timeout`
    /// seconds without a renewal when another process holds it.
    /// - Parameters:
    ///   - waiting: called once, with the holder, before a wait.
    ///   - stop: ends a wait early (the lease not taken: nil).
    ///   - silentSince: the key's revision as read earlier, and when: a holder whose lease
    ///     still has that revision has not renewed it since then, and the wait counts from
    ///     there (a worker's partitions read their leases at its start, then take them one
    ///     after another: without it each waited out the timeout in turn, the last of N
    ///     partitions N timeouts).
    /// - Throws: `CheckpointError.partitionLeased` when the holder renews it meanwhile, or
    ///   another newcomer takes it first; `NATSError` when the bucket cannot be reached.
    /// - Complexity: a read and a conditioned write; while waiting, a read every quarter second.
    static func acquire(
        _ kv: NATSKeyValue, key: String, partition: Int, owner: String, timeout: Double = PartitionLease.timeout,
        stop: () -> Bool = { false }, waiting: (String) -> Void = { _ in }, silentSince: (revision: UInt64, at: Double)? = nil
    ) throws -> PartitionLease? {
        var saidWaiting = false
        while true {
            let seen = try kv.get(key)
            let record = seen.flatMap { Record(decoding: $0.value) }
            if let seen, let record, record.held, record.owner != owner, !isGoneFromThisHost(record.owner) {
                // Held by a process that may be alive: watch for a renewal.
                if !saidWaiting {
                    waiting(record.owner)
                    saidWaiting = true
                }
                let start = silentSince.flatMap { $0.revision == seen.revision ? $0.at : nil } ?? clock()
                var renewedBy: String?
                while clock() - start < timeout {
                    if stop() { return nil }
                    Thread.sleep(forTimeInterval: 0.25)
                    let now = try kv.get(key)
                    if now?.revision != seen.revision {
                        renewedBy = now.flatMap { Record(decoding: $0.value) }?.holder ?? ""
                        break
                    }
                }
                if let renewedBy {
                    // Written meanwhile: renewed by its holder, taken by another newcomer,
                    // or released (then look again).
                    if renewedBy.isEmpty { continue }
                    throw CheckpointError.partitionLeased(partition: partition, holder: renewedBy)
                }
            }
            // Free, missing, unreadable, or its holder is gone: take it on the revision seen.
            // Another worker writing it first refuses this write: then look again (and be
            // refused while it holds it).
            do {
                let revision = try kv.update(key, Record(held: true, owner: owner).encoded(), last: seen?.revision ?? 0)
                return PartitionLease(key: key, owner: owner, revision: revision, renewed: clock())
            } catch {
                if !error.isWrongLastSequence { throw error }
            }
        }
    }

    /// Renews the lease when `renewal` seconds have passed since the last write. A write that
    /// fails for another reason than another owner's write (a timeout while the bucket's
    /// leader is elected) is tried again half a second later, and does not end the session:
    /// the fetch loop judges the connection.
    /// - Throws: `CheckpointError.leaseLost` when another owner has written it since.
    /// - Complexity: nothing, or a conditioned write (and a read when it is refused).
    mutating func renewIfDue(_ kv: NATSKeyValue, partition: Int, every renewal: Double = PartitionLease.renewal) throws {
        let now = Self.clock()
        guard now - renewed >= renewal, now - attempted >= 0.5 else { return }
        attempted = now
        do {
            try renew(kv, partition: partition)
        } catch let e as NATSError where !e.isWrongLastSequence {
            // Tried again at the next due call.
        }
    }

    /// Writes the lease again, conditioned on this process's last write. A write refused
    /// because this process's own last write did land (its reply was lost) is taken as done.
    mutating func renew(_ kv: NATSKeyValue, partition: Int) throws {
        let mine = Record(held: true, owner: owner).encoded()
        var tries = 0
        while true {
            tries += 1
            let written: UInt64?
            do {
                written = try kv.update(key, mine, last: revision)
            } catch {
                guard error.isWrongLastSequence, tries < 5 else { throw error }
                written = nil
            }
            if let written {
                revision = written
                renewed = Self.clock()
                return
            }
            let now = try kv.get(key)
            let record = now.flatMap { Record(decoding: $0.value) }
            guard let now, let record, record.holder == owner else {
                throw CheckpointError.leaseLost(partition: partition, key: key, holder: record?.holder)
            }
            revision = now.revision
        }
    }

    /// Marks the lease free, where this process's write is still the latest. Best effort, and
    /// skipped while the connection is down: a lease left `held` is taken over after `timeout`.
    func release(_ kv: NATSKeyValue) {
        guard kv.connection.isConnected else { return }
        _ = try? kv.update(key, Record(held: false, owner: owner).encoded(), last: revision)
    }

    /// Seconds on a clock that only moves forward (`CLOCK_MONOTONIC`): renewals and watches
    /// are timed by it, so a step of the system's wall clock (an NTP correction) neither
    /// stops a holder's renewals nor cuts a newcomer's watch short (a review).
    static func clock() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// Whether `owner` (`Worker.newOwner()`'s `host:pid:random.space`) names a process of this
    /// host's process id namespace that has ended: this process under another name (a
    /// restarted worker can get the same process id), or a process id that no longer exists.
    ///
    /// A process id means something only in its own namespace: a worker in another container
    /// (host networking gives it this host's name; a container's worker is often process 1)
    /// is no process here, or another one. So the owner must carry this process's `space`
    /// (the boot and the pid namespace), else it is never judged gone here: an owner of
    /// another namespace, another machine of the same host name, or an older worker's name
    /// waits out the timeout, as one of another host does.
    static func isGoneFromThisHost(_ owner: String) -> Bool {
        guard let space = processSpace else { return false }
        let parts = owner.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count >= 3, let pid = Int32(parts[parts.count - 2]), pid > 0 else { return false }
        let suffix = parts[parts.count - 1]
        guard let dot = suffix.lastIndex(of: "."), suffix[suffix.index(after: dot)...] == space else { return false }
        let host = parts[0..<(parts.count - 2)].joined(separator: ":")
        guard host == ProcessInfo.processInfo.hostName else { return false }
        if pid == getpid() { return true }
        return kill(pid, 0) != 0 && errno == ESRCH
    }

    /// This process's boot and process id namespace, `<boot id>-<pid namespace inode>`
    /// (Linux: `/proc/sys/kernel/random/boot_id`, `/proc/self/ns/pid`): within it a process
    /// id names one process. Nil where they cannot be read; then no holder is judged gone.
    static let processSpace: String? = {
        guard let boot = try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8),
            let ns = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/ns/pid")
        else { return nil }
        let b = boot.filter(\.isHexDigit).prefix(12)
        let inode = ns.filter(\.isNumber)
        guard !b.isEmpty, !inode.isEmpty else { return nil }
        return "\(b)-\(inode)"
    }()
}
