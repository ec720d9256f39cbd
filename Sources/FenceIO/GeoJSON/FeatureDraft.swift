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
    /// The first string of the feature that is not text (not UTF-8, or a lone surrogate
    /// escape) and where it was: the feature is refused, since its ids and properties are
    /// carried as their bytes.
    var badText: (reason: String, source: Source)?

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
