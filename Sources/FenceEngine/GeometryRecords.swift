#if canImport(Glibc)
    import Glibc
#endif
import Foundation
import Synchronization

/// The store's fence records (`FlatGeometry`), back to back, in memory that never moves and is
/// shared by every copy of the store: a record, once written, is never changed or moved while
/// this object lives, so copies of a `FenceStore` read it through their own hot words, and
/// an edit appends its new records at the end instead of copying the others.
///
/// Why shared and not copy-on-write: a copy's first edit used to copy every record (about
/// 300 MB at a million fences: 163-182 ms for one call), and each NATS partition's copy of
/// the worker's fences held its own records after its first fence change.
///
/// Appends claim room at the end with one atomic step, so copies on other threads may append
/// at the same time; each writes only the room it claimed and reads only records its own hot
/// words name. What copies append and no longer name (removed, replaced, or another copy's)
/// stays until the store compacts into new records (`FenceStore.compactIfNeeded`).
///
/// Room is address space reserved up front (`reservationFactor` times what is asked: the
/// loaded records, or at a move the live records and as much again; mapped without committing
/// memory, pages are committed when first written), so an engine grows by several times its
/// loaded size before its records move to a bigger reservation (`FenceStore.moveRecords`: a
/// store moves only the records it names). Where reserving is not free (strict overcommit, an
/// address-space limit: `reservationIsFree`) or not Linux, the records are allocated at what is
/// asked, and move, doubling, when it is used, as an array's would.
///
/// Copies that all edit share one region until its room is used: each then moves its own
/// records out, and the region stays for as long as some copy (a NATS worker's base engine)
/// holds it, up to its whole reserved room once written.
final class GeometryRecords: @unchecked Sendable {
    /// The first double; valid, and never moved, while this object lives.
    let base: UnsafeMutablePointer<Double>
    /// Doubles that fit.
    let capacity: Int
    /// Bytes mapped with `mmap`, or 0 when `base` came from `allocate`.
    private let mappedBytes: Int
    /// Doubles handed out so far.
    private let claimed: Atomic<Int>

    /// Room reserved, as a multiple of what is asked for.
    static let reservationFactor = 4
    /// The least room reserved, in doubles (512 KiB of address space).
    static let minimumReservation = 1 << 16
    /// Whether new records reserve address space (`mmap`); tests clear it to take the
    /// allocation path that systems refusing the reservation take.
    nonisolated(unsafe) static var reservesAddressSpace = true

    /// Whether reserving costs nothing but address space here: not under strict overcommit
    /// (`vm.overcommit_memory` 2 charges a writable mapping in full, `MAP_NORESERVE` or not),
    /// nor under an address-space limit (`ulimit -v`), where reserved room would crowd out
    /// the allocations that hold memory.
    static let reservationIsFree: Bool = {
        #if canImport(Glibc)
            var limit = rlimit()
            if getrlimit(Int32(RLIMIT_AS.rawValue), &limit) == 0 && limit.rlim_cur != rlim_t.max { return false }
            if let mode = try? String(contentsOfFile: "/proc/sys/vm/overcommit_memory", encoding: .utf8),
                mode.trimmingCharacters(in: .whitespacesAndNewlines) == "2"
            {
                return false
            }
            return true
        #else
            return false
        #endif
    }()

    /// No records and no room: the first append moves to records of its own. What a new
    /// store holds (so unrelated stores never share records).
    static let empty = GeometryRecords()

    private init() {
        base = .allocate(capacity: 1)
        capacity = 0
        mappedBytes = 0
        claimed = Atomic(0)
    }

    /// Empty records with room for at least `room` doubles.
    /// - Complexity: O(1): nothing is written.
    init(room: Int) {
        precondition(room >= 0)
        let (product, overflow) = room.multipliedReportingOverflow(by: Self.reservationFactor)
        let wanted = max(Self.minimumReservation, product)
        var mapped: (UnsafeMutablePointer<Double>, Int)?
        #if canImport(Glibc)
            if Self.reservesAddressSpace && Self.reservationIsFree && !overflow && wanted <= Int.max / 16 {
                let page = Int(sysconf(Int32(_SC_PAGESIZE)))
                let bytes = (wanted * MemoryLayout<Double>.stride + page - 1) / page * page
                let raw = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
                if let raw, raw != MAP_FAILED { mapped = (raw.bindMemory(to: Double.self, capacity: bytes / 8), bytes) }
            }
        #endif
        if let (pointer, bytes) = mapped {
            base = pointer
            capacity = bytes / MemoryLayout<Double>.stride
            mappedBytes = bytes
        } else {
            capacity = max(1, room)
            base = .allocate(capacity: capacity)
            mappedBytes = 0
        }
        claimed = Atomic(0)
    }

    deinit {
        #if canImport(Glibc)
            if mappedBytes > 0 {
                munmap(base, mappedBytes)
                return
            }
        #endif
        base.deallocate()
    }

    /// Doubles handed out, by this copy and every other sharing the records.
    var count: Int { claimed.load(ordering: .acquiring) }

    /// Doubles that can still be claimed.
    var room: Int { capacity - count }

    /// Claims `n` doubles at the end and returns where they start, or nil when they do not fit.
    /// Only the caller may write them; it must before any reader is told where they are.
    /// - Complexity: O(1) (a compare-and-exchange, retried while another append races it).
    func claim(_ n: Int) -> Int? {
        var start = claimed.load(ordering: .relaxed)
        while true {
            guard n <= capacity - start else { return nil }
            let (exchanged, original) = claimed.compareExchange(
                expected: start, desired: start + n, ordering: .acquiringAndReleasing)
            if exchanged { return start }
            start = original
        }
    }

    /// Calls `body` with every double handed out so far.
    @inline(__always)
    func withUnsafeBufferPointer<R>(_ body: (UnsafeBufferPointer<Double>) throws -> R) rethrows -> R {
        try body(UnsafeBufferPointer(start: base, count: count))
    }

    /// The doubles in `range`, copied (tests and cold paths).
    subscript(range: Range<Int>) -> [Double] {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "records \(range) outside 0..<\(count)")
        return Array(UnsafeBufferPointer(start: base + range.lowerBound, count: range.count))
    }
}
