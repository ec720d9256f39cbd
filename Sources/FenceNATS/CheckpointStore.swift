import FenceEngine
import Foundation

/// Partition checkpoints in a JetStream key-value bucket, written so that a reader only ever
/// sees a whole checkpoint.
///
/// A checkpoint can be larger than one NATS message (1 MiB by default), so its bytes go in
/// chunks of 512 KiB under `p<N>.<writer>.<slot>.<i>`, and a small head under `p<N>` names the
/// writer, the slot, the chunk count, the length and the CRC-32. A writer alternates between
/// its slots 0 and 1 and puts the head last: until the head is replaced it points at the
/// previous, untouched slot, so a crash at any point leaves the old checkpoint or the new one,
/// never a torn one.
///
/// The head is written with `kvStore_Update` against the revision this worker last read or
/// wrote: if another worker has taken the partition in between, the write fails
/// (`CheckpointError.ownershipLost`) instead of both workers overwriting each other. Chunks
/// are keyed by writer, so a writer that lost the partition never overwrites the chunks of the
/// checkpoint in force; a new writer deletes its predecessor's chunks once its head is in.
struct CheckpointStore {
    let kv: NATSKeyValue
    static let chunkSize = 512 * 1024

    /// The head record: where the checkpoint is and what it covers (readable without chunks).
    struct Head: Sendable {
        var slot: UInt8
        var chunks: UInt32
        var length: UInt64
        var crc: UInt32
        var lastSequence: UInt64
        var replayFrom: UInt64
        var lastChangeSequence: UInt64
        var owner: String
        /// Wall time of the write, epoch seconds.
        var written: Double

        static let magic = Array("FENCEHEAD".utf8)
        /// Most chunks a head may name: 32 GiB of checkpoint.
        static let maxChunks: UInt32 = 65_536

        func encoded() -> [UInt8] {
            var w = ByteWriter(magic: Self.magic, version: 1)
            w.u8(slot)
            w.u32(chunks)
            w.u64(length)
            w.u32(crc)
            w.u64(lastSequence)
            w.u64(replayFrom)
            w.u64(lastChangeSequence)
            w.string(owner)
            w.f64(written)
            return w.bytes
        }

        init(
            slot: UInt8, chunks: UInt32, length: UInt64, crc: UInt32, lastSequence: UInt64, replayFrom: UInt64,
            lastChangeSequence: UInt64, owner: String, written: Double
        ) {
            (self.slot, self.chunks, self.length, self.crc) = (slot, chunks, length, crc)
            (self.lastSequence, self.replayFrom, self.lastChangeSequence) = (lastSequence, replayFrom, lastChangeSequence)
            (self.owner, self.written) = (owner, written)
        }

        init(decoding bytes: [UInt8]) throws(FenceError) {
            let head: Head? = bytes.withUnsafeBytes { raw in
                var r = ByteReader(raw)
                guard r.opens(magic: Self.magic, version: 1), let slot = r.u8(),
                    let chunks = r.u32(), let length = r.u64(), let crc = r.u32(), let s = r.u64(), let from = r.u64(),
                    let change = r.u64(), let owner = r.string(), let written = r.f64(), r.remaining == 0
                else { return nil }
                return Head(
                    slot: slot, chunks: chunks, length: length, crc: crc, lastSequence: s, replayFrom: from,
                    lastChangeSequence: change, owner: owner, written: written)
            }
            guard let head else { throw FenceError(.malformedInput, reason: "checkpoint head: not a head record or damaged") }
            // The chunks must be able to hold the length (a reader reserves it), and be few.
            guard head.chunks >= 1, head.chunks <= Self.maxChunks, head.length <= UInt64(head.chunks) * UInt64(CheckpointStore.chunkSize)
            else {
                throw FenceError(
                    .malformedInput, reason: "checkpoint head: \(head.chunks) chunks cannot hold \(head.length) bytes (at most \(Self.maxChunks) chunks)")
            }
            self = head
        }
    }

    /// The partition's event time (its latest fix time; -infinity before any) and its late
    /// fixes so far, as of its last checkpoint, for `fence status`: a fix from the far future
    /// moves the event time on and makes every other fix of the partition late. Kept under its
    /// own key (`<key>.clock`), written after the head and read by nothing else, so heads stay
    /// in the form every worker version reads; a crash between the two leaves it one
    /// checkpoint old.
    struct Clock: Sendable, Equatable {
        var eventTime: Double
        var late: UInt64

        static let magic = Array("FENCECLOCK".utf8)

        func encoded() -> [UInt8] {
            var w = ByteWriter(magic: Self.magic, version: 1)
            w.f64(eventTime)
            w.u64(late)
            return w.bytes
        }

        /// Nil for anything but a version 1 clock record (a NaN time included).
        init?(decoding bytes: [UInt8]) {
            let clock: Clock? = bytes.withUnsafeBytes { raw in
                var r = ByteReader(raw)
                guard r.opens(magic: Self.magic, version: 1), let t = r.f64(), !t.isNaN,
                    let late = r.u64(), r.remaining == 0
                else { return nil }
                return Clock(eventTime: t, late: late)
            }
            guard let clock else { return nil }
            self = clock
        }

        init(eventTime: Double, late: UInt64) {
            self.eventTime = eventTime
            self.late = late
        }
    }

    func clockKey(_ key: String) -> String { "\(key).clock" }

    /// The partition's clock as of its last checkpoint; nil when none was written (or by a
    /// worker before clocks) or it is unreadable: it is only shown.
    func clock(key: String) throws -> Clock? {
        guard let (bytes, _) = try kv.get(clockKey(key)) else { return nil }
        return Clock(decoding: bytes)
    }

    func chunkKey(_ key: String, owner: String, slot: UInt8, _ i: Int) -> String {
        "\(key).\(String(FNV1a.hash(owner.utf8), radix: 16)).\(slot).\(i)"
    }

    /// The head of a partition's checkpoint and its revision; nil when none was written.
    func head(key: String) throws -> (Head, revision: UInt64)? {
        guard let (bytes, rev) = try kv.get(key) else { return nil }
        do throws(FenceError) {
            return (try Head(decoding: bytes), rev)
        } catch {
            throw FenceError(.malformedInput, reason: "checkpoint \(key): \(error.reason)")
        }
    }

    /// Reads a whole checkpoint.
    /// - Returns: nil when none was written; the revision to pass to the next `write`.
    /// - Throws: `FenceError` when a chunk is missing or the bytes fail their checks (never
    ///   read as an empty state), `NATSError` when the bucket cannot be read.
    func read(key: String) throws -> (PartitionCheckpoint, revision: UInt64)? {
        guard let (head, rev) = try head(key: key) else { return nil }
        return (try read(key: key, head: head), rev)
    }

    /// Reads the checkpoint `head` (read by the caller with `head(key:)`) names.
    /// - Throws: as `read(key:)`.
    func read(key: String, head: Head) throws -> PartitionCheckpoint {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(head.length))
        for i in 0..<Int(head.chunks) {
            guard let (chunk, _) = try kv.get(chunkKey(key, owner: head.owner, slot: head.slot, i)) else {
                throw FenceError(.malformedInput, reason: "checkpoint \(key): chunk \(i) of slot \(head.slot) is missing")
            }
            bytes += chunk
        }
        guard UInt64(bytes.count) == head.length, CRC32.checksum(bytes) == head.crc else {
            throw FenceError(.malformedInput, reason: "checkpoint \(key): chunks do not match the head (length or CRC-32)")
        }
        do throws(FenceError) {
            return try PartitionCheckpoint(decoding: bytes)
        } catch {
            throw FenceError(.malformedInput, reason: "checkpoint \(key): \(error.reason)")
        }
    }

    /// Writes a checkpoint: chunks into the slot the head does not point at, then the head.
    /// - Parameters:
    ///   - previous: the head this worker last read or wrote (nil: none exists).
    ///   - revision: that head's revision (0: none exists).
    /// - Returns: the new head and its revision.
    /// - Complexity: one key-value put per 512 KiB, plus the head.
    func write(_ checkpoint: PartitionCheckpoint, key: String, previous: Head?, revision: UInt64) throws -> (Head, UInt64) {
        let bytes = checkpoint.encoded()
        let sameWriter = previous?.owner == checkpoint.owner
        let slot: UInt8 = sameWriter ? previous!.slot ^ 1 : 0
        var chunks = 0
        var offset = 0
        repeat {
            let end = min(bytes.count, offset + Self.chunkSize)
            try kv.put(chunkKey(key, owner: checkpoint.owner, slot: slot, chunks), Array(bytes[offset..<end]))
            chunks += 1
            offset = end
        } while offset < bytes.count
        let head = Head(
            slot: slot, chunks: UInt32(chunks), length: UInt64(bytes.count), crc: CRC32.checksum(bytes),
            lastSequence: checkpoint.lastSequence, replayFrom: checkpoint.replayFrom,
            lastChangeSequence: checkpoint.lastChangeSequence, owner: checkpoint.owner,
            written: Date().timeIntervalSince1970)
        let rev: UInt64
        do {
            rev = try kv.update(key, head.encoded(), last: revision)
        } catch {
            if error.isWrongLastSequence { throw CheckpointError.ownershipLost(key: key, detail: error.description) }
            throw error
        }
        // Shown by `fence status` only: a failure here fails nothing.
        _ = try? kv.put(
            clockKey(key), Clock(eventTime: checkpoint.latestSeen, late: UInt64(max(0, checkpoint.counters.late))).encoded())
        if let previous, !sameWriter {
            for i in 0..<Int(previous.chunks) { try? kv.delete(chunkKey(key, owner: previous.owner, slot: previous.slot, i)) }
        }
        return (head, rev)
    }
}

/// Why a partition cannot go on.
public enum CheckpointError: Error, CustomStringConvertible {
    /// Another worker wrote the partition's checkpoint since this one last did.
    case ownershipLost(key: String, detail: String)
    /// The checkpoint was computed with other settings, lateness, step or base fences.
    case fingerprintMismatch(partition: Int)
    /// Another process consumes the partition now (`PartitionWorker.consumerIsLive`): this
    /// worker did not start on it.
    case partitionInUse(partition: Int, consumer: String, checkpointOwner: String?)
    /// Another worker holds the partition's lease and renewed it while this one watched
    /// (`PartitionLease`): this worker did not start on it.
    case partitionLeased(partition: Int, holder: String)
    /// The partition's lease was taken by another worker (`holder`, when it says) while this
    /// one went without renewing it for longer than the lease's timeout.
    case leaseLost(partition: Int, key: String, holder: String?)

    public var description: String {
        switch self {
        case .ownershipLost(let key, let detail):
            return "checkpoint \(key) was written by another worker since this one read it (\(detail)); "
                + "each partition must be run by one worker at a time"
        case .partitionInUse(let p, let consumer, let checkpointOwner):
            return "partition \(p): another worker is consuming from \(consumer) now"
                + (checkpointOwner.map { " (the checkpoint is \($0)'s)" } ?? "")
                + "; this one did not start on it: each partition must be run by one worker at a time"
        case .partitionLeased(let p, let holder):
            return "partition \(p): worker \(holder) runs it (it renewed the partition's lease while this one watched); "
                + "this one did not start on it: each partition must be run by one worker at a time"
        case .leaseLost(let p, let key, let holder):
            return "partition \(p): its lease (\(key)) was taken over by " + (holder.map { "worker \($0)" } ?? "another worker")
                + " while this one went more than \(Int(PartitionLease.timeout)) s without renewing it; each partition must be "
                + "run by one worker at a time"
        case .fingerprintMismatch(let p):
            return "partition \(p): its checkpoint was made with other engine settings, lateness, step or base fences; "
                + "run the worker with the same ones, or start the partition over by deleting its checkpoint's head, key p\(p) "
                + "of the deployment's state bucket (with the nats tool: nats kv del NAME_STATE p\(p), NAME the --name, FENCE by default)"
        }
    }
}
