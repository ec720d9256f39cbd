/// A longitude/latitude pair in degrees.
///
/// Which datum the numbers are in (WGS84, GCJ-02, BD-09LL) is carried beside the value, never
/// inside it: the store and the hot loops only ever see WGS84.
public struct LonLat: Sendable, Hashable, BitwiseCopyable, CustomStringConvertible {
    public var lon: Double
    public var lat: Double

    @inlinable
    public init(lon: Double, lat: Double) {
        self.lon = lon
        self.lat = lat
    }

    /// True when both values are finite and within [-180, 180] x [-90, 90].
    @inlinable
    public var isValidWGS84Range: Bool {
        lon.isFinite && lat.isFinite && lon >= -180 && lon <= 180 && lat >= -90 && lat <= 90
    }

    public var description: String { "(\(lon), \(lat))" }
}
