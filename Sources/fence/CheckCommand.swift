import FenceEngine
import FenceIO
import Foundation

/// `fence check`: validate fences and list every problem.
enum CheckCommand {
    static let help = """
        Usage: fence check --fences FENCES.geojson [--repair] [--threads N]

        Reads every feature, checks every fence as `fence eval` would load it (rings closed and
        long enough, coordinates in range, a positive radius, GEOS validity with GEOS's reason,
        settings in range, ids present and unique), and prints one line per problem:
        feature number, fence id, kind and reason. With --repair, polygons GEOS MakeValid can fix
        are reported as repaired instead.

        Exit status: 0 when every fence is good, 1 when any is not, 2 on bad usage.
        """

    static func run(_ args: ArraySlice<String>) throws -> Int32 {
        let a = try Arguments(args, valued: ["fences", "threads"], flagNames: ["repair"])
        if a.flags.contains("help") {
            print(help)
            return 0
        }
        guard let path = a.values["fences"] else { throw UsageError("--fences is required") }
        let threads = try a.int("threads", default: FenceStore.defaultThreads, range: 1...1024)
        let report = try GeoJSONFences.read(path: path)
        var store = FenceStore()
        let results = store.add(report.fences, repair: a.flags.contains("repair"), threads: threads)
        var lines: [String] = report.errors.map { "\(path): \($0)" }
        for r in results {
            if let e = r.error { lines.append("\(path): \(e)") } else if r.repaired { lines.append("\(path): fence \(FenceError.printable(r.id)): repaired by MakeValid") }
        }
        for l in lines { print(l) }
        let bad = report.errors.count + results.filter { $0.error != nil }.count
        FileHandle.standardError.write(Data("fence check: \(report.fences.count + report.errors.count) features, \(store.count) good fences, \(bad) with problems\n".utf8))
        return bad == 0 ? 0 : 1
    }
}
