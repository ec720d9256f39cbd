// swift-tools-version:5.9
// One partition's stream (`PartitionStream`) fed in process, no server: staggered live
// producers, each device's message every 10 s of event time carrying its fixes of the last 10 s,
// so the horizon moves with every step. `FENCE_ROOT` builds it against another checkout (an
// older commit, for an A/B). Release only:
//   cd Benchmarks/StreamBench && swift build -c release && .build/release/StreamBench
import Foundation
import PackageDescription

let root = ProcessInfo.processInfo.environment["FENCE_ROOT"] ?? "../.."
let name = URL(fileURLWithPath: root).standardizedFileURL.lastPathComponent
let package = Package(
    name: "StreamBench",
    dependencies: [.package(path: root)],
    targets: [
        .executableTarget(
            name: "StreamBench",
            dependencies: [.product(name: "FenceNATS", package: name), .product(name: "FenceEngine", package: name)])
    ]
)
