@testable import FenceEngine
import XCTest

/// Dwell and the exit delay are due at exactly their duration, not a sub-millisecond before
/// (README: durations are compared to the microsecond, or to the rounding of the times).
final class DurationEdgeTests: XCTestCase {
    let square = [(0.0, 0.0), (1, 0), (1, 1), (0, 1), (0, 0)].map { LonLat(lon: $0.0, lat: $0.1) }

    func engine(_ configure: (inout EventSettings) -> Void) throws -> EventEngine {
        var settings = EventSettings()
        configure(&settings)
        var e = try EventEngine(settings: settings)
        XCTAssertTrue(e.add([.polygon(id: "sq", exterior: square)]).results.allSatisfy { $0.error == nil })
        return e
    }

    func fix(_ t: Double, _ lon: Double, _ lat: Double) -> Position { Position(device: "v", time: t, lon: lon, lat: lat) }

    /// Half a millisecond short of the dwell time (a whole step of a written time) is short:
    /// no dwell until the fix at the time itself.
    func testDwellIsNotDueHalfAMillisecondEarly() throws {
        var e = try engine { $0.dwell = 600 }
        let r = e.evaluate([fix(1000, 0.5, 0.5), fix(1599.9995, 0.5, 0.5), fix(1600, 0.5, 0.5)])
        XCTAssertEqual(r.events.map(\.kind), [.enter, .dwell])
        XCTAssertEqual(r.events.last?.time, 1600)
    }

    /// The same for the exit delay: outside from 2000, the fix at 2059.9995 is still within
    /// the delay; the exit comes at 2060.
    func testExitDelayIsNotOverHalfAMillisecondEarly() throws {
        var e = try engine { $0.exitDelay = 60 }
        let r = e.evaluate([fix(1000, 0.5, 0.5), fix(2000, 2, 2), fix(2059.9995, 2, 2), fix(2060, 2, 2)])
        XCTAssertEqual(summary(r.events), ["1000 v sq enter initial", "2060 v sq exit 1060s"])
    }
}
