import CGDAL
import FenceEngine
import Foundation

/// Fences from any vector source GDAL/OGR opens: GeoJSON, GeoJSONSeq, Shapefile, GeoPackage,
/// FlatGeobuf, CSV with a WKT column, a PostGIS connection (`PG:host=... dbname=...`), ...
///
/// Every layer is read (or the ones `FenceInputOptions.layers` names, in that order; else in
/// `readingOrder`: a folder's by name), one feature at a time.
/// Per feature: the settings come from the columns `FenceFields` names (OGR matches names
/// case-insensitively); without an id column, the FID is the id. A GeoJSON feature whose
/// columns lost what it holds (a null `id` property hides its own id; GDAL writes an object
/// id as text) has its id and group read from its own GeoJSON. The geometry is linearised
/// when it has curves, reprojected to WGS84 longitude/latitude when the layer's CRS differs
/// (`OGRReprojection`), checked against the fence limits from OGR's own counts, written as ISO
/// WKB (`OGR_G_ExportToIsoWkb`) and built by GEOS's WKB reader (`WKBShapeReader`): it never
/// travels as text. A Point with a radius becomes a circle (the radius is metres on the
/// ground, whatever the layer's units). Every other column is kept as a JSON property.
///
/// A feature that cannot become a fence is reported with its layer, number and FID; the rest
/// load. So is a driver that loses features on the way: one that fails and reads on, or a
/// layer that yields fewer features than it announces (`OGRLayerReader.reportEnd`).
/// Memory: the fences kept, plus one feature at a time as its driver reads it.
public enum OGRFences {
    /// Reads every selected layer of `source`.
    /// - Throws: when the source cannot be opened, a named layer does not exist, a named field
    ///   is missing from a layer, or a layer's CRS cannot be transformed to WGS84.
    public static func read(_ source: String, options: FenceInputOptions = FenceInputOptions()) throws(FenceError) -> FenceReadResult {
        try GDALErrorState.collecting { () throws(FenceError) in try readCollecting(source, options: options) }
    }

    /// A compressed file as GDAL's virtual file systems open it: `x.gz` as `/vsigzip/x.gz` (a
    /// gzip-compressed FlatGeobuf, CSV, GeoPackage, ...), `x.zip` as `/vsizip/x.zip` and
    /// `x.tar.gz` or `x.tar` as `/vsitar/...` (an archive of a Shapefile: every layer in it;
    /// GDAL 3.6 lists a `.tgz` only as one file, so that name is left as it is). Other
    /// sources, and paths already naming a virtual file system, are returned as they are.
    static func openablePath(_ source: String) -> String {
        guard !source.hasPrefix("/vsi") else { return source }
        let lower = source.lowercased()
        if lower.hasSuffix(".tar.gz") || lower.hasSuffix(".tar") { return "/vsitar/" + source }
        if lower.hasSuffix(".gz") { return "/vsigzip/" + source }
        if lower.hasSuffix(".zip") { return "/vsizip/" + source }
        return source
    }

    /// The order layers are read in when `--layer` names none, which decides, among fences of
    /// one id in several layers, the one the store keeps (the first). A folder's layers (a
    /// Shapefile each) by name, compared byte by byte in UTF-8: the driver lists them in the
    /// file system's directory order, which a copy of the folder or another machine need not
    /// share. Any other source's in the driver's order, which is the file's or database's own
    /// (a GeoPackage's `gpkg_contents`, an archive's listing) and the same wherever it is read.
    /// - Complexity: O(n log n) for n layers.
    static func readingOrder(_ layers: [OGRLayer], ofFolder: Bool) -> [OGRLayer] {
        guard ofFolder else { return layers }
        return layers.map { (Array($0.name.utf8), $0) }.sorted { $0.0.lexicographicallyPrecedes($1.0) }.map(\.1)
    }

    /// Whether `source` is a folder of the local file system (not a `/vsi...` path, which
    /// GDAL lists in the archive's order).
    static func isFolder(_ source: String) -> Bool {
        guard !source.hasPrefix("/vsi") else { return false }
        var info = stat()
        return stat(source, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    private static func readCollecting(_ source: String, options: FenceInputOptions) throws(FenceError) -> FenceReadResult {
        var openOptions = options.openOptions
        // A CSV's WKT column is the geometry, not an attribute to carry along.
        let isCSV = Compression.strippingEnding(source).lowercased().hasSuffix(".csv")
        if isCSV && !openOptions.contains(where: { $0.uppercased().hasPrefix("KEEP_GEOM_COLUMNS=") }) {
            openOptions.append("KEEP_GEOM_COLUMNS=NO")
        }
        // GDAL's GeoJSON driver keeps each feature's own GeoJSON when asked: where a column
        // cannot tell what a feature holds (a null "id" column hides the feature's id), its id
        // and group are read from it (`OGRLayerReader.nativeValue`). Measured on 50,000
        // polygons of 41 vertices: about 3% more time to read.
        if !openOptions.contains(where: { $0.uppercased().hasPrefix("NATIVE_DATA=") }), OGRDataset.identifiedDriver(openablePath(source)) == "GeoJSON" {
            openOptions.append("NATIVE_DATA=YES")
        }
        let dataset = try OGRDataset(opening: openablePath(source), openOptions: openOptions)
        let all = readingOrder(dataset.layers, ofFolder: isFolder(source))
        var layers: [OGRLayer] = []
        if options.layers.isEmpty {
            layers = all
        } else {
            for name in options.layers {
                guard let layer = dataset.layer(named: name) else {
                    let names = all.map(\.name).joined(separator: ", ")
                    throw FenceError(.malformedInput, reason: "\(dataset.displayName) has no layer \(name) (layers: \(names))")
                }
                layers.append(layer)
            }
        }
        if layers.isEmpty { throw FenceError(.malformedInput, reason: "\(dataset.displayName) has no vector layer") }
        var reader = OGRLayerReader(options: options)
        reader.geometryFromText = isCSV
        for layer in layers { try reader.read(layer) }
        return reader.result
    }
}
