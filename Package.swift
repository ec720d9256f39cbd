// swift-tools-version: 6.0
import Foundation
import PackageDescription

// Dependencies point one way: fence -> FenceIO -> FenceEngine -> (SpatialIndex, CGEOS); FenceIO
// also reads fences through GDAL/OGR (CGDAL) and decodes gzip and Zstandard inputs (CZlib,
// CZstd), which the engine core never sees. The NATS worker
// is its own module beside them: fence -> FenceNATS -> (FenceIO, CNATS); the core never links
// libnats.
// Invariant checks (R-tree `checkInvariants()`) are compiled into debug builds only.
let checks: [SwiftSetting] = [.define("FENCE_INTERNAL_CHECKS", .when(configuration: .debug))]

/// Code for the vector units of the machine that builds it, as `-march=native` would: on an
/// x86-64 host with AVX2, FMA and BMI2 the hot loops (R-tree node scans, ring crossings) use
/// 256-bit compares, about half the instructions of baseline SSE2 (callgrind). AVX-512 is not
/// used, so valgrind still runs the binaries. `FENCE_PORTABLE=1` builds for any x86-64.
let hostCPU: [SwiftSetting] = {
    #if arch(x86_64) && os(Linux)
    guard ProcessInfo.processInfo.environment["FENCE_PORTABLE"] == nil,
        let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
        let flagLine = info.split(separator: "\n").first(where: { $0.hasPrefix("flags") })
    else { return [] }
    let flags = Set(flagLine.split(separator: " ").map(String.init))
    guard ["avx2", "fma", "bmi2", "f16c"].allSatisfy(flags.contains) else { return [] }
    return [.unsafeFlags(["-target-cpu", "haswell"], .when(configuration: .release))]
    #else
    return []
    #endif
}()

/// The readers are classes whose stored properties the per-line code reads and writes: in a
/// release build each such access made a dynamic exclusivity check (about 76 instructions, a
/// quarter of a CSV line's parse in callgrind). The static checks stay; debug builds keep the
/// dynamic ones, so the tests still catch an overlapping access.
let readerSettings: [SwiftSetting] = [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]

let package = Package(
    name: "FenceEngine",
    products: [
        .library(name: "SpatialIndex", targets: ["SpatialIndex"]),
        .library(name: "FenceEngine", targets: ["FenceEngine"]),
        .library(name: "FenceIO", targets: ["FenceIO"]),
        .library(name: "FenceNATS", targets: ["FenceNATS"]),
        .executable(name: "fence", targets: ["fence"]),
        .executable(name: "fence-bench", targets: ["FenceBench"]),
    ],
    targets: [
        .systemLibrary(
            name: "CGEOS",
            pkgConfig: "geos",
            providers: [.apt(["libgeos-dev"])]
        ),
        .systemLibrary(
            name: "CGDAL",
            pkgConfig: "gdal",
            providers: [.apt(["libgdal-dev"])]
        ),
        .systemLibrary(
            name: "CNATS",
            pkgConfig: "libnats",
            providers: [.apt(["libnats-dev"])]
        ),
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .systemLibrary(
            name: "CZstd",
            pkgConfig: "libzstd",
            providers: [.apt(["libzstd-dev"])]
        ),
        .target(name: "SpatialIndex", swiftSettings: checks + hostCPU),
        // Reproducible random data for the benchmark and the tests; no product depends on it.
        .target(name: "SeededRandom"),
        // A cache prefetch hint, which Swift does not expose: one inline C function.
        .target(name: "CPrefetch"),
        .target(name: "FenceEngine", dependencies: ["CGEOS", "CPrefetch", "SpatialIndex"], swiftSettings: checks + hostCPU),
        .target(name: "FenceIO", dependencies: ["FenceEngine", "CGDAL", "CZlib", "CZstd"], swiftSettings: hostCPU + readerSettings),
        .target(name: "FenceNATS", dependencies: ["FenceIO", "FenceEngine", "CNATS"], swiftSettings: hostCPU),
        .executableTarget(name: "fence", dependencies: ["FenceIO", "FenceEngine", "FenceNATS"]),
        .executableTarget(
            name: "FenceBench",
            dependencies: ["FenceEngine", "FenceIO", "SpatialIndex", "SeededRandom"],
            path: "Benchmarks/FenceBench"
        ),
        .testTarget(name: "SpatialIndexTests", dependencies: ["SpatialIndex", "SeededRandom"], swiftSettings: checks),
        .testTarget(name: "FenceEngineTests", dependencies: ["FenceEngine", "SeededRandom"], swiftSettings: checks),
        .testTarget(name: "FenceIOTests", dependencies: ["FenceIO", "SeededRandom"]),
        .testTarget(name: "FenceNATSTests", dependencies: ["FenceNATS", "FenceIO", "FenceEngine", "SeededRandom"]),
    ],
    swiftLanguageModes: [.v6]
)
