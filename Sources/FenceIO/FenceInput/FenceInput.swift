import FenceEngine
import Foundation

/// The fences of one source, with where each came from and every feature that was refused.
public struct FenceReadResult: Sendable {
    /// In reading order: layer by layer, feature by feature.
    public var fences: [Fence] = []
    /// `origins[i]` is where `fences[i]` came from.
    public var origins: [FeatureOrigin] = []
    /// Features that did not become fences, with their place and reason.
    public var rejected: [RejectedFeature] = []
    /// The layers read.
    public var layers: [String] = []
    /// The reader that did the work: `.native` or `.ogr`.
    public var reader: FenceInputOptions.Reader
    /// Whether a layer declared no CRS and was read in `FenceInputOptions.assumedCRS`.
    public var tookAssumedCRS = false
    /// How many parts of a GeoJSON `features` array the built-in reader read side by side
    /// (0: it read them on one thread; of a document with two `features` members, the last
    /// read side by side).
    public var parallelParts = 0

    public init(reader: FenceInputOptions.Reader) { self.reader = reader }

    /// Features seen: loaded and rejected.
    public var featureCount: Int { fences.count + rejected.count }

    /// The store's verdicts on these fences (one `FenceAddResult` per fence, in order, as
    /// `FenceStore.add` returns them) as rejections placed at their features. A repeated id
    /// (the store keeps the first) also says where the kept one is: `...; first in layer m,
    /// feature 1 (FID 0)`, or that the first was refused too: `...; first in layer m, feature 1
    /// (FID 0), itself refused: invalid-geometry` (then no fence of that id is kept).
    /// - Complexity: O(n); the first places of the ids are only looked up when an id repeats.
    public func rejections(from results: [FenceAddResult]) -> [RejectedFeature] {
        var firstPlace: [ExactID: Int]?
        return zip(origins, results).compactMap { origin, r in
            guard var error = r.error else { return nil }
            if error.kind == .duplicateID {
                if firstPlace == nil {
                    firstPlace = Dictionary(zip(fences.map { ExactID($0.id) }, origins.indices), uniquingKeysWith: { first, _ in first })
                }
                if let k = firstPlace?[ExactID(r.id)], origins[k] != origin {
                    error.reason += "; first in \(origins[k])"
                    if k < results.count, let refused = results[k].error { error.reason += ", itself refused: \(refused.kind.rawValue)" }
                }
            }
            return RejectedFeature(origin: origin, error: error)
        }
    }
}

/// Reads fences from any source: a GeoJSON or GeoJSONSeq file with the built-in reader,
/// anything else (a Shapefile, GeoPackage, FlatGeobuf, CSV with WKT, a `PG:` connection
/// string) through GDAL/OGR.
public enum FenceInput {
    /// Refuses a CRS definition (`FenceInputOptions.assumedCRS`, EPSG:n, WKT, PROJ, ...) that
    /// GDAL cannot read, with `invalid-setting`, before any source is opened: `read` checks it
    /// too, and the CLI calls this while reading its options, so that a typo is a usage error.
    public static func checkCRS(_ definition: String) throws(FenceError) {
        try OGRReprojection.checkAssumed(definition)
    }

    /// Reads `source` with the reader `options.reader` picks (see `FenceInputOptions.Reader`).
    /// A GeoJSON file that declares a CRS other than WGS84 goes to OGR under `.auto`, which
    /// reprojects it.
    /// - Throws: when the source as a whole cannot be read; single bad features are returned
    ///   in `rejected` instead.
    /// - Throws: `invalid-setting` when an option for OGR sources would be left unused: open
    ///   options for the built-in reader, an assumed CRS when every layer declares its own (a
    ///   GeoJSON file is WGS84 longitude/latitude unless its `crs` member says otherwise).
    public static func read(_ source: String, options: FenceInputOptions = FenceInputOptions()) throws(FenceError) -> FenceReadResult {
        if let assumed = options.assumedCRS { try OGRReprojection.checkAssumed(assumed) }
        let result = try readUnchecked(source, options: options)
        if result.reader == .native && !options.openOptions.isEmpty {
            throw FenceError(
                .invalidSetting,
                reason: "--open-option not taken: the built-in GeoJSON reader reads this source and takes "
                    + "no open options (--fence-reader ogr sends it through GDAL)")
        }
        if let assumed = options.assumedCRS, !result.tookAssumedCRS {
            throw FenceError(
                .invalidSetting,
                reason: "--fence-crs \(assumed) not taken: it is for layers that declare no CRS, and every "
                    + "layer read declares one (GeoJSON is WGS84 longitude/latitude unless its \"crs\" member says otherwise)")
        }
        return result
    }

    static func readUnchecked(_ source: String, options: FenceInputOptions) throws(FenceError) -> FenceReadResult {
        switch options.reader {
        case .native:
            return try checkLayers(GeoJSONFences.read(path: source, options: options), source: source, options: options)
        case .ogr:
            return try OGRFences.read(source, options: options)
        case .auto:
            guard usesNativeReader(source) else { return try OGRFences.read(source, options: options) }
            let (result, crs) = try GeoJSONFences.readDeclaringCRS(path: source, options: options)
            guard let crs, !GeoJSONFences.isLonLatWGS84(crs) else { return try checkLayers(result, source: source, options: options) }
            // A crs member the built-in reader cannot read (a link to follow, a type of no
            // meaning): OGR's GeoJSON driver would read what it cannot as WGS84, silently.
            guard source != "-", case .named(let name) = crs else { throw GeoJSONFences.refusal(declaring: crs) }
            // OGR reprojects from the declared CRS; its GeoJSON driver reads a CRS GDAL does
            // not know as WGS84, silently. Refuse that by name first (the caller names the
            // file, so the reason does not).
            try OGRReprojection.checkKnown(name, declaredBy: "the document")
            return try OGRFences.read(source, options: options)
        }
    }

    /// The built-in reader's one layer (named after the file) when `--layer` names it; else
    /// the refusal OGR gives for a layer a source lacks (`--layer` was ignored here).
    static func checkLayers(_ result: FenceReadResult, source: String, options: FenceInputOptions) throws(FenceError) -> FenceReadResult {
        guard !options.layers.isEmpty else { return result }
        let missing = options.layers.filter { !result.layers.contains($0) }
        guard missing.isEmpty else {
            throw FenceError(
                .malformedInput,
                reason: "\(source) has no layer \(missing.joined(separator: ", ")) (layers: \(result.layers.joined(separator: ", ")))")
        }
        return result
    }

    /// Standard input and files named `.geojson` or `.json`, or GeoJSONSeq's `.geojsonl` and
    /// `.geojsons` (compressed or not: `.geojson.gz`, `.geojsonl.zst`) go to the built-in
    /// reader under `.auto` (it reads them faster than OGR does, README "Fence loading", and
    /// keeps a GeoJSONSeq feature's id as written, where GDAL 3.6's GeoJSONSeq driver numbers
    /// features whose ids are not all integers), except through GDAL's virtual file systems
    /// (`/vsizip/...`).
    public static func usesNativeReader(_ source: String) -> Bool {
        if source == "-" { return true }
        // A pipe or a character device (`<(zcat zones.geojson)`, a named pipe): OGR's formats
        // need a file they can seek in; the built-in reader reads a stream.
        var info = stat()
        if !source.hasPrefix("/vsi"), stat(source, &info) == 0, (info.st_mode & S_IFMT) == S_IFIFO || (info.st_mode & S_IFMT) == S_IFCHR {
            return true
        }
        // GDAL's virtual file systems (/vsizip/, /vsicurl/, ...) only OGR can open.
        if source.hasPrefix("/vsi") { return false }
        let lower = Compression.strippingEnding(source).lowercased()
        return [".geojson", ".json", ".geojsonl", ".geojsons"].contains { lower.hasSuffix($0) }
    }
}

extension FenceInput {
    /// A source as it may appear in messages: the value of a connection string's `password=`
    /// is masked.
    public static func displayName(_ source: String) -> String { OGRDataset.masked(source) }
}

extension FenceInput {
    /// The GDAL release FenceIO runs on, e.g. "3.6.2" (printed with benchmark figures).
    public static var gdalVersion: String { GDALErrorState.version }
}
