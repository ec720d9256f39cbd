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
            throw FenceError(
                .malformedInput, reason: "cannot open \(displayName) as vector data: \(GDALErrorState.message ?? "no driver recognises it")")
        }
        // GDAL opens anyway, with a warning, when the driver has no such open option or the
        // value is not of its type: the option would be ignored, and the data read otherwise
        // than asked. Both warnings name the "open option".
        if !openOptions.isEmpty, let message = GDALErrorState.message, message.contains("open option") {
            GDALClose(raw)
            throw FenceError(.invalidSetting, reason: "\(displayName): --open-option not taken: \(message)")
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

    /// `source` with the value of any `password=` masked, for messages.
    static func masked(_ source: String) -> String {
        guard let range = source.range(of: "password=", options: .caseInsensitive) else { return source }
        var end = range.upperBound
        if end < source.endIndex, source[end] == "'" {
            end = source[source.index(after: end)...].firstIndex(of: "'").map { source.index(after: $0) } ?? source.endIndex
        } else {
            end = source[end...].firstIndex(where: { $0 == " " }) ?? source.endIndex
        }
        return String(source[..<range.upperBound]) + "***" + String(source[end...])
    }
}
