import CGDAL
import FenceEngine

/// A feature read from a layer, destroyed with `OGR_F_Destroy` ("the returned feature becomes
/// the responsibility of the caller to delete").
final class OGRFeature {
    let raw: OGRFeatureH
    /// The first column read whose text is not UTF-8 (it was read repaired, U+FFFD for each
    /// bad sequence): the reader refuses the feature, which would otherwise merge two ids
    /// or groups that differ only there.
    private(set) var invalidTextColumn: Int32?

    init(owning raw: OGRFeatureH) { self.raw = raw }

    deinit { OGR_F_Destroy(raw) }

    /// The feature's FID, nil when the driver gives none.
    var fid: Int64? {
        let fid = OGR_F_GetFID(raw)
        return fid == CGDAL_nullFID() ? nil : Int64(fid)
    }

    /// The feature's first geometry, borrowed ("a handle to internal feature geometry. This
    /// object should not be modified"); it lives as long as the feature.
    var geometry: OGRGeometryH? { OGR_F_GetGeometryRef(raw) }

    /// The feature's own GeoJSON, when its driver kept it: GDAL's GeoJSON driver opened with
    /// NATIVE_DATA=YES (`OGRFences` asks for it) sets the feature's native data to the
    /// Feature's JSON text, media type `application/vnd.geo+json`. Nil otherwise. Both are
    /// the feature's strings ("const char *"), read and never freed.
    var nativeGeoJSON: String? {
        guard let type = OGR_F_GetNativeMediaType(raw), strcmp(type, "application/vnd.geo+json") == 0, let data = OGR_F_GetNativeData(raw) else {
            return nil
        }
        return String(validatingCString: data)
    }

    /// Whether the column has a value (set and not null).
    func isSet(_ field: OGRField) -> Bool { OGR_F_IsFieldSetAndNotNull(raw, Int32(field.index)) != 0 }

    /// A column's value for a setting (id, radius, expires, ...); nil when unset or null.
    ///
    /// An integer column is read as the integer (`OGR_F_GetFieldAsInteger64`) and carried with
    /// its decimal digits, as a GeoJSON number keeps its text: an id or group is those digits
    /// (H3 cells and bigint keys pass 2^53, where a `Double` would merge neighbours), and a
    /// numeric setting (radius, dwell, expires) takes its value.
    ///
    /// What is not a number, text or a list of strings is the value the built-in reader reads
    /// from the same GeoJSON, so that both refuse it alike (an id or group must be a string
    /// or a number): a boolean column's `true`, a list of numbers as JSON (`[1,2]`, not
    /// `(2:1,2)`), and the object or array a JSON column holds (GDAL writes `{ "a": 1 }`, or
    /// a plain string as it is where some features' values are objects).
    func attribute(_ field: OGRField) -> AttributeValue? {
        let i = Int32(field.index)
        guard OGR_F_IsFieldSetAndNotNull(raw, i) != 0 else { return nil }
        switch field.type {
        case OFTInteger, OFTInteger64:
            if field.isBoolean { return .other(json(field)) }
            let v = OGR_F_GetFieldAsInteger64(raw, i)
            return .jsonNumber(text: String(v), value: Double(v))
        case OFTReal:
            return .number(OGR_F_GetFieldAsDouble(raw, i))
        case OFTDate, OFTDateTime:
            return epoch(i).map(AttributeValue.number) ?? .text(text(i))
        case OFTStringList:
            return .list(stringList(i))
        case OFTIntegerList, OFTInteger64List, OFTRealList:
            return .other(json(field))
        default:
            let s = text(i)
            if field.isJSON, s.first == "{" || s.first == "[", let value = GeoJSONDocument.attributeValue(json: s) { return value }
            return s.isEmpty ? nil : .text(s)
        }
    }

    /// A column's value as JSON text, as `Fence.properties` keeps it; "null" when null.
    func json(_ field: OGRField) -> String {
        let i = Int32(field.index)
        guard OGR_F_IsFieldSetAndNotNull(raw, i) != 0 else { return "null" }
        switch field.type {
        case OFTInteger, OFTInteger64:
            let v = OGR_F_GetFieldAsInteger64(raw, i)
            return field.isBoolean ? (v != 0 ? "true" : "false") : String(v)
        case OFTReal:
            let v = OGR_F_GetFieldAsDouble(raw, i)
            return v.isFinite ? "\(v)" : "null"
        case OFTDateTime:
            return epoch(i).map { OutputEscaping.jsonString(ISO8601.format($0)) } ?? OutputEscaping.jsonString(text(i))
        case OFTDate:
            // GDAL gives a date's text as `2020/01/31`: carried as the ISO 8601 date it is, as
            // a date-time is carried in ISO 8601.
            return epoch(i).map { OutputEscaping.jsonString(String(ISO8601.format($0).prefix(10))) } ?? OutputEscaping.jsonString(text(i))
        case OFTIntegerList, OFTInteger64List:
            // Each type has its own getter: OGR_F_GetFieldAsInteger64List gives NULL for an
            // IntegerList (GDAL 3.6), which was carried as `[]`.
            var n: Int32 = 0
            let values: [Int64]
            if field.type == OFTIntegerList {
                guard let p = OGR_F_GetFieldAsIntegerList(raw, i, &n) else { return "[]" }
                values = (0..<Int(n)).map { Int64(p[$0]) }
            } else {
                guard let p = OGR_F_GetFieldAsInteger64List(raw, i, &n) else { return "[]" }
                values = (0..<Int(n)).map { Int64(p[$0]) }
            }
            // A GeoJSON array of booleans is a boolean integer list.
            return "[" + values.map { field.isBoolean ? ($0 != 0 ? "true" : "false") : String($0) }.joined(separator: ",") + "]"
        case OFTRealList:
            var n: Int32 = 0
            guard let p = OGR_F_GetFieldAsDoubleList(raw, i, &n) else { return "[]" }
            return "[" + (0..<Int(n)).map { p[$0].isFinite ? "\(p[$0])" : "null" }.joined(separator: ",") + "]"
        case OFTStringList:
            return "[" + stringList(i).map(OutputEscaping.jsonString).joined(separator: ",") + "]"
        default:
            // A JSON column carries its value as JSON, compact, as the built-in reader does,
            // when it is JSON indeed (the column's declaration is the file's word, not a proof).
            let s = text(i)
            if field.isJSON, let json = JSONScanner.compactJSON(s) { return json }
            return OutputEscaping.jsonString(s)
        }
    }

    private func text(_ i: Int32) -> String {
        // "the returned string is internal, and should not be modified or freed".
        guard let c = OGR_F_GetFieldAsString(raw, i) else { return "" }
        return checked(c, column: i)
    }

    /// The C string as a `String`; text that is not UTF-8 is noted (`invalidTextColumn`) and
    /// read repaired. Valid text costs what `String(cString:)` did: one validating copy.
    private func checked(_ c: UnsafePointer<CChar>, column i: Int32) -> String {
        if let s = String(validatingCString: c) { return s }
        if invalidTextColumn == nil { invalidTextColumn = i }
        return String(cString: c)
    }

    private func stringList(_ i: Int32) -> [String] {
        // Internal to the feature as well: read, never freed.
        guard let list = OGR_F_GetFieldAsStringList(raw, i) else { return [] }
        var out: [String] = []
        var k = 0
        while let item = list[k] {
            out.append(checked(item, column: i))
            k += 1
        }
        return out
    }

    /// A Date or DateTime column as epoch seconds; a time without a zone (or in "local time")
    /// is UTC, as for positions.
    private func epoch(_ i: Int32) -> Double? {
        var year: Int32 = 0, month: Int32 = 0, day: Int32 = 0, hour: Int32 = 0, minute: Int32 = 0, zone: Int32 = 0
        var second: Float = 0
        guard OGR_F_GetFieldAsDateTimeEx(raw, i, &year, &month, &day, &hour, &minute, &second, &zone) != 0 else { return nil }
        var t = Double(ISO8601.daysFromCivil(year: Int(year), month: Int(month), day: Int(day))) * 86400
        t += Double(hour) * 3600 + Double(minute) * 60 + Double(second)
        // OGR's zone flag: 100 is UTC, 100 + n is UTC plus n quarter hours; 0 and 1 say nothing.
        if zone > 1 { t -= Double(zone - 100) * 900 }
        return t
    }
}
