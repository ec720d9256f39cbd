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

/// Runs `body`, naming `source` in a `FenceError` it throws unless the error's reason already
/// names it.
func naming<T>(_ source: String, _ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let e as FenceError {
        if source != "-" && e.reason.contains(source) { throw e }
        throw SourceError(source: source, error: e)
    }
}
