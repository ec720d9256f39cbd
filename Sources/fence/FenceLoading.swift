import FenceEngine
import FenceIO

/// The one way every command loads `--fences`: read (built-in GeoJSON or GDAL/OGR), add to the
/// store, and report each refused feature once, in source order, with its layer and number.
struct FenceLoading {
    /// `--fences` as it may be shown (a connection string's password masked).
    let source: String
    let options: FenceInputOptions
    let read: FenceReadResult

    /// Reads `--fences` with the fence options of `arguments`.
    init(_ arguments: Arguments) throws {
        guard let path = arguments.values["fences"] else { throw UsageError("--fences is required") }
        let options = try arguments.fenceInputOptions()
        let source = FenceInput.displayName(path)
        self.options = options
        self.source = source
        read = try naming(source) { try FenceInput.read(path, options: options) }
    }

    /// A store whose limits are the ones the fences were read with.
    func emptyStore() -> FenceStore {
        var store = FenceStore()
        store.limits = options.limits.geometry
        return store
    }

    /// Every refused feature: the reader's and the store's (`results` of adding `read.fences`),
    /// in source order.
    func rejected(after results: [FenceAddResult]) -> [RejectedFeature] {
        let layerOrder = Dictionary(read.layers.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
        return (read.rejected + read.rejections(from: results)).sorted {
            (layerOrder[$0.origin.layer] ?? 0, $0.origin.index) < (layerOrder[$1.origin.layer] ?? 0, $1.origin.index)
        }
    }

    /// Writes each refusal to standard error as `fence: SOURCE: layer L, feature N: ...`, the
    /// first `reportLimit` of them, then how many more (`fence check` lists every one); then
    /// `missingIDHint` when it applies, and a hint when no feature had a geometry (positions
    /// given as fences).
    func report(_ rejected: [RejectedFeature]) {
        let stderr = StandardError()
        for r in rejected.prefix(Self.reportLimit) { stderr.write("fence: \(source): \(r)\n") }
        if rejected.count > Self.reportLimit {
            stderr.write("fence: \(source): \(rejected.count - Self.reportLimit) more features refused (fence check lists every one)\n")
        }
        if let hint = missingIDHint { stderr.write(hint + "\n") }
        if read.fences.isEmpty, !rejected.isEmpty, rejected.allSatisfy({ $0.error.kind == .emptyGeometry }) {
            stderr.write("fence: \(source): no feature has a geometry: is it a fence file? (positions go in --positions)\n")
        }
    }

    /// A line for fences read with an empty `actions` (`"actions": []` or `""`): loaded and
    /// tracked, they report no event at all. A deliberate mute is possible, a mistake more
    /// likely, and the run is otherwise silent about it. Nil when there are none.
    /// - Complexity: O(fences).
    func silentFencesNote(command: String) -> String? {
        let silent = read.fences.filter { $0.actions?.isEmpty == true }
        guard !silent.isEmpty else { return nil }
        let named = silent.prefix(3).map { FenceError.printable($0.id) }.joined(separator: ", ")
        return "fence \(command): note: \(source): \(silent.count) fence\(silent.count == 1 ? " has" : "s have") an empty "
            + "\"actions\" and report\(silent.count == 1 ? "s" : "") no event (\(named)\(silent.count > 3 ? ", ..." : "")): "
            + "list the events to report, or leave \"actions\" out for the engine's (--actions)"
    }

    /// Refused features written one a line before the rest are counted.
    static let reportLimit = 100

    /// One line for a GeoJSON source read by the built-in reader none of whose features has an
    /// id (`ogr2ogr` writes none): the two ways to load it. Nil when any feature had an id (it
    /// was read as a fence, or refused for something else), an id field was named, or OGR read
    /// the source (which gives every feature its FID).
    var missingIDHint: String? {
        guard read.reader == .native, !options.fields.named.contains(.id), read.fences.isEmpty, !read.rejected.isEmpty,
            read.rejected.allSatisfy({ $0.error.kind == .missingID })
        else { return nil }
        return "fence: \(source): no feature has an id: name the property that holds one with --id-field NAME, "
            + "or read the file through OGR (--fence-reader ogr), which numbers the features"
    }
}
