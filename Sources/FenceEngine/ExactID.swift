import Foundation

/// An id as its UTF-8 bytes: equal and hashed byte for byte.
///
/// Swift's `String ==` and hashing treat canonically equivalent text as one (NFC "é" against
/// NFD "e" + U+0301), while output order, state files, device hashes and NATS subjects all see
/// bytes. A fence or group id is therefore kept under its bytes, so that two spellings stay two
/// ids everywhere, as they are in the JSON, CSV or database they came from.
public struct ExactID: Hashable, Sendable {
    public let string: String

    @inline(__always)
    public init(_ string: String) { self.string = string }

    /// - Complexity: O(bytes), one `memcmp` over the strings' own storage; O(1) when the two
    /// `String`s are the same bits (`identical`).
    @inline(__always)
    public static func == (a: ExactID, b: ExactID) -> Bool {
        sameBytes(a.string, b.string)
    }

    /// Whether two `String` values are the same bits: the same inline bytes (a string of up to
    /// 15 UTF-8 bytes is held in the value itself) or the same storage. Either way the same
    /// text, byte for byte; false says nothing (one text can be held two ways).
    /// - Complexity: O(1), two word compares, no reference counting.
    @inline(__always)
    static func identical(_ a: String, _ b: String) -> Bool {
        guard MemoryLayout<String>.size == MemoryLayout<TwoWords>.size else { return false }
        let x = unsafeBitCast(a, to: TwoWords.self)
        let y = unsafeBitCast(b, to: TwoWords.self)
        return x.low == y.low && x.high == y.high
    }

    /// A `String`'s bits (a struct, not a tuple: a tuple's metadata was looked up per call).
    private struct TwoWords {
        var low: UInt64
        var high: UInt64
    }

    /// Whether two strings are the same UTF-8 bytes, `ExactID(a) == ExactID(b)` without making
    /// the two values (a retain and release each when a string is on the heap). Small enough
    /// to inline where the usual answer is `identical`'s.
    @inline(__always)
    static func sameBytes(_ a: String, _ b: String) -> Bool {
        identical(a, b) || compareBytes(a, b)
    }

    /// `sameBytes` for optional strings (a group): both nil, or both there with the same bytes.
    @inline(__always)
    static func sameBytes(_ a: String?, _ b: String?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case (let a?, let b?): sameBytes(a, b)
        default: false
        }
    }

    @inline(never)
    private static func compareBytes(_ a: String, _ b: String) -> Bool { UTF8Order.compare(a, b) == 0 }

    /// - Complexity: O(bytes).
    @inline(__always)
    public func hash(into hasher: inout Hasher) {
        let done: Void? = string.utf8.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        if done == nil { for b in string.utf8 { hasher.combine(b) } }
        hasher.combine(string.utf8.count)
    }
}

/// A table from ids to values under byte identity (`ExactID`), read and written with plain
/// `String`s: `table[id]`.
/// - Complexity: as `Dictionary`'s, plus O(bytes) to hash and compare an id.
public struct IDTable<Value>: Sendable where Value: Sendable {
    private var storage: [ExactID: Value] = [:]

    public init() {}

    /// The table over a dictionary already keyed by byte identity (no id hashed again).
    init(_ storage: [ExactID: Value]) { self.storage = storage }

    public subscript(_ id: String) -> Value? {
        @inline(__always) get { storage[ExactID(id)] }
        set { storage[ExactID(id)] = newValue }
        // In place: `table[id]!.append(x)` does not copy the value.
        _modify { yield &storage[ExactID(id)] }
    }

    public var count: Int { storage.count }
    public var capacity: Int { storage.capacity }
    public mutating func reserveCapacity(_ n: Int) { storage.reserveCapacity(n) }
    public mutating func removeAll(keepingCapacity keep: Bool = false) { storage.removeAll(keepingCapacity: keep) }

    /// The ids, in no particular order.
    public var ids: LazyMapSequence<Dictionary<ExactID, Value>.Keys, String> { storage.keys.lazy.map(\.string) }
}
