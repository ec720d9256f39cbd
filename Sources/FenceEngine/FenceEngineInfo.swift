/// Versions of what the engine runs on, printed with every benchmark figure.
public enum FenceEngineInfo {
    /// The runtime GEOS version, e.g. "3.11.1-CAPI-1.17.1".
    public static var geosVersion: String { GEOSContext.version }
}
