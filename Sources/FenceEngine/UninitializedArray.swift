extension ContiguousArray where Element: BitwiseCopyable {
    /// `count` elements left as the allocator gave them, for an array each element of which is
    /// written before it is read: no serial fill that would only be overwritten, and a parallel
    /// fill touches each fresh page first on the worker that writes it.
    /// - Complexity: O(1) besides the allocation.
    init(uninitializedCount count: Int) {
        self.init(unsafeUninitializedCapacity: count) { _, initialized in initialized = count }
    }
}
