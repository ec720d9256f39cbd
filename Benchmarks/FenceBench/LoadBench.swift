import FenceEngine
import FenceIO
import Foundation

/// `fence-bench --load FILE,...`: how long reading fences takes, per reader.
///
/// For each file: the built-in GeoJSON reader (for .geojson / .json), GDAL/OGR, and, for
/// GeoJSON, Foundation's `JSONSerialization.jsonObject` alone (the parse the reader used before
/// the built-in parser; the conversion to fences came on top of it). Best of `repeats` passes,
/// file already in the page cache after the first. One JSON line per (file, reader, threads);
/// the thread counts apply to the built-in reader only (the others read on one thread).
enum LoadBench {
    static func run(_ paths: [String], repeats: Int, only: Set<String>, threads: [Int]) {
        for path in paths {
            var readers: [String] = []
            if FenceInput.usesNativeReader(path) { readers += ["native", "jsonserialization"] }
            readers.append("ogr")
            if !only.isEmpty { readers = readers.filter(only.contains) }
            for reader in readers {
                for threadCount in reader == "native" ? threads : [1] {
                    measure(path, reader: reader, threads: threadCount, repeats: repeats)
                }
            }
        }
    }

    /// A file that cannot be read ends the run: status 1, with the reader's words.
    static func fail(_ path: String, _ message: String) -> Never {
        FileHandle.standardError.write(Data("fence-bench: \(path): \(message)\n".utf8))
        exit(1)
    }

    /// Prints one JSON line: the best of `repeats` reads of `path` by `reader`.
    static func measure(_ path: String, reader: String, threads: Int, repeats: Int) {
        var best = Double.infinity
        var fences = 0
        var rejected = 0
        for _ in 0..<max(1, repeats) {
            let t0 = Measure.now()
            switch reader {
            case "jsonserialization":
                guard let data = try? Data(contentsOf: URL(fileURLWithPath: path)),
                    let root = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
                else { fail(path, "JSONSerialization cannot read it as a JSON object") }
                fences = (root["features"] as? [Any])?.count ?? 0
                withExtendedLifetime(root) {}
            default:
                var options = FenceInputOptions()
                options.reader = reader == "native" ? .native : .ogr
                options.threads = threads
                let read: FenceReadResult
                do {
                    read = try FenceInput.read(path, options: options)
                } catch {
                    fail(path, "\(error)")
                }
                fences = read.fences.count
                rejected = read.rejected.count
                withExtendedLifetime(read) {}
            }
            best = min(best, Measure.now() - t0)
        }
        let bytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        let line: [String: Any] = [
            "case": "load", "file": (path as NSString).lastPathComponent, "bytes": bytes, "reader": reader,
            "fences": fences, "rejected": rejected, "seconds": (best * 1000).rounded() / 1000,
            "fences_per_s": Int(Double(fences) / best), "gdal": FenceInput.gdalVersion, "swift": Measure.swiftVersion,
            "release": Measure.isReleaseBuild, "threads": threads,
        ]
        let data = try! JSONSerialization.data(withJSONObject: line, options: [.sortedKeys])
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }
}
