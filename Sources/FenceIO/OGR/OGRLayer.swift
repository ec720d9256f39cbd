import CGDAL
import FenceEngine

/// One layer of an open dataset. "The returned layer remains owned by the GDALDataset and should
/// not be deleted by the application": the value keeps its dataset alive instead.
struct OGRLayer {
    let dataset: OGRDataset
    let raw: OGRLayerH

    var name: String { String(cString: OGR_L_GetName(raw)) }

    /// The layer's CRS, borrowed from the layer ("the returned object is owned by the
    /// OGRLayer and should not be modified or freed"); nil when it declares none.
    var spatialReference: OGRSpatialReferenceH? { OGR_L_GetSpatialRef(raw) }

    /// The attribute columns, in order.
    var fields: [OGRField] {
        guard let definition = OGR_L_GetLayerDefn(raw) else { return [] }
        return (0..<Int(OGR_FD_GetFieldCount(definition))).compactMap { i in
            guard let field = OGR_FD_GetFieldDefn(definition, Int32(i)) else { return nil }
            return OGRField(
                index: i, name: String(cString: OGR_Fld_GetNameRef(field)), type: OGR_Fld_GetType(field),
                isBoolean: OGR_Fld_GetSubType(field) == OFSTBoolean, isJSON: OGR_Fld_GetSubType(field) == OFSTJSON)
        }
    }

    /// How many geometry columns the layer has (0: a CSV without a WKT column, a table).
    var geometryFieldCount: Int {
        guard let definition = OGR_L_GetLayerDefn(raw) else { return 0 }
        return Int(OGR_FD_GetGeomFieldCount(definition))
    }

    /// How many features reading the layer yields, when its driver states it without reading
    /// (`OLCFastFeatureCount`, then `OGR_L_GetFeatureCount(layer, 0)`) and the number is a
    /// promise: then fewer features read means features lost. Nil otherwise.
    ///
    /// Only FlatGeobuf (the count in its header), GeoJSON and GeoJSONSeq (the objects found
    /// when the file was opened) and GeoPackage (`gpkg_ogr_contents`, kept by triggers). Not
    /// Shapefile or MapInfo: their counts include deleted records, which reading skips
    /// (measured: a Shapefile with one dBase record marked deleted announces 2 and yields 1).
    /// Not PostgreSQL: there the count is a second query of a table that may change between
    /// the two. Not CSV: its count is a pass over the file (`OLCFastFeatureCount` says no).
    /// - Complexity: O(1) for these drivers.
    var announcedFeatureCount: Int? {
        guard Self.countingDrivers.contains(dataset.driverName), OGR_L_TestCapability(raw, OLCFastFeatureCount) != 0 else { return nil }
        let count = OGR_L_GetFeatureCount(raw, 0)
        return count >= 0 ? Int(count) : nil
    }

    static let countingDrivers: Set<String> = ["FlatGeobuf", "GeoJSON", "GeoJSONSeq", "GPKG"]

    func resetReading() { OGR_L_ResetReading(raw) }

    /// The next feature, owned by the caller, or nil at the end of the layer (or when the
    /// driver fails; `GDALErrorState` then says why).
    func nextFeature() -> OGRFeature? {
        OGR_L_GetNextFeature(raw).map(OGRFeature.init(owning:))
    }
}

/// An attribute column of a layer.
struct OGRField {
    var index: Int
    var name: String
    var type: OGRFieldType
    /// An integer column holding booleans (subtype OFSTBoolean).
    var isBoolean: Bool
    /// A text column holding JSON (subtype OFSTJSON: a GeoJSON object or array property, a
    /// GeoPackage JSON column).
    var isJSON: Bool = false
}
