import CZstd
import FenceEngine

/// Decodes Zstandard data piece by piece (libzstd's streaming API, through `CZstd`): one frame
/// or several in a row (`zstd` of pieces, `cat a.zst b.zst`), skippable frames skipped.
///
/// Windows up to libzstd's default limit (128 MiB, what `zstd` writes unless told `--long`
/// beyond it) are decoded; a frame that needs more is refused with libzstd's reason.
final class ZstdDecoder: StreamDecoder {
    private let stream: OpaquePointer
    private(set) var consumed = 0
    private(set) var produced = 0
    /// Whether a frame is begun and not yet complete (libzstd's last answer was not 0).
    private var inFrame = false
    /// A fault found after decoding some bytes in the same call, thrown by the next.
    private var pendingFault: FenceError?
    var hasPendingFault: Bool { pendingFault != nil }
    private var silence = SilenceGuard()
    /// Compressed bytes given to libzstd per call. On a fault libzstd reports no progress for
    /// the whole call, so what that call decoded before the faulty block is lost: small calls
    /// keep that loss to the blocks of one slice.
    static let slice = 1024

    init() {
        // Fails only without memory for the context: then nothing can go on.
        guard let s = ZSTD_createDStream() else { preconditionFailure("ZSTD_createDStream failed") }
        stream = s
        _ = ZSTD_initDStream(stream)
    }

    deinit { ZSTD_freeDStream(stream) }

    /// libzstd may hold decoded bytes when `output` fills; an empty `input` still gives them.
    /// - Complexity: O(input + output); no allocation (the context's window is allocated once,
    ///   at the first frame).
    func decode(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(FenceError) -> (
        read: Int, written: Int
    ) {
        if let pendingFault { throw pendingFault }
        let base = input.count > 0 ? input.baseAddress! : UnsafeRawPointer(emptyInputByte)
        var taken = 0
        var target = ZSTD_outBuffer(dst: output.baseAddress, size: output.count, pos: 0)
        while target.pos < target.size {
            var source = ZSTD_inBuffer(src: base + taken, size: min(Self.slice, input.count - taken), pos: 0)
            let before = target.pos
            let r = ZSTD_decompressStream(stream, &target, &source)
            if ZSTD_isError(r) != 0 {
                let fault = FenceError(
                    .malformedInput,
                    reason: "the zstd data is corrupt within \(Self.slice) bytes after compressed byte \(consumed) (\(String(cString: ZSTD_getErrorName(r))); \(produced) bytes decoded before it)")
                // What came out before the fault goes out first; the next call refuses the rest.
                guard target.pos == 0 else {
                    pendingFault = fault
                    break
                }
                throw fault
            }
            taken += source.pos
            consumed += source.pos
            produced += target.pos - before
            try silence.step(consumed: consumed, gave: target.pos - before, format: .zstd)
            // A call without progress says nothing of the frame (at a frame's end, with no
            // input, it asks for the next frame's header).
            if source.pos == 0 && target.pos == before { break }
            inFrame = r != 0
        }
        return (taken, target.pos)
    }

    func finish() throws(FenceError) {
        if let pendingFault { throw pendingFault }
        guard !inFrame else {
            throw FenceError(
                .malformedInput,
                reason: "the zstd data ends inside a frame after \(consumed) compressed bytes (\(produced) decoded): the file is truncated")
        }
    }
}
