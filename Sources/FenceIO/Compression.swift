import FenceEngine

/// A compressed input format, known by the magic its data starts with (never by the name: a
/// pipe has none, and files are misnamed).
enum Compression: String, Sendable {
    /// gzip (RFC 1952): 1f 8b. Inflated by zlib (`GzipInflater`).
    case gzip
    /// Zstandard (RFC 8878): 28 b5 2f fd, or a skippable frame's 5? 2a 4d 18 first.
    /// Decoded by libzstd (`ZstdDecoder`).
    case zstd

    /// Bytes `sniff` needs to tell every format.
    static let magicLength = 4

    /// The format `bytes` start with; nil for anything else (plain text), or when `bytes` are
    /// fewer than `magicLength` and not a prefix of any magic.
    static func sniff(_ bytes: UnsafeRawBufferPointer) -> Compression? {
        if bytes.count >= 2 && bytes[0] == 0x1F && bytes[1] == 0x8B { return .gzip }
        guard bytes.count >= 4 else { return nil }
        if bytes[0] == 0x28 && bytes[1] == 0xB5 && bytes[2] == 0x2F && bytes[3] == 0xFD { return .zstd }
        if bytes[0] & 0xF0 == 0x50 && bytes[1] == 0x2A && bytes[2] == 0x4D && bytes[3] == 0x18 { return .zstd }
        return nil
    }

    /// Whether `bytes` (fewer than `magicLength`) could still be the start of a magic: the
    /// reader then reads on before deciding.
    static func couldStartMagic(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let magics: [[UInt8]] = [[0x1F, 0x8B], [0x28, 0xB5, 0x2F, 0xFD]]
        if magics.contains(where: { m in bytes.count < m.count && zip(bytes, m).allSatisfy { $0 == $1 } }) { return true }
        // A skippable frame: 5? 2a 4d 18.
        let skippable: [UInt8] = [0x2A, 0x4D, 0x18]
        return bytes.count < 4 && (bytes.isEmpty || bytes[0] & 0xF0 == 0x50) && zip(bytes.dropFirst(), skippable).allSatisfy { $0 == $1 }
    }

    /// A compressed or archive format that is not read, known by its magic: its name and the
    /// command that turns it into text, for an error that says what to do instead of calling
    /// it binary data. Nil for anything else.
    static func unreadFormat(_ bytes: UnsafeRawBufferPointer) -> (name: String, decompress: String)? {
        func starts(_ magic: [UInt8]) -> Bool { bytes.count >= magic.count && zip(bytes, magic).allSatisfy { $0 == $1 } }
        if starts([0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]) { return ("xz", "xz -dc") }
        if starts([0x5D, 0x00, 0x00]) && bytes.count >= 13 && (bytes[5..<13].allSatisfy { $0 == 0xFF } || bytes[12] == 0) {
            return ("lzma", "xz -dc")
        }
        // "BZh", a block size digit, and the first block's magic (pi's digits).
        if starts([0x42, 0x5A, 0x68]) && bytes.count >= 10 && (0x31...0x39).contains(bytes[3])
            && Array(bytes[4..<10]) == [0x31, 0x41, 0x59, 0x26, 0x53, 0x59]
        {
            return ("bzip2", "bzip2 -dc")
        }
        if starts([0x04, 0x22, 0x4D, 0x18]) { return ("lz4", "lz4 -dc") }
        // "LZIP" and version 1: the letters alone start text too (a device id).
        if starts([0x4C, 0x5A, 0x49, 0x50, 0x01]) { return ("lzip", "lzip -dc") }
        if starts([0x1F, 0x9D]) { return ("compress (.Z)", "gzip -dc") }
        if starts([0x50, 0x4B, 0x03, 0x04]) { return ("a zip archive", "unzip -p") }
        if starts([0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C]) { return ("a 7-Zip archive", "7z x -so") }
        return nil
    }

    /// The error for input in an unread format (`unreadFormat`). It does not name the input:
    /// the command that read it does (`fence: data.csv.xz: ...`).
    static func unreadFormatError(_ format: (name: String, decompress: String), line: Int? = nil) -> FenceError {
        let what = format.name.hasPrefix("a ") ? format.name : "\(format.name)-compressed data"
        return FenceError(
            .malformedInput, line: line,
            reason: "\(what), which is not read (gzip and zstd are): decompress it first, "
                + "e.g. `\(format.decompress) FILE | fence ...` with the input given as -")
    }

    /// `name` without a compressed file's ending (`.gz`, `.zst`, any case): the name of what
    /// it holds (`zones.geojson.gz` -> `zones.geojson`), for choosing a reader or naming a
    /// layer. Other names are returned as they are.
    static func strippingEnding(_ name: String) -> String {
        guard let c = Compression(ending: name) else { return name }
        return String(name.dropLast(c == .gzip ? 3 : 4))
    }

    /// The format a name's ending (`.gz`, `.zst`, any case) names; nil for any other name.
    /// Inputs go by their magic (`sniff`); output has only its name (`OutputEncoder`).
    init?(ending name: String) {
        let lower = name.lowercased()
        if lower.hasSuffix(".gz") {
            self = .gzip
        } else if lower.hasSuffix(".zst") {
            self = .zstd
        } else {
            return nil
        }
    }

    /// A fresh decoder for this format.
    func decoder() -> StreamDecoder {
        switch self {
        case .gzip: GzipInflater()
        case .zstd: ZstdDecoder()
        }
    }
}

/// A decoder of one compressed stream, fed piece by piece: `PositionReader` decodes into its
/// line buffer as it reads, `decodeAll` a whole document. Errors name the compressed byte where
/// they were found; what a call wrote before a fault is returned first and the fault thrown by
/// the next call, so nothing decoded is lost.
protocol StreamDecoder: AnyObject {
    /// Compressed bytes taken so far.
    var consumed: Int { get }
    /// Decoded bytes handed out so far.
    var produced: Int { get }
    /// Whether a fault was found and is held for the next `decode` or `finish` (which throws it
    /// without waiting for input).
    var hasPendingFault: Bool { get }

    /// Decodes from `input` into `output` until one is used up or no progress can be made;
    /// `input` may be empty, to take output the decoder still holds.
    /// - Returns: input bytes taken and output bytes written (both 0: it needs more input).
    /// - Throws: `malformedInput` for data that is not of the format or is corrupt.
    func decode(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(FenceError) -> (
        read: Int, written: Int
    )
    /// At the end of the input, once `decode` makes no more progress: refuses a stream that
    /// stops inside a member or frame (a truncated file).
    func finish() throws(FenceError)
}

/// Refuses a stream that keeps taking compressed bytes without giving output: no real stream
/// comes near `limit` (a deflate or zstd block gives output every few hundred KB at worst),
/// while endless empty blocks (a magic followed by `/dev/zero` reads as a zstd frame of empty
/// raw blocks) would otherwise be read forever. Each decoder keeps one and tells it of every
/// step.
struct SilenceGuard {
    static let limit = 64 << 20
    /// Compressed bytes taken when output last came.
    private var consumedAtOutput = 0

    /// After a step that left `consumed` bytes taken in all and gave `gave` bytes.
    /// - Throws: `malformedInput` once more than `limit` bytes gave nothing.
    mutating func step(consumed: Int, gave: Int, format: Compression) throws(FenceError) {
        if gave > 0 {
            consumedAtOutput = consumed
        } else if consumed - consumedAtOutput > Self.limit {
            throw FenceError(
                .malformedInput,
                reason: "the \(format.rawValue) data gives no output for \(consumed - consumedAtOutput) compressed bytes (from byte \(consumedAtOutput)): refused as endless")
        }
    }
}

/// A byte to point at where a buffer is empty: the C decoders want an address even for no bytes.
nonisolated(unsafe) let emptyInputByte = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)

/// A compressed document decoded as its pieces arrive, for inputs read whole (GeoJSON fences,
/// from a file or standard input). Decoding stops with an error when the text holds a NUL
/// byte (no JSON text has one: a bomb of zeros is refused at once), or once the decoded size
/// passes both `floor` (256 MiB) and `maxRatio` times the compressed size (deflate reaches
/// about 1,000 to 1, and Zstandard far more, only on repetitive filler; GeoJSON compresses
/// about 3 to 15 to 1). So standard input is never held whole in compressed form.
struct DocumentDecoding {
    let compression: Compression
    let refuseNUL: Bool
    var maxRatio = 100
    var floor = 256 << 20
    private let decoder: StreamDecoder
    private var chunk = [UInt8](repeating: 0, count: 1 << 20)
    private var taken = 0
    /// The decoded text so far.
    private(set) var text: [UInt8] = []

    init(_ compression: Compression, refuseNUL: Bool) {
        self.compression = compression
        self.refuseNUL = refuseNUL
        decoder = compression.decoder()
    }

    /// Decodes `input` (and what the decoder still holds, with an empty `input`).
    /// - Complexity: O(input + decoded bytes).
    mutating func feed(_ input: UnsafeRawBufferPointer) throws(FenceError) {
        var at = 0
        while true {
            let (read, written) = try chunk.withUnsafeMutableBytes { [decoder] buffer in
                Result { () throws(FenceError) in try decoder.decode(UnsafeRawBufferPointer(rebasing: input[at...]), into: buffer) }
            }.get()
            at += read
            taken += read
            if written > 0 {
                if refuseNUL && chunk[0..<written].contains(0) {
                    throw FenceError(
                        .malformedInput,
                        reason: "the decompressed \(compression.rawValue) data holds binary data (a NUL byte) within its first \(decoder.produced) bytes: it is not text")
                }
                text.append(contentsOf: chunk[0..<written])
                if text.count > floor && text.count / maxRatio > taken {
                    throw FenceError(
                        .malformedInput,
                        reason: "the \(compression.rawValue) data decompresses more than \(maxRatio) times (\(taken) compressed bytes gave \(text.count)): refused as a decompression bomb")
                }
            }
            if read == 0 && written == 0 {
                guard at == input.count else {
                    // No progress with input left and room to write: named, not looped on.
                    throw FenceError(.malformedInput, reason: "the \(compression.rawValue) data stops decoding at compressed byte \(taken)")
                }
                return
            }
        }
    }

    /// The whole text, once the input has ended; refuses a stream cut short.
    mutating func finish() throws(FenceError) -> [UInt8] {
        try feed(UnsafeRawBufferPointer(start: emptyInputByte, count: 0))
        try decoder.finish()
        return text
    }
}

extension Compression {
    /// The whole of a compressed document, decoded (`DocumentDecoding`).
    /// - Complexity: O(decoded bytes); memory: the decoded document.
    func decodeAll(
        _ compressed: UnsafeRawBufferPointer, refuseNUL: Bool, maxRatio: Int = 100, floor: Int = 256 << 20
    ) throws(FenceError) -> [UInt8] {
        var decoding = DocumentDecoding(self, refuseNUL: refuseNUL)
        decoding.maxRatio = maxRatio
        decoding.floor = floor
        try decoding.feed(compressed)
        return try decoding.finish()
    }
}
