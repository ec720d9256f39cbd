import CZlib
import FenceEngine

/// Inflates gzip data piece by piece (zlib, through `CZlib`): one member or several in a row,
/// as `cat a.gz b.gz` or `gzip` of a growing log makes them, read as one text.
///
/// The stream is at a fixed address (zlib keeps a pointer back to it), so this is a class.
/// Errors name the compressed byte where they were found; nothing is returned past a corrupt
/// or truncated member, and what was returned before it stays valid.
final class GzipInflater {
    private let stream: UnsafeMutablePointer<z_stream>
    /// Compressed bytes taken so far.
    private(set) var consumed = 0
    /// Inflated bytes handed out so far.
    private(set) var produced = 0
    /// Whether the last member read has ended (its trailer checked) and no byte of another has
    /// been taken: the input may end here.
    private(set) var atMemberEnd = false
    /// A fault found after inflating some bytes in the same call, thrown by the next.
    private var pendingFault: FenceError?

    /// Whether `bytes` begin as gzip data does (the magic 1f 8b).
    static func isGzip(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= 2 && bytes[0] == 0x1F && bytes[1] == 0x8B
    }

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

    /// Inflates from `input` into `output` until one of them is used up or a member ends;
    /// after a member's end, a next member starts with the next input byte.
    /// - Returns: input bytes taken and output bytes written (both may be 0 when `input`
    ///   holds only part of a header).
    /// - Throws: `malformedInput` for data that is not gzip or is corrupt (a wrong checksum,
    ///   an invalid block), naming the compressed byte.
    /// - Complexity: O(input + output); no allocation.
    func inflate(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(FenceError) -> (
        read: Int, written: Int
    ) {
        if let pendingFault { throw pendingFault }
        var read = 0
        var written = 0
        while read < input.count && written < output.count {
            if atMemberEnd {
                // Another member follows, or data that is not gzip (zeros padding a tape
                // block, text appended to the file): refused by name rather than as corrupt.
                let next = input[read]
                let second = read + 1 < input.count ? input[read + 1] : 0x8B
                guard next == 0x1F && second == 0x8B else {
                    // What the member gave goes out first; the next call refuses the rest.
                    if written > 0 { return (read, written) }
                    throw FenceError(
                        .malformedInput,
                        reason: "data that is not gzip follows the gzip stream at compressed byte \(consumed) (\(produced) bytes inflated before it)")
                }
                inflateReset(stream)
                atMemberEnd = false
            }
            let inCount = min(input.count - read, Int(UInt32.max))
            let outCount = min(output.count - written, Int(UInt32.max))
            stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress!.advanced(by: read).assumingMemoryBound(to: Bytef.self))
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

    /// At the end of the input: refuses data that stops inside a member (a truncated file or
    /// an interrupted transfer).
    func finish() throws(FenceError) {
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

extension GzipInflater {
    /// The whole of a gzip document, inflated: for inputs read at once (GeoJSON fences).
    /// Inflating stops with an error when the text holds a NUL byte (no JSON text has one: a
    /// bomb of zeros is refused at once), or once the inflated size passes both `floor` (256
    /// MiB) and `maxRatio` times the compressed size (deflate reaches about 1,000 to 1 only
    /// on repetitive filler; GeoJSON compresses about 3 to 15 to 1).
    /// - Complexity: O(inflated bytes); memory: the inflated document.
    static func inflateAll(
        _ compressed: UnsafeRawBufferPointer, refuseNUL: Bool, maxRatio: Int = 100, floor: Int = 256 << 20
    ) throws(FenceError) -> [UInt8] {
        let inflater = GzipInflater()
        var out = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        var at = 0
        while true {
            let (read, written) = try chunk.withUnsafeMutableBytes { buffer in
                Result { () throws(FenceError) in try inflater.inflate(UnsafeRawBufferPointer(rebasing: compressed[at...]), into: buffer) }
            }.get()
            at += read
            if written > 0 {
                if refuseNUL && chunk[0..<written].contains(0) {
                    throw FenceError(
                        .malformedInput,
                        reason: "the inflated gzip data holds binary data (a NUL byte) within its first \(inflater.produced) bytes: it is not text")
                }
                out.append(contentsOf: chunk[0..<written])
                if out.count > floor && out.count / maxRatio > at {
                    throw FenceError(
                        .malformedInput,
                        reason: "the gzip data inflates more than \(maxRatio) times (\(at) compressed bytes gave \(out.count)): refused as a decompression bomb")
                }
            }
            if read == 0 && written == 0 {
                guard at == compressed.count else {
                    // No progress with input left: cannot happen with room to write; named anyway.
                    throw FenceError(.malformedInput, reason: "the gzip data stops inflating at compressed byte \(at)")
                }
                try inflater.finish()
                return out
            }
        }
    }
}
