import FenceEngine
import XCTest

final class AllocatorTuningTests: XCTestCase {
    /// glibc takes all three settings; a batch-sized block freed and taken again is then
    /// reused rather than mapped afresh (its first page reads back the old contents' address
    /// space without a new mapping: same address).
    func testGlibcTakesTheSettingsAndFreedBlocksAreReused() {
        #if os(Linux)
            XCTAssertTrue(AllocatorTuning.keepFreedMemory())
            let size = 8 << 20
            let first = malloc(size)!
            memset(first, 1, size)
            free(first)
            let second = malloc(size)!
            defer { free(second) }
            XCTAssertEqual(first, second, "an 8 MiB block was not reused")
        #endif
    }
}
