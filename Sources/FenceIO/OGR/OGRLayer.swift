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
