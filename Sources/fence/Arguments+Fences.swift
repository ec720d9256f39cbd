import FenceEngine
import FenceIO

extension Arguments {
    /// The options of every command that reads `--fences`: the reader, layers, open options,
    /// CRS, field mapping and input limits.
    static let fenceOptions: Set<String> = [
        "fences", "fence-reader", "layer", "open-option", "fence-crs", "id-field", "group-field", "radius-field", "coord-field",
        "actions-field", "dwell-field", "expires-field", "max-fence-positions", "max-fence-polygons", "max-json-nesting",
    ]

    /// Their help text, shared by the commands.
    static let fenceHelp = """
        Fences (--fences SOURCE): a GeoJSON or GeoJSONSeq file ("-" for standard input) or any
        vector source GDAL/OGR opens: Shapefile, GeoPackage, FlatGeobuf, CSV with a WKT column,
        PostGIS ("PG:host=... dbname=..."), ... Polygons and MultiPolygons are fences, Points
        with a radius (metres) circles; layers in another CRS are reprojected to WGS84. Gzip
        files (zones.geojson.gz, zones.fgb.gz), zstd GeoJSON (zones.geojson.zst) and zip or
        tar archives (a Shapefile's files) are read as they are.
          --fence-reader R      auto (default: .geojson/.json/.geojsonl/.geojsons/stdin
                                built in, the rest OGR), native or ogr
          --layer NAMES         OGR layers to read, comma-separated (default: all)
          --open-option K=V     GDAL open option (as ogr2ogr -oo); may repeat
          --fence-crs CRS       CRS of layers that declare none (e.g. EPSG:32632; default WGS84)
          --id-field NAME       field or property holding the fence id (default id, else the
                                feature id / FID)
          --group-field NAME    ... the group (default group, customID)
          --radius-field NAME   ... the radius of Point fences in metres (default radius)
          --coord-field NAME    ... wgs84, gcj02 or bd09ll (default coord, coordType)
          --actions-field NAME  ... the events to report (default actions)
          --dwell-field NAME    ... the dwell in seconds (default dwell)
          --expires-field NAME  ... the expiry, epoch seconds or ISO 8601 (default expires)
          --max-fence-positions N  most positions in one fence (default 1000000)
          --max-fence-polygons N   most polygons in one MultiPolygon (default 100000)
          --max-json-nesting N     deepest nesting of a GeoJSON property value (default 64)
        A feature that cannot be a fence is reported with its layer, number (and FID) and the
        reason; the others load, and the exit status is 1.
        """

    /// `FenceInputOptions` from the fence options.
    func fenceInputOptions() throws(UsageError) -> FenceInputOptions {
        var o = FenceInputOptions()
        if let r = values["fence-reader"] {
            guard let reader = FenceInputOptions.Reader(rawValue: r) else { throw UsageError("--fence-reader must be auto, native or ogr") }
            o.reader = reader
        }
        o.layers = try names("layer", trimming: false) ?? []
        o.openOptions = lists["open-option"] ?? []
        for option in o.openOptions where !option.contains("=") { throw UsageError("--open-option takes KEY=VALUE, got \(option)") }
        o.assumedCRS = values["fence-crs"]
        if let crs = o.assumedCRS {
            do { try FenceInput.checkCRS(crs) } catch { throw UsageError("--fence-crs: \(error.reason)") }
        }
        let roles: [(String, FenceFields.Role)] = [
            ("id-field", .id), ("group-field", .group), ("radius-field", .radius), ("coord-field", .coord),
            ("actions-field", .actions), ("dwell-field", .dwell), ("expires-field", .expires),
        ]
        for (option, role) in roles {
            guard let name = values[option] else { continue }
            guard !name.isEmpty else { throw UsageError("--\(option) needs a field name") }
            o.fields.set(role, to: name)
        }
        o.limits.geometry.maxPositions = try int("max-fence-positions", default: o.limits.geometry.maxPositions, range: 4...1_000_000_000)
        o.limits.geometry.maxPolygons = try int("max-fence-polygons", default: o.limits.geometry.maxPolygons, range: 1...1_000_000_000)
        o.limits.maxNesting = try int("max-json-nesting", default: o.limits.maxNesting, range: 1...100_000)
        o.threads = try int("threads", default: FenceStore.defaultThreads, range: 1...1024)
        return o
    }
}
