import FenceEngine

/// Where a feature sits in its source.
public struct FeatureOrigin: Sendable, Hashable, CustomStringConvertible {
    /// The OGR layer name; for the built-in GeoJSON reader, the file name without extension
    /// (as OGR names a GeoJSON layer), "stdin" for standard input.
    public var layer: String
    /// 1-based position of the feature in its layer, in reading order.
    public var index: Int
    /// The feature's OGR FID, when the source has one.
    public var fid: Int64?

    public init(layer: String, index: Int, fid: Int64? = nil) {
        self.layer = layer
        self.index = index
        self.fid = fid
    }

    /// `layer zones, feature 3 (FID 2)`.
    public var description: String {
        "layer \(layer), feature \(index)" + (fid.map { " (FID \($0))" } ?? "")
    }
}

/// A feature that did not become a fence: where it is, and the engine's error (its kind, the
/// fence id when the feature had one, and the reason).
public struct RejectedFeature: Error, Sendable, Hashable, CustomStringConvertible {
    public var origin: FeatureOrigin
    public var error: FenceError

    public init(origin: FeatureOrigin, error: FenceError) {
        self.origin = origin
        self.error = error
    }

    /// `layer zones, feature 3 (FID 2): fence bowtie: invalid-geometry: Self-intersection at (1, 1)`.
    public var description: String {
        var error = self.error
        error.line = nil
        return "\(origin): \(error)"
    }
}
