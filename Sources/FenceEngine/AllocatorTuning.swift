#if canImport(Glibc)
    import Glibc
#endif

/// Settings of the C allocator for programs that evaluate batch after batch.
///
/// A batch's temporaries (sort keys, Morton order, coverage rows: about 50 MB per million
/// positions) are freed when it ends. By default glibc returns large blocks to the kernel at
/// once (blocks of 128 KiB and more are mapped and unmapped one by one, and the heap top is
/// trimmed past 128 KiB), so the next batch faults every page in again and the kernel clears
/// each one: measured as up to a third of the samples of a containment benchmark. Kept, the
/// memory is reused. The cost is that resident size stays at the largest batch's peak.
public enum AllocatorTuning {
    /// Keeps freed memory in the process: blocks up to 32 MiB (glibc's ceiling) come from the
    /// heap rather than their own mapping, the heap is trimmed only past `retain` bytes, and it
    /// grows 64 MiB at a time. Process-wide; the `fence` command and `fence-bench` call it at
    /// start. Does nothing where the allocator is not glibc's.
    /// - Returns: whether glibc took all three settings.
    /// - Complexity: O(1).
    @discardableResult
    public static func keepFreedMemory(retain: Int = 1 << 30) -> Bool {
        #if canImport(Glibc)
            typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
            // `mallopt` is not in the Glibc module's headers; it is in every glibc.
            guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "mallopt") else { return false }
            let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
            let mmapThreshold: Int32 = -3
            let trimThreshold: Int32 = -1
            let topPad: Int32 = -2
            let ok = [
                mallopt(mmapThreshold, 32 << 20), mallopt(trimThreshold, Int32(clamping: retain)), mallopt(topPad, 64 << 20),
            ]
            return ok.allSatisfy { $0 == 1 }
        #else
            return false
        #endif
    }

    /// Returns the free pages of every heap arena to the system (glibc's `malloc_trim(0)`),
    /// whatever `keepFreedMemory` retains. For a phase that frees a large structure while
    /// building another of about its size (the bulk load's checked records, copied into the
    /// store): the freed pages would otherwise stay resident beside the new ones. Does
    /// nothing where the allocator is not glibc's.
    /// - Returns: whether memory was returned.
    /// - Complexity: O(the heap's free chunks) and a system call per run of free pages, every
    ///   call: it walks all free memory, not only what was freed since the last call. It
    ///   takes each arena's lock in turn, so it is safe while other threads allocate (they
    ///   wait on that arena meanwhile). Call it once per many megabytes freed, not per block.
    @discardableResult
    public static func returnFreedMemory() -> Bool {
        #if canImport(Glibc)
            guard let trim = mallocTrim else { return false }
            return trim(0) == 1
        #else
            return false
        #endif
    }

    #if canImport(Glibc)
        /// `malloc_trim`, looked up once (not in the Glibc module's headers either).
        nonisolated(unsafe) private static let mallocTrim: (@convention(c) (Int) -> Int32)? = {
            guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "malloc_trim") else { return nil }
            return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
        }()
    #endif
}
