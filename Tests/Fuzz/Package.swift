// swift-tools-version: 6.0
import Foundation
import PackageDescription

// libFuzzer targets for the input paths, kept out of the root package so a plain `swift build`
// never sees the fuzzer flags. Build and run with `bash Tests/Fuzz/fuzz.sh` (it passes
// `-sanitize=fuzzer,address -parse-as-library`); see Tests/Fuzz/README.md.
//
// The root package is a path dependency, whose identity is the name of its folder (a clone may
// be called anything), so it is computed here rather than written down.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
let rootIdentity = root.lastPathComponent.lowercased()

func fuzzTarget(_ name: String, _ products: [String]) -> Target {
    .executableTarget(
        name: name,
        dependencies: ["FuzzSupport", "FuzzDriver"] + products.map { .product(name: $0, package: rootIdentity) })
}

let package = Package(
    name: "FenceFuzz",
    dependencies: [.package(path: "../..")],
    targets: [
        .target(name: "FuzzDriver"),
        .target(name: "FuzzSupport", dependencies: [.product(name: "FenceIO", package: rootIdentity)]),
        // What the NATS worker decodes off the network (FenceNATS links libnats).
        fuzzTarget("FuzzNATSMessages", ["FenceNATS", "FenceIO", "FenceEngine"]),
        fuzzTarget("FuzzPositionsCSV", ["FenceIO", "FenceEngine"]),
        fuzzTarget("FuzzPositionsNDJSON", ["FenceIO", "FenceEngine"]),
        fuzzTarget("FuzzFences", ["FenceIO", "FenceEngine"]),
        fuzzTarget("FuzzCheckpoint", ["FenceIO", "FenceEngine"]),
        fuzzTarget("FuzzWKB", ["FenceEngine"]),
    ],
    swiftLanguageModes: [.v6]
)
