import CGDAL
import Foundation
import FenceEngine

/// GDAL's messages for the calling thread. While `collecting` runs, GDAL's printer is silent
/// and its warnings and errors are collected (`CGDAL_pushCollector`) to be read back here.
enum GDALErrorState {
    /// Runs `body` with GDAL's messages collected on this thread instead of printed.
    static func collecting<T>(_ body: () throws(FenceError) -> T) throws(FenceError) -> T {
        let messages = UnsafeMutablePointer<CGDALMessages>.allocate(capacity: 1)
        CGDAL_pushCollector(messages)
        defer {
            CGDAL_popErrorHandler()
            messages.deallocate()
        }
        return try body()
    }

    static func reset() { CGDAL_resetMessages() }

    /// The warnings and errors since `reset()`, joined with "; ", if any.
    static var message: String? { CGDAL_collectedMessages().map { String(cString: $0) } }

    /// Whether the last error since `reset()` was a failure (not just a warning).
    static var failed: Bool { CPLGetLastErrorType().rawValue >= CE_Failure.rawValue }

    /// GDAL's release name, e.g. "3.6.2".
    static var version: String { String(cString: CGDAL_version()) }
}

/// An open GDAL vector dataset (`GDALOpenEx`), read-only, closed with `GDALClose` when released.
final class OGRDataset {
    let raw: GDALDatasetH
    /// The source as it may be shown: a connection string's password is masked.
    let displayName: String

    private static let registered: Void = GDALAllRegister()

    /// The unread compressed format (xz, bzip2, ...) a file no driver opened starts with, if
    /// any: GDAL would only say it does not recognise it.
    private static func unreadFormat(ofFile path: String) -> (name: String, decompress: String)? {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var s = stat()
        guard fstat(fd, &s) == 0, (s.st_mode & S_IFMT) == S_IFREG else { return nil }
        var head = [UInt8](repeating: 0, count: 16)
        let n = head.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
        guard n > 0 else { return nil }
        return head.withUnsafeBytes { Compression.unreadFormat(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
    }

    /// Opens `source` (a path, a `PG:` connection string, any GDAL vector source).
    /// - Parameter openOptions: `KEY=VALUE` driver open options (as `ogr2ogr -oo`).
    init(opening source: String, openOptions: [String]) throws(FenceError) {
        _ = Self.registered
        displayName = Self.masked(source)
        var list: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        for option in openOptions { list = CSLAddString(list, option) }
        // "papszOpenOptions: ... The list is copied": the CSL list stays ours to free.
        defer { CSLDestroy(list) }
        GDALErrorState.reset()
        guard let raw = CGDAL_openVector(Self.openable(source), list) else {
            if let unread = Self.unreadFormat(ofFile: source) {
                // GDAL reads zip archives, by their name (`.zip`, or `/vsizip/`).
                guard unread.name != "a zip archive" else {
                    throw FenceError(.malformedInput, reason: "a zip archive, which GDAL opens by its name: name it .zip, or give /vsizip/\(displayName)/MEMBER")
                }
                throw Compression.unreadFormatError(unread)
            }
            throw FenceError(
                .malformedInput, reason: "cannot open \(displayName) as vector data: \(Self.masked(GDALErrorState.message ?? "no driver recognises it"))")
        }
        // GDAL opens anyway, with a warning, when the driver has no such open option or the
        // value is not of its type: the option would be ignored, and the data read otherwise
        // than asked. Both warnings name the "open option".
        if !openOptions.isEmpty, let message = GDALErrorState.message, message.contains("open option") {
            GDALClose(raw)
            // The source is not named: the caller names it (the CLI's messages named it twice).
            throw FenceError(.invalidSetting, reason: "--open-option not taken: \(message)")
        }
        self.raw = raw
    }

    deinit {
        // "GDALClose: ... this closes the dataset and frees all resources", its layers included.
        GDALClose(raw)
    }

    /// The driver's short name ("ESRI Shapefile", "GPKG", "PostgreSQL", ...).
    var driverName: String {
        guard let driver = GDALGetDatasetDriver(raw), let name = GDALGetDriverShortName(driver) else { return "?" }
        return String(cString: name)
    }

    /// Every layer, in the dataset's order.
    var layers: [OGRLayer] {
        (0..<Int(GDALDatasetGetLayerCount(raw))).compactMap { i in
            GDALDatasetGetLayer(raw, Int32(i)).map { OGRLayer(dataset: self, raw: $0) }
        }
    }

    /// The layer of that name (for PostGIS also `schema.table`), or nil.
    func layer(named name: String) -> OGRLayer? {
        GDALDatasetGetLayerByName(raw, name).map { OGRLayer(dataset: self, raw: $0) }
    }

    /// The short name of the driver that would open `source` (`GDALIdentifyDriverEx`, which
    /// reads no more than the file's start), nil when none would.
    static func identifiedDriver(_ source: String) -> String? {
        _ = registered
        guard let driver = GDALIdentifyDriverEx(openable(source), UInt32(GDAL_OF_VECTOR), nil, nil), let name = GDALGetDriverShortName(driver) else {
            return nil
        }
        return String(cString: name)
    }

    /// `source` as GDAL is to open it: a `.geojsonl` or `.geojsons` file is named for the
    /// GeoJSONSeq driver (`GeoJSONSeq:` prefix, which also takes `/vsi...` paths and URLs).
    /// GDAL 3.6 chooses by content otherwise, and hands a sequence whose second line is not a
    /// Feature (a malformed line) to its GeoJSON driver, which reads the first object and
    /// ignores the rest without a word. GeoJSONSeq reads on past a line it cannot parse and
    /// reports it (a CPLError on the next feature; `OGRLayerReader` passes it on).
    static func openable(_ source: String) -> String {
        let lower = source.lowercased()
        guard lower.hasSuffix(".geojsonl") || lower.hasSuffix(".geojsons"), !lower.hasPrefix("geojsonseq:") else { return source }
        return "GeoJSONSeq:" + source
    }

    /// `source` with every password in it masked, for messages: the value of each `password`
    /// keyword (libpq's `password=secret` or `password = 'a b'`, a URI's `?password=secret`)
    /// and the password of each URI's user information (`postgresql://user:secret@host`).
    /// - Complexity: O(n) for n characters.
    static func masked(_ source: String) -> String {
        let text = Array(source)
        var out: [Character] = []
        out.reserveCapacity(text.count)
        var i = 0
        func matches(_ word: String, at k: Int) -> Bool {
            var k = k
            for c in word {
                guard k < text.count, text[k].lowercased() == String(c) else { return false }
                k += 1
            }
            return true
        }
        while i < text.count {
            // A keyword: `password`, optional blanks, `=`, optional blanks, then the value.
            if matches("password", at: i), i == 0 || !(text[i - 1].isLetter || text[i - 1].isNumber || text[i - 1] == "_") {
                var k = i + 8
                while k < text.count, text[k] == " " || text[k] == "\t" { k += 1 }
                if k < text.count, text[k] == "=" {
                    k += 1
                    while k < text.count, text[k] == " " || text[k] == "\t" { k += 1 }
                    out += text[i..<k]
                    out += "***"
                    if k < text.count, text[k] == "'" {
                        // Quoted: up to the closing quote (libpq escapes one inside with a backslash).
                        k += 1
                        while k < text.count, text[k] != "'" { k += text[k] == "\\" ? 2 : 1 }
                        i = min(k + 1, text.count)
                    } else {
                        while k < text.count, !(text[k] == " " || text[k] == "\t" || text[k] == "&" || text[k] == "#") { k += 1 }
                        i = k
                    }
                    continue
                }
            }
            // A URI's user information: `scheme://user:password@`, before any `/`, `?` or `#`.
            if text[i] == ":", i + 2 < text.count, text[i + 1] == "/", text[i + 2] == "/" {
                let start = i + 3
                var end = start
                while end < text.count, !"/?#@".contains(text[end]) { end += 1 }
                if end < text.count, text[end] == "@", let colon = text[start..<end].firstIndex(of: ":") {
                    out += text[i...colon]
                    out += "***"
                    i = end
                    continue
                }
            }
            out.append(text[i])
            i += 1
        }
        return String(out)
    }
}
