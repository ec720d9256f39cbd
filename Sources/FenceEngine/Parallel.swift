import Dispatch
import Foundation

/// Chunked parallel loops on Dispatch, the one place the engine (and FenceIO's readers) fan work
/// out.
public enum Parallel {
    /// Calls `body(&state, chunk, range)` for every chunk of `0..<count`, on up to `threads`
    /// workers (`DispatchQueue.concurrentPerform`). Each worker makes its own state with
    /// `makeState` (scratch buffers, a GEOS context) and takes the next chunk when it is done
    /// with one, so fast workers take more. `body` must write only what belongs to its chunk;
    /// then results merged by chunk number are the same for every thread count.
    ///
    /// With one worker, or one chunk, everything runs on the calling thread.
    /// - Complexity: O(count / chunkSize) lock round trips besides the work itself.
    public static func forEachChunk<State>(
        count: Int, chunkSize: Int, threads: Int, makeState: () -> State,
        body: (inout State, Int, Range<Int>) -> Void
    ) {
        let chunks = (count + chunkSize - 1) / chunkSize
        let workers = max(1, min(threads, chunks))
        if workers == 1 {
            var state = makeState()
            for c in 0..<chunks { body(&state, c, (c * chunkSize)..<min(count, (c + 1) * chunkSize)) }
            return
        }
        let next = ChunkCounter()
        // The closures are not Sendable in the type system; they are called concurrently only
        // on disjoint chunks, which is the contract stated above.
        withoutActuallyEscaping(makeState) { makeState in
            withoutActuallyEscaping(body) { body in
                nonisolated(unsafe) let makeState = makeState
                nonisolated(unsafe) let body = body
                DispatchQueue.concurrentPerform(iterations: workers) { _ in
                    var state = makeState()
                    while true {
                        let c = next.take()
                        if c >= chunks { break }
                        body(&state, c, (c * chunkSize)..<min(count, (c + 1) * chunkSize))
                    }
                }
            }
        }
    }
}

extension Parallel {
    /// The parts end to end, each element moved (no reference counted), on up to `threads`
    /// workers, one part at a time each; `parts` is left holding empty arrays. `filler` (a
    /// value without references) stands in for each moved element until its part is freed.
    ///
    /// What `append(contentsOf:)` part after part does, without a retain and a release of
    /// each element's references: for a million fences a cache miss each on their shapes,
    /// and one thread touching every fresh page of the result. That holds for parts the caller
    /// holds the only reference to; a shared part is copied first (correct, not faster).
    /// - Complexity: O(total) over the workers.
    public static func moveEndToEnd<T>(_ parts: inout [[T]], filler: T, threads: Int) -> [T] {
        var offsets: [Int] = []
        var total = 0
        for part in parts {
            offsets.append(total)
            total += part.count
        }
        return [T](unsafeUninitializedCapacity: total) { out, initialized in
            parts.withUnsafeMutableBufferPointer { partsBuffer in
                // Each worker moves one part into its own range of `out`.
                nonisolated(unsafe) let partsBuffer = partsBuffer
                nonisolated(unsafe) let out = out
                nonisolated(unsafe) let filler = filler
                forEachChunk(count: partsBuffer.count, chunkSize: 1, threads: threads, makeState: {}) { _, p, _ in
                    partsBuffer[p].withUnsafeMutableBufferPointer { source in
                        guard let from = source.baseAddress else { return }
                        let to = out.baseAddress! + offsets[p]
                        for k in source.indices {
                            (to + k).initialize(to: (from + k).move())
                            (from + k).initialize(to: filler)
                        }
                    }
                    partsBuffer[p] = []  // freed here, beside the other workers
                }
            }
            initialized = total
        }
    }
}

/// Hands out chunk numbers to workers.
final class ChunkCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var next = 0
    func take() -> Int {
        lock.lock()
        defer { lock.unlock() }
        let c = next
        next += 1
        return c
    }
}
