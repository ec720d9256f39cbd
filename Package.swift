// swift-tools-version: 6.0
import PackageDescription

// Dependencies point one way: fence -> FenceIO -> FenceEngine -> (SpatialIndex, CGEOS).
// The NATS worker is its own module beside them: fence -> FenceNATS -> (FenceIO, CNATS); the
// core never links libnats.
// Invariant checks (R-tree `checkInvariants()`) are compiled into debug builds only.
let checks: [SwiftSetting] = [.define("FENCE_INTERNAL_CHECKS", .when(configuration: .debug))]

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
            name: "CNATS",
            pkgConfig: "libnats",
            providers: [.apt(["libnats-dev"])]
        ),
        .target(name: "SpatialIndex", swiftSettings: checks),
        .target(name: "FenceEngine", dependencies: ["CGEOS", "SpatialIndex"], swiftSettings: checks),
        .target(name: "FenceIO", dependencies: ["FenceEngine"]),
        .target(name: "FenceNATS", dependencies: ["FenceIO", "FenceEngine", "CNATS"]),
        .executableTarget(name: "fence", dependencies: ["FenceIO", "FenceEngine", "FenceNATS"]),
        .executableTarget(
            name: "FenceBench",
            dependencies: ["FenceEngine", "FenceIO", "SpatialIndex"],
            path: "Benchmarks/FenceBench"
        ),
        .testTarget(name: "SpatialIndexTests", dependencies: ["SpatialIndex"], swiftSettings: checks),
        .testTarget(name: "FenceEngineTests", dependencies: ["FenceEngine"], swiftSettings: checks),
        .testTarget(name: "FenceIOTests", dependencies: ["FenceIO"]),
        .testTarget(name: "FenceNATSTests", dependencies: ["FenceNATS", "FenceIO", "FenceEngine"]),
    ],
    swiftLanguageModes: [.v6]
)
