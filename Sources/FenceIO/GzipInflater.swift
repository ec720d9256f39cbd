import CZlib
import FenceEngine

/// Inflates gzip data piece by piece (zlib, through `CZlib`): one member or several in a row,
/// as `cat a.gz b.gz` or `gzip` of a growing log makes them, read as one text.
///
/// The stream is at a fixed address (zlib keeps a pointer back to it), so this is a class.
final class GzipInflater: StreamDecoder {
    private let stream: UnsafeMutablePointer<z_stream>
    private(set) var consumed = 0
    private(set) var produced = 0
    /// Whether the last member read has ended (its trailer checked) and no byte of another has
    /// been taken: the input may end here.
    private(set) var atMemberEnd = false
    /// A fault found after inflating some bytes in the same call, thrown by the next.
    private var pendingFault: FenceError?
    var hasPendingFault: Bool { pendingFault != nil }
    private var silence = SilenceGuard()

    init() {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // Fails only without memory for zlib's state (a few KB): then nothing can go on.
        let status = CZlib_inflateInitGzip(stream)
        precondition(status == Z_OK, "zlib inflateInit2 failed (\(status))")
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// After a member's end, a next member starts with the next input byte; data that is not
    /// gzip there is refused by name. zlib may hold output (the rest of a long match) that an
    /// empty `input` still gives.
    /// - Complexity: O(input + output); no allocation.
    func decode(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(FenceError) -> (
        read: Int, written: Int
    ) {
        if let pendingFault { throw pendingFault }
        var read = 0
        var written = 0
        while written < output.count {
            if atMemberEnd {
                // The input may end here; or another member follows, or data that is not gzip
                // (zeros padding a tape block, text appended to the file).
                guard read < input.count else { break }
                let next = input[read]
                let second = read + 1 < input.count ? input[read + 1] : 0x8B
                guard next == 0x1F && second == 0x8B else {
                    let fault = FenceError(
                        .malformedInput,
                        reason: "data that is not gzip follows the gzip stream at compressed byte \(consumed) (\(produced) bytes inflated before it)")
                    // What the member gave goes out first; the next call refuses the rest.
                    if written > 0 {
                        pendingFault = fault
                        return (read, written)
                    }
                    throw fault
                }
                inflateReset(stream)
                atMemberEnd = false
            }
            let inCount = min(input.count - read, Int(UInt32.max))
            let outCount = min(output.count - written, Int(UInt32.max))
            let source = inCount > 0 ? input.baseAddress!.advanced(by: read).assumingMemoryBound(to: UInt8.self) : UnsafePointer(emptyInputByte)
            stream.pointee.next_in = UnsafeMutablePointer(mutating: source)
            stream.pointee.avail_in = uInt(inCount)
            stream.pointee.next_out = output.baseAddress!.advanced(by: written).assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_out = uInt(outCount)
            let status = CZlib.inflate(stream, Z_NO_FLUSH)
            let took = inCount - Int(stream.pointee.avail_in)
            let gave = outCount - Int(stream.pointee.avail_out)
            read += took
            written += gave
            consumed += took
            produced += gave
            try silence.step(consumed: consumed, gave: gave, format: .gzip)
            switch status {
            case Z_OK, Z_BUF_ERROR:
                if took == 0 && gave == 0 { return (read, written) }
            case Z_STREAM_END:
                atMemberEnd = true
            default:
                // What came out before the fault goes out first; the next call refuses the rest.
                let fault = problem(status)
                guard written == 0 else {
                    pendingFault = fault
                    return (read, written)
                }
                throw fault
            }
        }
        return (read, written)
    }

    func finish() throws(FenceError) {
        if let pendingFault { throw pendingFault }
        guard atMemberEnd else {
            throw FenceError(
                .malformedInput,
                reason: "the gzip data ends inside a member after \(consumed) compressed bytes (\(produced) inflated): the file is truncated")
        }
    }

    private func problem(_ status: Int32) -> FenceError {
        let message = stream.pointee.msg.map { String(cString: $0) } ?? "zlib status \(status)"
        if status == Z_MEM_ERROR {
            return FenceError(.malformedInput, reason: "out of memory inflating gzip data")
        }
        return FenceError(
            .malformedInput,
            reason: "the gzip data is corrupt at compressed byte \(consumed) (\(message); \(produced) bytes inflated before it)")
    }
}
