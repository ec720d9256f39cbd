/// A GeoJSON document's `crs` member (the 2008 GeoJSON draft's; RFC 7946 dropped it), as the
/// built-in reader understands it.
enum DeclaredCRS: Sendable, Hashable {
    /// A definition GDAL reads as the document's CRS (`EPSG:3857`, `urn:ogc:def:crs:EPSG::3857`,
    /// `WGS84`): WGS84 longitude/latitude is read here (`GeoJSONFences.isLonLatWGS84`), any
    /// other goes to OGR under `--fence-reader auto`.
    case named(String)
    /// A member the reader cannot turn into a definition: what it is (`a "crs" member of type
    /// "foo"`) and what to do, for the refusal (`GeoJSONFences.refusal`).
    case unreadable(what: String, hint: String)

    /// The hint for a member GDAL's GeoJSON driver does not read either.
    static let gdalIgnores = "--fence-reader ogr reads the file as GDAL does, which takes a crs it cannot read as WGS84"
    /// The hint for a link: GDAL 3.6 fetches every one (even an EPSG registry's address).
    static let gdalFetches =
        "--fence-reader ogr reads the file as GDAL does, which fetches the link over the network (and takes the data as WGS84 if it cannot)"
}

/// The forms of `crs` GDAL's GeoJSON driver reads, turned into names (found by an audit:
/// `{"type":"EPSG","properties":{"code":4326}}` refused the whole file as "the CRS unnamed"):
///
/// | `type` | properties | name |
/// | --- | --- | --- |
/// | `name` | `name` | as it is (`EPSG:3857`, `urn:ogc:def:crs:OGC:1.3:CRS84`, `WGS84`) |
/// | `EPSG` | `code` (number or digits) | `EPSG:code` |
/// | `OGC` | `urn` | as it is |
/// | `link`, `URL` | `href` or `url` | EPSG 4326 or CRS84 at a registry's address (`http://spatialreference.org/ref/epsg/4326/proj4/`, `https://epsg.io/4326`, `http://www.opengis.net/def/crs/OGC/1.3/CRS84`): WGS84 |
///
/// Any other link is not followed: GDAL 3.6 fetches every link over the network (and reads the
/// data as WGS84 when it cannot), so OGR is no way round either, and the refusal says how to
/// name the CRS instead. Any other type is unreadable (GDAL takes it as WGS84, silently).
extension GeoJSONDocument {
    /// The `crs` member after its key: nil for `null`.
    /// - Throws: a syntax error in it (the document is not JSON).
    mutating func readCRS() throws(JSONScanner.Failure) -> DeclaredCRS? {
        let (range, _) = try scanner.skipValue()
        var s = JSONScanner(scanner.bytes)
        s.at = range.lowerBound
        guard s.take(123) else {
            if scanner.compactText(range) == "null" { return nil }
            return .unreadable(
                what: "a \"crs\" member that is not an object (\(Self.shown(scanner.compactText(range))))", hint: DeclaredCRS.gdalIgnores)
        }
        var type: String?
        var texts: [String: String] = [:]
        if !s.take(125) {
            repeat {
                let key = try s.string()
                try s.expect(58, ":")
                if s.equals(key, "type"), s.peek() == 34 {
                    type = s.text(try s.string())
                } else if s.equals(key, "properties"), s.peek() == 123 {
                    s.at += 1
                    if !s.take(125) {
                        repeat {
                            let name = s.text(try s.string())
                            try s.expect(58, ":")
                            if s.peek() == 34 {
                                texts[name] = s.text(try s.string())
                            } else {
                                let (value, _) = try s.skipValue()
                                // An EPSG code may be a number (as written); other properties are text.
                                if name == "code", JSONScanner.startsNumber(s.bytes[value.lowerBound]) { texts[name] = s.compactText(value) }
                            }
                        } while try s.next(closing: 125)
                    }
                } else {
                    _ = try s.skipValue()
                }
            } while try s.next(closing: 125)
        }
        return Self.declaredCRS(type: type, properties: texts)
    }

    /// The name a `crs` member of `type` with these text `properties` (and `code` as a number
    /// written) gives.
    static func declaredCRS(type: String?, properties: [String: String]) -> DeclaredCRS {
        guard let type else { return .unreadable(what: "a \"crs\" member without a \"type\"", hint: DeclaredCRS.gdalIgnores) }
        switch type.lowercased() {
        case "name":
            if let name = properties["name"] { return .named(name) }
        case "epsg":
            if let code = properties["code"], let n = UInt32(code), n > 0 { return .named("EPSG:\(n)") }
        case "ogc":
            if let urn = properties["urn"] { return .named(urn) }
        case "link", "url":
            guard let href = properties["href"] ?? properties["url"] else { break }
            let name = linkedCRS(href)
            if let name, GeoJSONFences.isLonLatWGS84(.named(name)) { return .named(name) }
            let what = "a \"crs\" member of type \"\(shown(type))\"" + (name.map { " to \($0)" } ?? "") + " (\(shown(href)))"
            let instead = name.map { #"; or name it: {"type":"name","properties":{"name":"\#($0)"}}"# } ?? ""
            return .unreadable(what: what, hint: DeclaredCRS.gdalFetches + instead)
        default:
            return .unreadable(what: "a \"crs\" member of type \"\(shown(type))\"", hint: DeclaredCRS.gdalIgnores)
        }
        let wanted = ["name": "a \"name\"", "epsg": "a \"code\"", "ogc": "a \"urn\""][type.lowercased()] ?? "an \"href\""
        return .unreadable(what: "a \"crs\" member of type \"\(type)\" without \(wanted) in its properties", hint: DeclaredCRS.gdalIgnores)
    }

    /// The CRS a link names at a registry's address: `EPSG:n` for
    /// `http://spatialreference.org/ref/epsg/n/proj4/` or `https://epsg.io/n`, an OGC
    /// definition URI (`http://www.opengis.net/def/crs/EPSG/0/3857`) as it is.
    static func linkedCRS(_ link: String) -> String? {
        let lower = link.lowercased()
        if lower.hasPrefix("http://www.opengis.net/def/crs/") || lower.hasPrefix("https://www.opengis.net/def/crs/") { return link }
        var rest = Substring(lower)
        for scheme in ["https://", "http://"] where rest.hasPrefix(scheme) { rest = rest.dropFirst(scheme.count) }
        if rest.hasPrefix("www.") { rest = rest.dropFirst(4) }
        for prefix in ["spatialreference.org/ref/epsg/", "epsg.io/"] where rest.hasPrefix(prefix) {
            let digits = rest.dropFirst(prefix.count).prefix { $0.isASCII && $0.isNumber }
            let after = rest.dropFirst(prefix.count + digits.count)
            guard let n = UInt32(digits), n > 0, after.isEmpty || after.first == "/" || after.first == "." else { return nil }
            return "EPSG:\(n)"
        }
        return nil
    }

    /// Text from the file in a message: at most 80 characters.
    static func shown(_ text: String) -> String { text.count > 80 ? text.prefix(80) + "..." : text }
}
