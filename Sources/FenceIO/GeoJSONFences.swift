import FenceEngine
import Foundation

/// Fences from a GeoJSON FeatureCollection, a single Feature, or a GeoJSON text sequence of
/// Features (RFC 8142 RS-separated, or one per line: `GeoJSONDocument+Sequence`), read by the
/// built-in parser:
/// Polygon and MultiPolygon features, and Point features with a radius (metres) as circles.
///
/// Settings come from the properties `FenceFields` names (by default `id`, else the feature's
/// `id`; `group` or `customID`; `radius`; `coord` or `coordType`; `actions` as a comma list or
/// an array; `dwell` in seconds; `expires` as epoch seconds or ISO 8601). Every other property
/// is kept as its JSON text, white space between tokens removed. A feature that cannot become
/// a fence is reported with its number and id, and the others load; so is one that gives a
/// key twice (any property, or a member the reader reads: `FeatureDraft.repeated`). What
/// reading can tell: no id, no or another geometry, a Point without a radius, a setting that
/// does not read. Shapes (rings, self-intersections, coordinates in range), radii and
/// duplicate ids are checked when the fences are added (`FenceStore.add`), whose results
/// `FenceReadResult.rejections(from:)` names by feature.
///
/// The parser reads the bytes in place (a file is memory-mapped), builds nothing for what it
/// skips and never recurses on the input's nesting; `FenceInputLimits` bounds what one feature
/// can cost. A syntax error anywhere refuses the whole document, with its line and column.
/// When `FenceInputOptions.parallelMinimumBytes` (4 MiB) or more lie between a `features`
/// array's start and the document's end, the array is cut into parts by one quick pass over
/// its bytes and the parts are parsed on `options.threads` workers: the result is the one
/// thread's, feature for feature (`FeatureSplit`).
public enum GeoJSONFences {
    public struct Report: Sendable {
        public var fences: [Fence]
        /// Per feature refused while reading (see the type's comment for what the store's
        /// `add` checks after): `line` is the feature's 1-based number in the collection, not
        /// a line of the text, though `FenceError`'s description prints it as "line N".
        public var errors: [FenceError]
    }

    /// Reads a whole document with the default fields and limits.
    /// - Throws: when the document as a whole is not GeoJSON (not JSON, no features).
    public static func read(_ data: Data, coord: CoordinateSystem = .wgs84) throws(FenceError) -> Report {
        var options = FenceInputOptions()
        options.coord = coord
        let result = try read(data, layer: "stdin", options: options)
        return Report(fences: result.fences, errors: result.rejected.map { $0.error })
    }

    /// Reads a file ("-" is standard input) with the default fields and limits.
    public static func read(path: String, coord: CoordinateSystem = .wgs84) throws(FenceError) -> Report {
        var options = FenceInputOptions()
        options.coord = coord
        let result = try read(path: path, options: options)
        return Report(fences: result.fences, errors: result.rejected.map { $0.error })
    }

    /// Reads a file ("-" is standard input); the layer is named after the file.
    /// - Throws: when the file cannot be read or is not GeoJSON as a whole, and when it
    ///   declares a CRS other than WGS84 longitude/latitude (OGR reprojects those).
    /// - Complexity: O(bytes + positions); memory: the mapped file and the fences kept.
    public static func read(path: String, options: FenceInputOptions) throws(FenceError) -> FenceReadResult {
        let (result, crs) = try readDeclaringCRS(path: path, options: options)
        try refuseUnlessLonLat(crs)
        return result
    }

    /// Reads a document held in memory with its `crs` member taken as `read(path:options:)`
    /// takes a file's: none, or WGS84 longitude/latitude in a form GDAL reads (`EPSG:4326`,
    /// `urn:ogc:def:crs:OGC:1.3:CRS84`, `{"type":"EPSG","properties":{"code":4326}}`, ...), is
    /// read; any other CRS, or a member the reader cannot read, refuses the whole document. For
    /// a document nothing will reproject (a fence change in a stream), where metres read as
    /// degrees would go unnoticed. `read(_:layer:options:)` does not look at the member.
    /// - Parameter wayOn: what the refusal says to do instead; the file reader's names OGR
    ///   (`--fence-reader ogr`), which such a caller does not offer.
    /// - Throws: what `read(_:layer:options:)` throws, and the refusal (`malformedInput`).
    /// - Complexity: that of `read(_:layer:options:)`: the member is read where it stands.
    public static func readLonLat(_ data: Data, layer: String, options: FenceInputOptions, wayOn: String) throws(FenceError)
        -> FenceReadResult
    {
        let (result, crs) = try parse(data, layer: layer, options: options)
        try refuseUnlessLonLat(crs, wayOn: wayOn)
        return result
    }

    /// Throws `refusal` for a declared CRS other than WGS84 longitude/latitude (nil: none).
    static func refuseUnlessLonLat(_ crs: DeclaredCRS?, wayOn: String? = nil) throws(FenceError) {
        if let crs, !isLonLatWGS84(crs) { throw refusal(declaring: crs, wayOn: wayOn) }
    }

    /// Reads a file as `read(path:options:)` does, with the CRS it declares (nil: none)
    /// whatever that is, for the caller to decide.
    static func readDeclaringCRS(path: String, options: FenceInputOptions) throws(FenceError) -> (result: FenceReadResult, crs: DeclaredCRS?) {
        let data = try readDocument(path: path)
        let layer = path == "-" ? "stdin" : URL(fileURLWithPath: Compression.strippingEnding(path)).deletingPathExtension().lastPathComponent
        return try parse(data, layer: layer, options: options)
    }

    /// A GeoJSON document's bytes: a file (mapped, not copied), or standard input for "-"
    /// (`readStandardInput`). The one read of a GeoJSON file, for fences and for the fence
    /// changes `fence change --add` publishes. Compressed data (gzip or Zstandard, known by
    /// its magic, whatever the name) is decoded in memory (`Compression.decodeAll`).
    /// - Throws: `malformedInput` naming the file and the system's reason, or what is wrong
    ///   with its compressed data.
    public static func readDocument(path: String) throws(FenceError) -> Data {
        if path == "-" { return try readStandardInput() }
        let data = try readFile(path: path)
        let outcome = data.withUnsafeBytes { raw -> Result<Data?, FenceError> in
            guard let compression = Compression.sniff(raw) else {
                if let unread = Compression.unreadFormat(raw) { return .failure(Compression.unreadFormatError(unread)) }
                return .success(nil)
            }
            return Result { () throws(FenceError) in Data(try compression.decodeAll(raw, refuseNUL: true)) }
        }
        switch outcome {
        case .success(let decoded?): return decoded
        case .success(nil): return data
        case .failure(let e): throw e
        }
    }

    /// A file's bytes as stored, mapped; a pipe's or device's (`<(zcat f.geojson)`, a named
    /// pipe), which cannot be mapped, read as standard input is (`readStream`).
    private static func readFile(path: String) throws(FenceError) -> Data {
        // Foundation names a folder only as "NSCocoaErrorDomain error 256".
        var info = stat()
        let type = stat(path, &info) == 0 ? info.st_mode & S_IFMT : nil
        // The C library's words ("No such file or directory", "Permission denied"), as for
        // positions; Foundation's are longer and curly-quoted.
        if type == nil { throw FenceError(.malformedInput, reason: "cannot read \(path): \(String(cString: strerror(errno)))") }
        if type == S_IFDIR {
            throw FenceError(.malformedInput, reason: "cannot read \(path): it is a directory, not a GeoJSON file")
        }
        if type != S_IFREG {
            let fd = open(path, O_RDONLY)
            guard fd >= 0 else { throw FenceError(.malformedInput, reason: "cannot read \(path): \(String(cString: strerror(errno)))") }
            defer { close(fd) }
            return try readStream(fd, name: path)
        }
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
        } catch {
            throw FenceError(.malformedInput, reason: "cannot read \(path): \(error.localizedDescription)")
        }
    }

    /// All of standard input (`readStream`).
    static func readStandardInput() throws(FenceError) -> Data { try readStream(0, name: "standard input") }

    /// All of a stream, read with `read(2)` (and decoded as it arrives when it is
    /// compressed): Foundation's `readDataToEndOfFile` traps
    /// when standard input is closed or a directory. Reading stops at the first chunk that
    /// cannot be the start of a GeoJSON document (its first byte past white space and a byte
    /// order mark is not `{`, or RS for a GeoJSON text sequence) or that holds a NUL byte, which no JSON text has: `< /dev/zero`
    /// is refused at once instead of filling memory.
    /// - Throws: `malformedInput` with the system's reason, or why it is not GeoJSON.
    /// - Complexity: O(bytes); memory: the whole document.
    static func readStream(_ fd: Int32, name: String) throws(FenceError) -> Data {
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        var started = false
        var decoding: DocumentDecoding?
        var head: [UInt8] = []
        while true {
            let n = chunk.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress!, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw FenceError(.malformedInput, reason: "cannot read \(name): \(String(cString: strerror(errno)))")
            }
            if n == 0 && head.isEmpty {
                if var decoding { return Data(try decoding.finish()) }
                return data
            }
            // The first bytes, held while they could still be a compression magic (a pipe may
            // bring them one read at a time).
            var bytes = ArraySlice(chunk[0..<n])
            if !started && data.isEmpty && decoding == nil && (n > 0 || !head.isEmpty) {
                head += bytes
                let undecided = n > 0 && head.count < Compression.magicLength && head.withUnsafeBytes { Compression.couldStartMagic($0) }
                if undecided { continue }
                bytes = ArraySlice(head)
                head = []
                // Compressed data (gzip's or Zstandard's magic; no JSON text starts with
                // either): decoded as it arrives, under the NUL, bomb and endless checks.
                if let compression = bytes.withUnsafeBytes({ Compression.sniff($0) }) {
                    decoding = DocumentDecoding(compression, refuseNUL: true)
                } else if let unread = bytes.withUnsafeBytes({ Compression.unreadFormat($0) }) {
                    throw Compression.unreadFormatError(unread)
                }
            }
            if decoding != nil {
                try bytes.withUnsafeBytes { raw in Result { () throws(FenceError) in try decoding!.feed(raw) } }.get()
                continue
            }
            if bytes.isEmpty { continue }
            if bytes.contains(0) {
                throw FenceError(.malformedInput, reason: "\(name) holds binary data (a NUL byte): it is not GeoJSON")
            }
            if !started {
                let whiteSpace: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF]
                if let first = bytes.first(where: { !whiteSpace.contains($0) }) {
                    // `{`, or the RS that starts each record of a GeoJSON text sequence.
                    guard first == UInt8(ascii: "{") || first == JSONScanner.recordSeparator else {
                        throw FenceError(.malformedInput, reason: "\(name) is not a GeoJSON document (it does not start with {)")
                    }
                    started = true
                }
            }
            data.append(contentsOf: bytes)
        }
    }

    /// The refusal of a document that declares a CRS other than WGS84 longitude/latitude, or a
    /// `crs` member the reader cannot read. It does not name the file: the caller does (the
    /// CLI's messages named it twice). `wayOn`, when given, replaces what it says to do (read
    /// it through OGR, or the member's hint).
    static func refusal(declaring crs: DeclaredCRS, wayOn: String? = nil) -> FenceError {
        switch crs {
        case .named(let name):
            return FenceError(
                .malformedInput,
                reason: "the document declares the CRS \(name); the built-in reader takes WGS84 longitude/latitude only "
                    + "(\(wayOn ?? "read it through OGR to reproject"))")
        case .unreadable(let what, let hint):
            return FenceError(
                .malformedInput,
                reason: "the document has \(what), which the built-in reader cannot read (it reads a \"name\", an \"EPSG\" code, an \"OGC\" urn "
                    + "and links to WGS84); \(wayOn ?? hint)")
        }
    }

    /// Reads a document held in memory.
    public static func read(_ data: Data, layer: String, options: FenceInputOptions) throws(FenceError) -> FenceReadResult {
        try parse(data, layer: layer, options: options).result
    }

    /// Whether a GeoJSON `crs` (2008 GeoJSON) means WGS84 longitude/latitude: CRS84 and EPSG
    /// 4326 in their URN, URI and short spellings, and the name `WGS84` (`WGS 84`, `wgs_84`,
    /// `WGS1984`), as GDAL reads it. GeoJSON wrote EPSG:4326 longitude first.
    static func isLonLatWGS84(_ crs: DeclaredCRS) -> Bool {
        guard case .named(let name) = crs else { return false }
        let n = name.uppercased()
        let bare = n.filter { $0 != " " && $0 != "_" && $0 != "-" }
        return n.hasSuffix("CRS84") || n.hasSuffix("CRS:84") || n.hasSuffix("EPSG::4326") || n == "EPSG:4326"
            || n.hasSuffix("/EPSG/0/4326") || bare == "WGS84" || bare == "WGS1984"
    }

    /// The fences of a document and the name of its `crs` member, if it has one.
    static func parse(_ data: Data, layer: String, options: FenceInputOptions) throws(FenceError) -> (result: FenceReadResult, crs: DeclaredCRS?) {
        let outcome = data.withUnsafeBytes { raw -> Result<(FenceReadResult, DeclaredCRS?), FenceError> in
            let bytes = raw.bindMemory(to: UInt8.self)
            var document = GeoJSONDocument(scanner: JSONScanner(bytes), layer: layer, options: options)
            do {
                try document.read()
                return .success((document.result, document.crs))
            } catch let failure as JSONScanner.Failure {
                // UTF-16, and a document that stops inside a value (a download cut short), are
                // named as such.
                if let utf16 = TextProblem.utf16(bytes, reads: "GeoJSON is") { return .failure(FenceError(.malformedInput, reason: utf16)) }
                func blank(_ b: UInt8) -> Bool { b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 }
                // Nothing but white space: no place in it to name, and nothing was cut short.
                if bytes.allSatisfy(blank) {
                    return .failure(FenceError(.malformedInput, reason: bytes.isEmpty ? "the document is empty" : "the document is empty (white space only)"))
                }
                let (line, column) = document.scanner.lineAndColumn(failure.offset)
                var reason = "not valid JSON: \(failure.message) at line \(line), column \(column)"
                if bytes[min(failure.offset, bytes.count)...].allSatisfy(blank), failure.offset > 0 {
                    reason += ", where the document ends: it is cut short (truncated?)"
                }
                return .failure(FenceError(.malformedInput, reason: reason))
            } catch let e as FenceError {
                return .failure(e)
            } catch {
                return .failure(FenceError(.malformedInput, reason: "\(error)"))
            }
        }
        return try outcome.get()
    }
}
