import CGDAL
import FenceEngine

/// The per-layer work of `OGRFences`, with the buffers it reuses across features.
struct OGRLayerReader {
    let options: FenceInputOptions
    /// The source is a CSV, whose geometry is the text of a WKT column.
    var geometryFromText = false
    /// The geometry columns of the layer being read.
    private var geometryColumns = 1
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
        geometryColumns = layer.geometryFieldCount
        let fields = layer.fields
        let mapping = options.fields
        // Each role's columns, in the order of its names (`column(named:)`); a feature takes
        // the first of them it has set, as a GeoJSON feature takes the first property it has (a
        // layer merged from features naming `group` and `customID` has both columns, each null
        // where the feature did not name it).
        var roles: [(FenceFields.Role, [OGRField])] = []
        for role in FenceFields.Role.allCases {
            var found: [OGRField] = []
            for name in mapping[role] {
                if let field = try Self.column(named: name, for: role, in: fields, layer: layerName) { found.append(field) }
            }
            if !found.isEmpty {
                roles.append((role, found))
            } else if mapping.named.contains(role) {
                throw FenceError(
                    .malformedInput,
                    reason: "layer \(layerName) has no field \"\(mapping[role][0])\" (named for the \(role.rawValue)); its fields: "
                        + (fields.isEmpty ? "none" : fields.map(\.name).joined(separator: ", ")))
            }
        }
        let hasIDField = roles.contains { $0.0 == .id }
        // The columns whose values a feature's own GeoJSON may correct (`nativeValue`).
        let nativeNames = Set(roles.filter { $0.0 == .id || $0.0 == .group }.flatMap { $0.1.map(\.name) })
        // A column that matches a setting's name only in case beside one that matches it
        // exactly (`ID` beside `id`) is a property, as the built-in reader keeps it.
        let settingColumns = Set(roles.flatMap { $0.1.map(\.index) })
        let propertyFields = fields.filter { !settingColumns.contains($0.index) }
        func quotedNames(_ role: FenceFields.Role) -> String {
            let read = roles.first { $0.0 == role }?.1.map(\.name) ?? mapping[role]
            return read.map { "\"\($0)\"" }.joined(separator: " or ")
        }
        let reprojection = try OGRReprojection.forLayer(layer.spatialReference, assumed: options.assumedCRS)
        // No CRS declared and none named: coordinates are taken as WGS84 degrees.
        let takenAsDegrees = layer.spatialReference == nil && options.assumedCRS == nil
        if layer.spatialReference == nil && options.assumedCRS != nil { result.tookAssumedCRS = true }
        let limits = options.limits.geometry

        let announced = layer.announcedFeatureCount
        layer.resetReading()
        var index = 0
        while true {
            GDALErrorState.reset()
            guard let feature = layer.nextFeature() else {
                reportEnd(of: layerName, read: index, announced: announced)
                break
            }
            index += 1
            let readMessage = GDALErrorState.message
            let origin = FeatureOrigin(layer: layerName, index: index, fid: feature.fid)
            if GDALErrorState.failed, let borrowed = feature.geometry, !OGRGeometry.isEmpty(borrowed) {
                reportSkip(before: origin, message: readMessage)
            }
            var name = "#\(index)"
            func reject(_ e: FenceError) {
                result.rejected.append(RejectedFeature(origin: origin, error: FenceError(e.kind, fence: name, line: index, reason: e.reason)))
            }

            var settings = FenceSettings()
            var errors: [FenceFields.Role: FenceError] = [:]
            // The feature's own GeoJSON as the built-in reader reads it, when the driver kept
            // it (GeoJSON) and a column cannot tell: read once, when first needed.
            var nativeDraft: FeatureDraft??
            func native() -> FeatureDraft? {
                if nativeDraft == nil { nativeDraft = .some(feature.nativeGeoJSON.flatMap { GeoJSONDocument.draft(ofFeature: $0, names: nativeNames) }) }
                return nativeDraft!
            }
            let idNamed = mapping.named.contains(.id)
            for (role, candidates) in roles {
                // A blank value (spaces or tabs, an empty cell) is not set: the next column is read.
                let set = candidates.lazy.compactMap { field in feature.attribute(field).map { (field, $0) } }.first { !$0.1.isBlank }
                guard let (field, found) = set else { continue }
                var value = found
                var fromFeatureID = false
                if role == .id || role == .group, Self.mayHideItsType(value, role: role) {
                    if let draft = native() {
                        if let found = Self.nativeValue(draft, column: field.name, featureID: role == .id && !idNamed) { (value, fromFeatureID) = found }
                    } else if case .list(let list) = value, list.count == 1 {
                        // GDAL makes a string beside arrays of strings a list of one: the string.
                        value = .text(list[0])
                    }
                }
                if let e = settings.set(role, value, from: fromFeatureID ? "the feature id" : "field \"\(field.name)\"") { errors[role] = e }
            }
            // GDAL's "id" column holds a GeoJSON feature's own id only where its properties
            // have no "id": a null or blank one hid it. It stands in, as in the built-in reader.
            if settings.id == nil, errors[.id] == nil, hasIDField, !idNamed, let fid = native()?.featureID {
                if let e = settings.set(.id, fid, from: "the feature id") { errors[.id] = e }
            }
            // An id that is no string or number cannot name the fence: it is #number.
            if let e = errors[.id] {
                reject(e)
                continue
            }
            // The FID stands in for the id only in a layer without an id column: a null id in
            // a column of ids is a fault, not a reason to make one up.
            if settings.id == nil, !hasIDField, let fid = feature.fid { settings.id = String(fid) }
            guard let id = settings.id, !id.isEmpty else {
                let names = quotedNames(.id)
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
                    let names = quotedNames(.radius)
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
            if takenAsDegrees, let e = OGRGeometry.beyondDegrees(geometry) {
                reject(e)
                continue
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
            for field in propertyFields where feature.isSet(field) {
                // GDAL's GeoJSON driver gives a column one type for every feature and hands
                // its value back in that type's form: `2` in a column of reals is `2.0`, `5`
                // in a column of text `"5"`, a date `2020/01/01`, `...T12:30:00.5+02:00` is
                // `...T10:30:00.500Z`. The feature's own GeoJSON (`nativeGeoJSON`, json-c's
                // text of it: numbers and strings as written, `\u` escapes as the characters)
                // has the value the built-in reader keeps ("both readers give the same values").
                properties[field.name] = native()?.properties[field.name] ?? feature.json(field)
            }
            if let column = feature.invalidTextColumn {
                let fieldName = fields.first { Int32($0.index) == column }?.name ?? "#\(column)"
                reject(
                    FenceError(
                        .malformedInput,
                        reason: "field \"\(fieldName)\" holds text that is not UTF-8 (read as the source declares it); convert the "
                            + "source to UTF-8, or give its encoding where the driver takes one (--open-option ENCODING=... for a Shapefile)"))
                continue
            }
            result.fences.append(settings.fence(id: id, shape: shape, defaultCoord: options.coord, properties: properties))
            result.origins.append(origin)
        }
    }

    /// Whether a value GDAL gives an id or group may stand for another JSON type in a GeoJSON
    /// feature: a list of one string (GDAL's reading of a string beside arrays of strings, or
    /// of an array of one), the text `true` or `false` (of a boolean beside strings), and for
    /// the id, text that starts as an object or array does (GDAL writes a feature id of any
    /// type as text).
    static func mayHideItsType(_ value: AttributeValue, role: FenceFields.Role) -> Bool {
        switch value {
        case .list(let list): return list.count == 1
        case .text(let s): return s == "true" || s == "false" || (role == .id && (s.hasPrefix("{") || s.hasPrefix("[")))
        default: return false
        }
    }

    /// The value a feature's own GeoJSON gives the column `name`, nil when it has none: the
    /// property of that name; else, with `featureID`, the feature's id (GDAL fills its "id"
    /// column with it where the properties have no "id"), and whether it is that.
    static func nativeValue(_ draft: FeatureDraft, column name: String, featureID: Bool) -> (value: AttributeValue, isFeatureID: Bool)? {
        if let value = draft.found[name] ?? nil { return (value, false) }
        if featureID, name == "id", let fid = draft.featureID { return (fid, true) }
        return nil
    }

    /// The column that setting name `name` reads in a layer of `fields`: the one of exactly
    /// that name, else the one that matches it ignoring case (Shapefile and CSV headers are
    /// often upper case: `RADIUS`); nil when none does. An exact match wins, as the built-in
    /// reader reads only that property: with columns `ID` and `id`, the id is `id`.
    /// - Throws: `malformed-input` when no column has exactly that name and several match it
    ///   ignoring case (`Radius` and `RADIUS`): which one was meant is not for the reader to
    ///   guess, and naming it exactly (`--radius-field Radius`) says.
    /// - Complexity: O(n) for n columns.
    static func column(named name: String, for role: FenceFields.Role, in fields: [OGRField], layer: String) throws(FenceError) -> OGRField? {
        if let exact = fields.first(where: { $0.name == name }) { return exact }
        let folded = name.lowercased()
        let matches = fields.filter { $0.name.lowercased() == folded }
        guard matches.count > 1 else { return matches.first }
        throw FenceError(
            .malformedInput,
            reason: "layer \(layer) has fields " + matches.map { "\"\($0.name)\"" }.joined(separator: " and ")
                + " for the \(role.rawValue) (\"\(name)\"), which differ only in case: name the one to read exactly (--\(role.rawValue)-field)")
    }

    /// A driver that failed on the way to a feature and went on (GDAL 3.6's GeoJSONSeq
    /// skips a line it cannot parse, raising a CPLError on the call that returns the next
    /// feature): reported at that feature, which itself loads. A failure that left the
    /// feature without a geometry is that feature's own refusal instead (`noGeometryReason`).
    mutating func reportSkip(before origin: FeatureOrigin, message: String?) {
        let reason =
            "GDAL failed after feature \(origin.index - 1) and read on to this one; anything it skipped is not loaded: "
            + (message ?? "no message from GDAL")
        result.rejected.append(RejectedFeature(origin: origin, error: FenceError(.malformedInput, line: origin.index, reason: reason)))
    }

    /// The end of a layer: reported when the driver stopped with a failure (a damaged file,
    /// a lost connection) or when fewer features came than the layer announced
    /// (`OGRLayer.announcedFeatureCount`; a FlatGeobuf cut short can end without a word).
    /// Placed after the last feature read; the features read stay loaded.
    mutating func reportEnd(of layerName: String, read: Int, announced: Int?) {
        let failure = GDALErrorState.failed ? GDALErrorState.message ?? "no message from GDAL" : nil
        let short = announced.map { read < $0 } ?? false
        let reason: String
        switch (failure, announced) {
        case (let failure?, let announced?) where short:
            reason = "reading stopped after feature \(read) of the \(announced) the layer announces: \(failure)"
        case (let failure?, _):
            reason = "reading stopped after feature \(read): \(failure)"
        case (nil, let announced?) where short:
            reason = "only \(read) of the \(announced) features the layer announces were read; GDAL ended the layer without a word (a truncated or damaged file?)"
        default:
            return
        }
        let origin = FeatureOrigin(layer: layerName, index: read + 1)
        result.rejected.append(RejectedFeature(origin: origin, error: FenceError(.malformedInput, line: read + 1, reason: reason)))
    }

    /// Why a feature has no usable geometry, in words: an empty one, one the driver could not
    /// read (with its message), or none at all. OGR's CSV driver reads a WKT cell it cannot
    /// parse as no geometry, without a message: for a CSV source the words say so.
    func noGeometryReason(_ feature: OGRFeature, message: String?) -> String {
        if feature.geometry != nil { return "the feature's geometry is empty" }
        if let message { return "the feature's geometry could not be read (\(message))" }
        if geometryFromText && geometryColumns == 0 { return "the CSV has no geometry column (fences need a WKT column)" }
        if geometryFromText { return "the feature has no geometry: its WKT cell is empty or is not geometry OGR can read" }
        return "the feature has no geometry"
    }
}
