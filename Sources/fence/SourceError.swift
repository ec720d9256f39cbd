import FenceEngine

/// An error about a whole input (a GeoJSON syntax error, a CSV header without `lat`, binary
/// data, a failed read) with the input it is about: the readers report where in the input
/// (line, column, feature) but not which input, and a run has several.
struct SourceError: Error, CustomStringConvertible {
    /// The input as given (`-` is shown as standard input).
    let source: String
    let error: FenceError

    var description: String {
        "\(source == "-" ? "standard input" : source): \(error)"
    }
}

/// Runs `body`, naming `source` in a `FenceError` it throws. Always, even when the reason
/// names it too (an OGR source's "cannot open x as vector data"): a check for the name inside
/// the reason took "data" in "binary data (NUL byte)" for the input called `data`.
func naming<T>(_ source: String, _ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let e as FenceError {
        throw SourceError(source: source, error: e)
    }
}
