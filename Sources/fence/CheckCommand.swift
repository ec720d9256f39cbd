import FenceEngine
import FenceIO
import Foundation

/// `fence check`: validate fences and list every fence with a problem.
enum CheckCommand {
    static let help = """
        Usage: fence check --fences SOURCE [--repair] [--threads N] [fence options]

        Reads every feature, checks every fence as `fence eval` would load it (rings closed and
        long enough, coordinates in range, a positive radius, GEOS validity with GEOS's reason,
        settings in range, ids present and unique), and prints one line per fence with a
        problem (the first one found, in that order): source, layer, feature number (and
        FID), fence id, kind and reason. With --repair,
        polygons GEOS MakeValid can fix are reported as repaired instead.

        \(Arguments.fenceHelp)

        Exit status: 0 when every fence is good, 1 when any is not, 2 on bad usage.
        """

    static func run(_ args: ArraySlice<String>) throws -> Int32 {
        let a = try Arguments(args, valued: Arguments.fenceOptions.union(["threads"]), flagNames: ["repair"])
        if a.flags.contains("help") {
            printLine(help)
            return 0
        }
        let threads = try a.int("threads", default: FenceStore.defaultThreads, range: 1...1024)
        let loading = try FenceLoading(a)
        var store = loading.emptyStore()
        let results = store.add(loading.read.fences, repair: a.flags.contains("repair"), threads: threads)
        let bad = loading.rejected(after: results)
        var lines: [(FeatureOrigin, String)] = bad.map { ($0.origin, "\(loading.source): \($0)") }
        for (origin, r) in zip(loading.read.origins, results) where r.repaired {
            lines.append((origin, "\(loading.source): \(origin): fence \(FenceError.printable(r.id)): repaired by MakeValid"))
        }
        let layerOrder = Dictionary(loading.read.layers.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
        lines.sort { (layerOrder[$0.0.layer] ?? 0, $0.0.index) < (layerOrder[$1.0.layer] ?? 0, $1.0.index) }
        // A reader that stops early (`| head`) must not turn this run's 1 into 0.
        OutputFailure.statusOnClose = bad.isEmpty ? 0 : 1
        for (_, line) in lines { printLine(line) }
        if let hint = loading.missingIDHint { StandardError().write(hint + "\n") }
        if let note = loading.silentFencesNote(command: "check") { StandardError().write(note + "\n") }
        let layers = loading.read.layers.count
        StandardError().write(
            "fence check: \(loading.read.featureCount) features in \(layers) layer\(layers == 1 ? "" : "s") "
                + "(\(loading.read.reader.rawValue) reader), \(store.count) good fences, \(bad.count) with problems"
                + (PeakMemory.megabytes.map { "; peak resident size \($0) MB" } ?? "") + "\n")
        return bad.isEmpty ? 0 : 1
    }
}
