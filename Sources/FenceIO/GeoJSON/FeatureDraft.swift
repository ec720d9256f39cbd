import FenceEngine

/// What has been read of one feature so far (members come in any order).
struct FeatureDraft {
    /// Where a value of the feature came from.
    enum Source: Hashable {
        case featureID
        case property(String)
        /// A property's name itself.
        case propertyName
    }

    var type: String?
    var featureID: AttributeValue?
    /// Values of setting properties by name; `.some(nil)` for an explicit JSON null.
    var found: [String: AttributeValue?] = [:]
    var properties: [String: String] = [:]
    var hasGeometry = false
    var geometryType: String?
    var coordinates: GeoJSONCoordinates?
    /// A value nested past `FenceInputLimits.maxNesting`.
    var nesting: FenceError?
    /// The first key the feature gives twice among those the reader reads, and where: the
    /// feature is refused, since JSON readers differ on which of the two counts (GDAL's
    /// keeps the last, others the first or refuse).
    var repeated: (key: String, place: Place)?
    /// The members of the feature and of its geometry read so far (`Member` bits).
    var membersSeen: UInt8 = 0
    /// Properties given as null so far: kept nowhere else, but a second one of the name is
    /// a repeat all the same.
    var nullProperties: Set<String> = []
    /// The first string of the feature that is not text (not UTF-8, or a lone surrogate
    /// escape) and where it was: the feature is refused, since its ids and properties are
    /// carried as their bytes.
    var badText: (reason: String, source: Source)?

    /// Where a repeated key stands.
    enum Place {
        case feature, geometry, properties
    }

    /// The members the reader reads, one bit each: a repeat of any of them is refused.
    enum Member: UInt8 {
        case type = 1, id = 2, properties = 4, geometry = 8, geometryType = 16, coordinates = 32
    }

    /// Notes that `member` was read; a second time, that it is repeated.
    mutating func noteMember(_ member: Member) {
        if membersSeen & member.rawValue != 0 {
            switch member {
            case .type: noteRepeated("type", in: .feature)
            case .id: noteRepeated("id", in: .feature)
            case .properties: noteRepeated("properties", in: .feature)
            case .geometry: noteRepeated("geometry", in: .feature)
            case .geometryType: noteRepeated("type", in: .geometry)
            case .coordinates: noteRepeated("coordinates", in: .geometry)
            }
        }
        membersSeen |= member.rawValue
    }

    mutating func noteRepeated(_ key: String, in place: Place) {
        if repeated == nil { repeated = (key, place) }
    }

    /// Why the feature is refused for its repeated key, if it has one.
    var repeatedReason: String? {
        guard let (key, place) = repeated else { return nil }
        let shown = key.count > 40 ? key.prefix(40) + "..." : key[...]
        switch place {
        case .feature: return "key \"\(shown)\" appears twice in the feature"
        case .geometry: return "key \"\(shown)\" appears twice in the feature's geometry"
        case .properties: return "key \"\(shown)\" appears twice in the feature's properties"
        }
    }

    /// Whether the repeated key may be the fence's id, or decide whether this is a feature
    /// at all: then the refusal names the feature by its number only.
    func repeatLeavesIDInDoubt(idNames: [String]) -> Bool {
        guard let (key, place) = repeated else { return false }
        switch place {
        case .feature: return key == "type" || key == "id" || key == "properties"
        case .geometry: return false
        case .properties: return idNames.contains(key)
        }
    }

    mutating func noteNesting(_ name: String, depth: Int, limit: Int) {
        if nesting == nil {
            nesting = FenceError(
                .limitExceeded, reason: "\"\(name)\" is nested \(depth) levels deep, over the limit of \(limit) (--max-json-nesting; FenceInputLimits.maxNesting in the library)")
        }
    }

    mutating func noteBadText(_ problem: TextProblem, in source: Source) {
        guard badText == nil else { return }
        let what: String
        switch source {
        case .featureID: what = "the feature id"
        case .property(let name): what = "property \"\(name)\""
        case .propertyName: what = "a property name"
        }
        badText = ("\(what) \(problem.reason)", source)
    }
}
