import FenceEngine
import Foundation

/// The bytes of a position input: read from a descriptor as they are, or decoded when its
/// first bytes are a compressed format's magic (`Compression`: gzip, Zstandard). `PositionReader`
/// reads its lines from here; this knows nothing of lines.
///
/// Under a `deadline` a read waits for the descriptor no longer than it allows (`poll`), so a
/// live pipe's reader can return what it has. A compressed stream that is corrupt, truncated or
/// followed by other data does not throw from `read`: the input ends there and `failure` says
/// why, so the reader can still hand out the complete lines before it.
final class PositionInput {
    private let fd: Int32
    /// Closed when this is released (a file the reader opened, not one it was given).
    var ownsDescriptor = false
    /// How the bytes arrive, decided by the first ones read.
    private enum Encoding: Equatable { case unknown, plain, compressed(Compression) }
    private var encoding = Encoding.unknown
    private var decoder: StreamDecoder?
    /// Compressed bytes read and not yet decoded (`compressed[compressedStart..<compressedEnd]`).
    private var compressed: [UInt8] = []
    private var compressedStart = 0
    private var compressedEnd = 0
    private var compressedEOF = false
    /// The decoder filled the output last time, so it may hold more without new input.
    private var decoderMayHoldOutput = false
    /// Why a compressed input ended early (`fail`); the reader throws it once the lines before
    /// it are read, naming the line after them.
    private(set) var failure: FenceError?
    /// The current read's deadline (`DispatchTime` nanoseconds); nil waits as long as input
    /// takes to come.
    var deadline: UInt64?

    init(fileDescriptor: Int32) {
        fd = fileDescriptor
    }

    deinit {
        if ownsDescriptor { close(fd) }
    }

    /// Whether the input can be read before the deadline (always, without one): decoded
    /// bytes the decoder may hold, compressed bytes not yet decoded, a fault the decoder holds
    /// (it ends the input without waiting for more), or the descriptor ready.
    func ready() -> Bool {
        decoderMayHoldOutput || compressedStart < compressedEnd || decoder?.hasPendingFault == true || descriptorReady()
    }

    /// Whether the descriptor can be read before the deadline (always, without one): a `poll`
    /// for the time left. A `poll` failure other than an interruption says yes, and the read
    /// that follows reports it.
    private func descriptorReady() -> Bool {
        guard let deadline else { return true }
        while true {
            // Past the deadline the poll still looks once (timeout 0): input that is there is
            // read (`--max-wait 0` reads what has arrived; a file is always ready).
            let now = DispatchTime.now().uptimeNanoseconds
            let ms = now >= deadline ? 0 : Int32(min(Double(Int32.max), (Double(deadline - now) / 1e6).rounded(.up)))
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let r = poll(&p, 1, ms)
            if r > 0 { return true }
            if r == 0 { return false }
            if errno != EINTR { return true }
        }
    }

    /// Reads up to `out.count` input bytes into `out`, as they are or decoded: the number read
    /// (0 at the input's end), or nil when the deadline passed first (compressed bytes arrived
    /// that decode to nothing yet). The first read decides the encoding.
    /// - Throws: a failed read, or an archive or compressed format that is not read (named,
    ///   with the command that decompresses it). A compressed stream that is corrupt, truncated
    ///   or followed by other data ends the input instead (`failure`).
    func read(into out: UnsafeMutableRawBufferPointer) throws(FenceError) -> Int? {
        switch encoding {
        case .plain:
            return try Self.read(fd, out.baseAddress!, out.count)
        case .unknown:
            // A few bytes tell a compressed input: read on while what came is a magic's start.
            var got = try Self.read(fd, out.baseAddress!, out.count)
            while got > 0 && got < Compression.magicLength && got < out.count,
                Compression.couldStartMagic(UnsafeRawBufferPointer(rebasing: out[0..<got]))
            {
                let more = try Self.read(fd, out.baseAddress! + got, out.count - got)
                if more == 0 { break }
                got += more
            }
            let first = UnsafeRawBufferPointer(rebasing: out[0..<got])
            guard let sniffed = Compression.sniff(first) else {
                if let unread = Compression.unreadFormat(first) { throw Compression.unreadFormatError(unread, line: 1) }
                encoding = .plain
                return got
            }
            encoding = .compressed(sniffed)
            decoder = sniffed.decoder()
            // At least what the first read brought (up to the whole buffer).
            compressed = [UInt8](repeating: 0, count: max(1 << 18, got))
            compressed.withUnsafeMutableBytes { $0.copyMemory(from: first) }
            compressedEnd = got
            return try decoded(into: out)
        case .compressed:
            return try decoded(into: out)
        }
    }

    /// Decodes into `out`, reading compressed bytes as needed.
    private func decoded(into out: UnsafeMutableRawBufferPointer) throws(FenceError) -> Int? {
        guard let decoder, failure == nil else { return 0 }
        while true {
            // Also with no compressed bytes left: the decoder may still hold output.
            if compressedStart < compressedEnd || decoderMayHoldOutput || decoder.hasPendingFault {
                let outcome = compressed.withUnsafeBytes { input in
                    Result { () throws(FenceError) in
                        try decoder.decode(UnsafeRawBufferPointer(rebasing: input[compressedStart..<compressedEnd]), into: out)
                    }
                }
                guard case .success(let (read, written)) = outcome else {
                    if case .failure(let error) = outcome { fail(error) }
                    return 0
                }
                compressedStart += read
                decoderMayHoldOutput = written == out.count
                if written > 0 { return written }
                if read > 0 { continue }
            }
            if compressedEOF {
                do { try decoder.finish() } catch { fail(error) }
                return 0
            }
            // More compressed bytes, without waiting past the deadline.
            guard descriptorReady() else { return nil }
            compressedStart = 0
            compressedEnd = 0
            let got = try compressed.withUnsafeMutableBytes { b in Result { () throws(FenceError) in try Self.read(fd, b.baseAddress!, b.count) } }.get()
            if got == 0 { compressedEOF = true } else { compressedEnd = got }
        }
    }

    /// Ends the input at a failure of its compressed stream (corrupt, truncated, followed by
    /// other data): the complete lines before it are still read, the line it cut is dropped,
    /// and the reader then throws it, naming that line.
    private func fail(_ error: FenceError) {
        failure = error
        compressedStart = compressedEnd
        compressedEOF = true
        decoderMayHoldOutput = false
    }

    /// `read(2)`, retried when interrupted.
    private static func read(_ fd: Int32, _ to: UnsafeMutableRawPointer, _ count: Int) throws(FenceError) -> Int {
        while true {
            let got = Foundation.read(fd, to, count)
            if got >= 0 { return got }
            if errno != EINTR { throw FenceError(.malformedInput, reason: "read failed: \(String(cString: strerror(errno)))") }
        }
    }
}
