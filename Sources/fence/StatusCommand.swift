import FenceIO
import FenceNATS
import Foundation

/// `fence status`: where every partition stands.
enum StatusCommand {
    static let help = """
        Usage: fence status --nats URL[,URL...] [--wait-drained] [--timeout S] [--name NAME]

        Prints one line per partition: the checkpoint's last applied fix message, where a
        restart reads again from, the last fence change applied, the consumer's backlog
        (undelivered, unacknowledged), the checkpoint's writer and age, and the partition's
        event time (its latest fix) and late fixes. A fix from the future moves a partition's
        event time on and makes the others' fixes late: the line then says the event time is
        ahead of this machine's clock.

        --wait-drained   wait until every partition has applied, checkpointed and acknowledged
                         everything stored, through the last fence change (e.g. the flush at
                         the end of a `fence publish`), in the latest worker's session: a
                         worker just started (its partitions' session "starting") has not
                         drained until its sessions have their consumers and have caught up;
                         exit 1 after --timeout (default 600 s).
                         Every 250 ms it reads the checkpoints, and the consumers only once
                         every checkpoint is through that change (consumer info is costly for
                         nats-server 2.9: README, limits of the worker)
        """

    static func run(_ args: ArraySlice<String>) throws -> Int32 {
        let a = try Arguments(args, valued: ["nats", "timeout", "name"], flagNames: ["wait-drained"])
        if a.flags.contains("help") {
            printLine(help)
            return 0
        }
        // A bad --timeout is a usage error (status 2) whether or not a server answers, as a
        // bad --name is (`connectDeployment`).
        let timeout = try a.double("timeout", default: 600)!
        guard timeout >= 0, timeout <= Arguments.maxSeconds else {
            throw UsageError("--timeout takes seconds, from 0 to \(Int(Arguments.maxSeconds))")
        }
        let (connection, topology) = try a.connectDeployment(client: "fence-status")
        let waiting = a.flags.contains("wait-drained")
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let late = Date() > deadline
            let lastChange: UInt64
            var statuses: [Deployment.PartitionStatus]
            do {
                lastChange = try connection.lastMessage(stream: topology.fixStream, subject: topology.controlSubject)?.sequences?.stream ?? 0
                // While a checkpoint is short of the last change its partition is not drained
                // whatever its consumer says: only the checkpoints are read then, not the
                // consumers (`Deployment.status` says why they are polled sparingly).
                statuses = try Deployment.status(connection: connection, topology: topology, consumers: !waiting)
                if waiting && (late || statuses.allSatisfy { ($0.lastChangeSequence ?? 0) >= lastChange }) {
                    try Deployment.readConsumers(into: &statuses, connection: connection, topology: topology)
                }
            } catch {
                // A cluster electing a leader answers nothing for a moment: wait, unless asked once.
                guard waiting, !late else { throw error }
                Thread.sleep(forTimeInterval: 0.5)
                continue
            }
            let drained = statuses.allSatisfy { $0.isDrained(throughChange: lastChange) }
            if !waiting || drained {
                for s in statuses { printLine(line(s)) }
                return 0
            }
            if late {
                for s in statuses { printLine(line(s)) }
                // Which partitions, and why when it shows: none has ever been run, or its last
                // worker stopped (a bare "not drained" left the user guessing: an audit).
                let stuck = statuses.filter { !$0.isDrained(throughChange: lastChange) }
                var why = ""
                if !stuck.isEmpty && stuck.allSatisfy({ $0.written == nil && $0.session == nil }) {
                    why = ": no worker has run \(stuck.count == 1 ? "it" : "them") yet (no checkpoint, no session): start `fence worker`"
                } else if stuck.contains(where: { $0.session?.phase == .stopped && ($0.pending ?? 0) > 0 }) {
                    why = ": a partition with fixes pending was last stopped (its session marker says so): start a worker for it"
                }
                let names = stuck.map { String($0.partition) }.joined(separator: ",")
                StandardError().write("fence status: not drained after \(timeout) s (partition\(stuck.count == 1 ? "" : "s") \(names))\(why)\n")
                return 1
            }
            Thread.sleep(forTimeInterval: 0.25)
        }
    }

    static func line(_ s: Deployment.PartitionStatus) -> String {
        func v(_ x: UInt64?) -> String { x.map { String($0) } ?? "-" }
        let age = s.written.map { String(format: "%.1f s ago", Date().timeIntervalSince1970 - $0) } ?? "never"
        return "partition \(s.partition): applied \(v(s.lastSequence)), replay from \(v(s.replayFrom)), "
            + "change \(v(s.lastChangeSequence)), pending \(v(s.pending)), unacknowledged \(v(s.ackPending)), "
            + "checkpoint \(age) by \(s.owner ?? "-")" + eventTime(s, now: Date().timeIntervalSince1970)
            + (s.session.map { ", session \($0.phase.rawValue) by \($0.owner)" + (s.sessionIsStale ? " (stale: a consumer was made since)" : "") } ?? "")
            + (s.leaseHolder.map { holder in
                ", lease held by \(holder)"
                    + (s.leaseRenewed.map { String(format: ", renewed %.1f s ago", Date().timeIntervalSince1970 - Double($0) / 1e9) } ?? "")
            } ?? "")
    }

    /// ", event time T, late N" when the partition's clock record has them, with a warning when
    /// T is more than an hour ahead of `now`.
    static func eventTime(_ s: Deployment.PartitionStatus, now: Double) -> String {
        guard let t = s.eventTime, let late = s.late else { return "" }
        let shown = t.isFinite ? ISO8601.format(t) : "-"
        let ahead = t.isFinite && t > now + 3600 ? String(format: " (%.0f s ahead of this machine's clock)", t - now) : ""
        return ", event time \(shown)\(ahead), late \(late)"
    }
}
