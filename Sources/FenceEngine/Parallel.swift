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
