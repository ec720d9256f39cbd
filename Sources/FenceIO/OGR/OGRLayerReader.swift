import CGDAL
import FenceEngine

/// The per-layer work of `OGRFences`, with the buffers it reuses across features.
struct OGRLayerReader {
    let options: FenceInputOptions
    /// The source is a CSV, whose geometry is the text of a WKT column.
    var geometryFromText = false
    let shapes: WKBShapeReader
    var wkb: [UInt8] = []
    var result = FenceReadResult(reader: .ogr)

    init(options: FenceInputOptions) {
        self.options = options
        shapes = WKBShapeReader(limits: options.limits.geometry)
    }

    mutating func read(_ layer: OGRLayer) throws(FenceError) {
        let layerName = layer.name
        result.layers.append(layerName)
        let fields = layer.fields
        let mapping = options.fields
        // Each role takes the first of its names the layer has (case-insensitively).
        var roles: [(FenceFields.Role, OGRField)] = []
        for role in FenceFields.Role.allCases {
            let found = mapping[role].lazy.compactMap { name in fields.first { $0.name.lowercased() == name.lowercased() } }.first
            if let found {
                roles.append((role, found))
            } else if mapping.named.contains(role) {
                throw FenceError(
                    .malformedInput,
                    reason: "layer \(layerName) has no field \"\(mapping[role][0])\" (named for the \(role.rawValue)); its fields: "
                        + (fields.isEmpty ? "none" : fields.map(\.name).joined(separator: ", ")))
            }
        }
        let hasIDField = roles.contains { $0.0 == .id }
        let settingNames = Set(mapping.allNames.map { $0.lowercased() })
        let propertyFields = fields.filter { !settingNames.contains($0.name.lowercased()) }
        let reprojection = try OGRReprojection.forLayer(layer.spatialReference, assumed: options.assumedCRS)
        let limits = options.limits.geometry

        layer.resetReading()
        var index = 0
        while true {
            GDALErrorState.reset()
            guard let feature = layer.nextFeature() else {
                if GDALErrorState.failed {
                    // The driver stopped (a damaged file, a lost connection): say so, keep the rest.
                    let origin = FeatureOrigin(layer: layerName, index: index + 1)
                    let reason = "reading stopped after feature \(index): \(GDALErrorState.message ?? "no message from GDAL")"
                    result.rejected.append(RejectedFeature(origin: origin, error: FenceError(.malformedInput, line: index + 1, reason: reason)))
                }
                break
            }
            index += 1
            let readMessage = GDALErrorState.message
            let origin = FeatureOrigin(layer: layerName, index: index, fid: feature.fid)
            var name = "#\(index)"
            func reject(_ e: FenceError) {
                result.rejected.append(RejectedFeature(origin: origin, error: FenceError(e.kind, fence: name, line: index, reason: e.reason)))
            }

            var settings = FenceSettings()
            var errors: [FenceFields.Role: FenceError] = [:]
            for (role, field) in roles {
                if let value = feature.attribute(field), let e = settings.set(role, value) { errors[role] = e }
            }
            // The FID stands in for the id only in a layer without an id column: a null id in
            // a column of ids is a fault, not a reason to make one up.
            if settings.id == nil, !hasIDField, let fid = feature.fid { settings.id = String(fid) }
            guard let id = settings.id, !id.isEmpty else {
                let names = mapping.id.map { "\"\($0)\"" }.joined(separator: " or ")
                reject(FenceError(.missingID, reason: hasIDField ? "the feature's id (field \(names)) is empty" : "the feature has no id (no field \(names) and no FID)"))
                continue
            }
            name = id
            guard let borrowed = feature.geometry, !OGRGeometry.isEmpty(borrowed) else {
                reject(FenceError(.emptyGeometry, reason: noGeometryReason(feature, message: readMessage)))
                continue
            }
            if let e = errors[.coord] {
                reject(e)
                continue
            }
            let type = OGRGeometry.flatType(borrowed)
            var radius: Double?
            if type == wkbPoint {
                if let e = errors[.radius] {
                    reject(e)
                    continue
                }
                guard let r = settings.radius else {
                    let names = mapping.radius.map { "\"\($0)\"" }.joined(separator: " or ")
                    reject(FenceError(.invalidRadius, reason: "a Point fence needs a radius in metres (field \(names))"))
                    continue
                }
                radius = r
            }
            // Limits from OGR's counts, before any copy of the coordinates.
            let size = OGRGeometry.size(borrowed)
            if size.polygons > limits.maxPolygons {
                reject(FenceError(.limitExceeded, reason: "\(size.polygons) polygons exceed the limit of \(limits.maxPolygons)"))
                continue
            }
            if size.positions > limits.maxPositions {
                reject(FenceError(.limitExceeded, reason: "\(size.positions) positions exceed the limit of \(limits.maxPositions)"))
                continue
            }
            // Copies OGR makes for us are kept alive until the WKB is written.
            var geometry = borrowed
            let linear = OGRGeometry.linearised(geometry)
            if let linear { geometry = linear.raw }
            var projected: OGROwnedGeometry?
            if let reprojection {
                let made: OGROwnedGeometry
                do throws(FenceError) {
                    made = try reprojection.apply(geometry)
                } catch {
                    reject(error)
                    continue
                }
                projected = made
                geometry = made.raw
            }
            guard let count = OGRGeometry.isoWKB(geometry, into: &wkb) else {
                reject(FenceError(.malformedInput, reason: "OGR could not write the \(OGRGeometry.typeName(geometry)) as WKB"))
                continue
            }
            withExtendedLifetime((linear, projected)) {}
            let shape: FenceShape
            do throws(FenceError) {
                shape = try wkb.withUnsafeBytes { raw in
                    Result { () throws(FenceError) in try shapes.shape(UnsafeRawBufferPointer(rebasing: raw[0..<count]), radius: radius) }
                }.get()
            } catch {
                reject(error)
                continue
            }
            if let e = [FenceFields.Role.group, .actions, .dwell, .expires].lazy.compactMap({ errors[$0] }).first {
                reject(e)
                continue
            }
            var properties: [String: String] = [:]
            // A null column is an absent property, as a GeoJSON feature without it.
            for field in propertyFields where feature.isSet(field) { properties[field.name] = feature.json(field) }
            result.fences.append(settings.fence(id: id, shape: shape, defaultCoord: options.coord, properties: properties))
            result.origins.append(origin)
        }
    }

    /// Why a feature has no usable geometry, in words: an empty one, one the driver could not
    /// read (with its message), or none at all. OGR's CSV driver reads a WKT cell it cannot
    /// parse as no geometry, without a message: for a CSV source the words say so.
    func noGeometryReason(_ feature: OGRFeature, message: String?) -> String {
        if feature.geometry != nil { return "the feature's geometry is empty" }
        if let message { return "the feature's geometry could not be read (\(message))" }
        if geometryFromText { return "the feature has no geometry: its WKT cell is empty or is not geometry OGR can read" }
        return "the feature has no geometry"
    }
}
