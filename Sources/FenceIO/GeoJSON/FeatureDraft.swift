import FenceEngine

/// What has been read of one feature so far (members come in any order).
struct FeatureDraft {
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

    mutating func noteNesting(_ name: String, depth: Int, limit: Int) {
        if nesting == nil {
            nesting = FenceError(
                .limitExceeded, reason: "\"\(name)\" is nested \(depth) levels deep, over the limit of \(limit) (FenceInputLimits.maxNesting)")
        }
    }
}
