import CGDAL
import FenceEngine

/// Fences from any vector source GDAL/OGR opens: GeoJSON, GeoJSONSeq, Shapefile, GeoPackage,
/// FlatGeobuf, CSV with a WKT column, a PostGIS connection (`PG:host=... dbname=...`), ...
///
/// Every layer is read (or the ones `FenceInputOptions.layers` names), one feature at a time.
/// Per feature: the settings come from the columns `FenceFields` names (OGR matches names
/// case-insensitively); without an id column, the FID is the id. The geometry is linearised
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

    private static func readCollecting(_ source: String, options: FenceInputOptions) throws(FenceError) -> FenceReadResult {
        var openOptions = options.openOptions
        // A CSV's WKT column is the geometry, not an attribute to carry along.
        let isCSV = Compression.strippingEnding(source).lowercased().hasSuffix(".csv")
        if isCSV && !openOptions.contains(where: { $0.uppercased().hasPrefix("KEEP_GEOM_COLUMNS=") }) {
            openOptions.append("KEEP_GEOM_COLUMNS=NO")
        }
        let dataset = try OGRDataset(opening: openablePath(source), openOptions: openOptions)
        var layers: [OGRLayer] = []
        if options.layers.isEmpty {
            layers = dataset.layers
        } else {
            for name in options.layers {
                guard let layer = dataset.layer(named: name) else {
                    let names = dataset.layers.map(\.name).joined(separator: ", ")
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
