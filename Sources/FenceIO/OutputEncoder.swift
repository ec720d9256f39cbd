import CZlib
import CZstd
import FenceEngine

/// Compresses a command's output file piece by piece, chosen by the file's name: `.gz` gives
/// one gzip member (zlib, level 6, as `gzip` writes), `.zst` one Zstandard frame (libzstd,
/// level 3, as `zstd` writes). Names are all output has to go by; inputs are known by their
/// magic instead (`Compression`).
///
/// Each `encode` that is not `final` ends on a flush point (zlib's `Z_SYNC_FLUSH`, zstd's
/// `ZSTD_e_flush`): everything given so far can be decoded from what was returned, so a live
/// run's file can be followed (`zcat -f`, `zstdcat`) while it grows. The `final` call writes
/// the trailer; a file cut before it (a killed run) decodes up to the last flush point and
/// then reports its end as unexpected.
public final class OutputEncoder {
    public enum Kind: String, Sendable {
        case gzip, zstd
    }

    public let kind: Kind
    private var zlib = z_stream()
    private var zstd: OpaquePointer?
    private var finished = false

    /// The compression a file name asks for, by its ending (any case); nil for any other name.
    public static func kind(forName name: String) -> Kind? {
        Compression(ending: name).map { $0 == .gzip ? .gzip : .zstd }
    }

    /// `name` without a compressed ending (`events.csv.gz` -> `events.csv`): the name of what
    /// the file holds.
    public static func plainName(_ name: String) -> String { Compression.strippingEnding(name) }

    /// Endings of compressed formats that are not written (`.xz`, `.bz2`, ...): a name with one
    /// is refused rather than filled with plain text.
    public static func unwrittenEnding(ofName name: String) -> String? {
        let lower = name.lowercased()
        return [".xz", ".bz2", ".lz4", ".lzma", ".lz", ".zip", ".br", ".7z", ".tgz", ".tar", ".z"].first { lower.hasSuffix($0) }
    }

    public init(_ kind: Kind) {
        self.kind = kind
        switch kind {
        case .gzip:
            // Fails only without memory (or a zlib built without gzip): nothing could go on.
            let status = CZlib_deflateInitGzip(&zlib, 6)
            precondition(status == Z_OK, "zlib deflateInit2 failed (\(status))")
        case .zstd:
            guard let c = ZSTD_createCCtx() else { preconditionFailure("ZSTD_createCCtx failed") }
            _ = ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 3)
            zstd = c
        }
    }

    deinit {
        switch kind {
        case .gzip: deflateEnd(&zlib)
        case .zstd: ZSTD_freeCCtx(zstd)
        }
    }

    /// Compresses `input` and returns what is ready, ending on a flush point, or with `final`
    /// on the stream's end (after which the encoder takes nothing more).
    /// - Complexity: O(input); the returned array is sized by the compressor's bound.
    public func encode(_ input: UnsafeRawBufferPointer, final: Bool) -> [UInt8] {
        precondition(!finished, "OutputEncoder used after its final call")
        finished = final
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: max(1 << 16, input.count / 2 + 1024))
        switch kind {
        case .gzip:
            zlib.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
            zlib.avail_in = uInt(input.count)
            while true {
                let (status, written): (Int32, Int) = chunk.withUnsafeMutableBufferPointer { b in
                    zlib.next_out = b.baseAddress
                    zlib.avail_out = uInt(b.count)
                    let s = deflate(&zlib, final ? Z_FINISH : Z_SYNC_FLUSH)
                    return (s, b.count - Int(zlib.avail_out))
                }
                out.append(contentsOf: chunk[..<written])
                // Done when the stream ended, or when a flush left room unused (all is out).
                if status == Z_STREAM_END || (!final && zlib.avail_out > 0 && zlib.avail_in == 0) { break }
                // Z_BUF_ERROR: no progress possible, nothing was pending; anything else is a bug.
                precondition(status == Z_OK || status == Z_BUF_ERROR, "zlib deflate failed (\(status))")
                if status == Z_BUF_ERROR { break }
            }
            zlib.next_in = nil
        case .zstd:
            var source = ZSTD_inBuffer(src: input.baseAddress, size: input.count, pos: 0)
            while true {
                let (remaining, written): (Int, Int) = chunk.withUnsafeMutableBytes { b in
                    var target = ZSTD_outBuffer(dst: b.baseAddress, size: b.count, pos: 0)
                    let r = ZSTD_compressStream2(zstd, &target, &source, final ? ZSTD_e_end : ZSTD_e_flush)
                    precondition(ZSTD_isError(r) == 0, "zstd compression failed: \(String(cString: ZSTD_getErrorName(r)))")
                    return (r, target.pos)
                }
                out.append(contentsOf: chunk[..<written])
                // 0: the flush (or the frame's end) is complete and all input taken.
                if remaining == 0 { break }
            }
        }
        return out
    }
}
