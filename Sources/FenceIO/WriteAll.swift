import Foundation

/// Writes all of `raw` to the descriptor `fd`, retrying on EINTR and after short writes;
/// false (with `errno` set) when the descriptor refuses them. Never traps, unlike Foundation's
/// `FileHandle.write`, which does (`try!`) when a closed, full or broken descriptor refuses.
/// - Complexity: O(bytes), one `write(2)` per accepted piece.
public func writeAll(_ fd: Int32, _ raw: UnsafeRawBufferPointer) -> Bool {
    var offset = 0
    while offset < raw.count {
        let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
        if n < 0 {
            if errno == EINTR { continue }
            return false
        }
        offset += n
    }
    return true
}
