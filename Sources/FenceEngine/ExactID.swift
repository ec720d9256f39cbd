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

    /// - Complexity: O(bytes), one `memcmp` over the strings' own storage.
    @inline(__always)
    public static func == (a: ExactID, b: ExactID) -> Bool {
        let fast = a.string.utf8.withContiguousStorageIfAvailable { pa in
            b.string.utf8.withContiguousStorageIfAvailable { pb -> Bool in
                pa.count == pb.count && (pa.count == 0 || memcmp(pa.baseAddress!, pb.baseAddress!, pa.count) == 0)
            }
        }
        if let fast, let answer = fast { return answer }
        return a.string.utf8.elementsEqual(b.string.utf8)
    }

    /// - Complexity: O(bytes).
    @inline(__always)
    public func hash(into hasher: inout Hasher) {
        let done = string.utf8.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
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

    public subscript(_ id: String) -> Value? {
        @inline(__always) get { storage[ExactID(id)] }
        set { storage[ExactID(id)] = newValue }
        // In place: `table[id]!.append(x)` does not copy the value.
        _modify { yield &storage[ExactID(id)] }
    }

    public var count: Int { storage.count }
    public var isEmpty: Bool { storage.isEmpty }
    public var capacity: Int { storage.capacity }
    public mutating func reserveCapacity(_ n: Int) { storage.reserveCapacity(n) }
    public mutating func removeAll(keepingCapacity keep: Bool = false) { storage.removeAll(keepingCapacity: keep) }

    /// The ids, in no particular order.
    public var ids: LazyMapSequence<Dictionary<ExactID, Value>.Keys, String> { storage.keys.lazy.map(\.string) }
}
