@testable import FenceEngine
import XCTest

/// Pairs left undetermined by hysteresis, after the margin is turned off (found by a mutation
/// audit: the fast path of the batch apply could take them for visits and nothing noticed).
final class HysteresisOffTests: XCTestCase {
    /// A status still unknown when the margin goes to 0 is no visit: a fix far outside ends
    /// nothing (no exit), and one inside is the device's first seen inside (an initial
    /// enter, no dwell), as `apply` judges an undetermined pair; `applyCommon`, which the
    /// batch takes without hysteresis, must leave such a pair to it.
    func testAnUnknownStatusLeftByTheMarginIsNoVisitOnceItIsOff() throws {
        var e = try EventEngine(settings: EventSettings())
        _ = try e.updateSettings { $0.hysteresisMargin = 20 }
        XCTAssertTrue(e.add([.circle(id: "c", lon: 0, lat: 0, radius: 100)]).results.allSatisfy { $0.error == nil })
        // Both within the margin of the boundary, inside it: status unknown.
        XCTAssertEqual(summary(e.evaluate([fixEast("out", 90, 0), fixEast("in", 90, 0)]).events), [])
        XCTAssertEqual(e.status(device: "out", fence: "c"), .unknown)
        XCTAssertEqual(e.status(device: "in", fence: "c"), .unknown)
        XCTAssertEqual(try e.updateSettings { $0.hysteresisMargin = 0 }, [])
        // Dwell would be due for a visit that began at 0.
        let r = e.evaluate([fixEast("out", 300, 700), fixEast("in", 50, 700)])
        XCTAssertEqual(summary(r.events), ["700 in c enter initial"])
        XCTAssertEqual(e.status(device: "out", fence: "c"), .outside)
        XCTAssertEqual(e.status(device: "in", fence: "c"), .inside)
        XCTAssertEqual(summary(e.evaluate([fixEast("in", 400, 800)]).events), ["800 in c exit 100s"])
    }
}
