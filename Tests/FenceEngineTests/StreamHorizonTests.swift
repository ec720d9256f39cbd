@testable import FenceEngine
import XCTest

/// A streamed fix is applied once it is the lateness behind the latest fix seen: at exactly
/// that, not one fix later (a mutation audit found that holding it longer went unnoticed).
final class StreamHorizonTests: XCTestCase {
    func testAFixExactlyTheLatenessBehindIsDue() {
        var engine = EventEngine()
        XCTAssertTrue(engine.add([.circle(id: "c", lon: 0, lat: 0, radius: 1000)]).results.allSatisfy { $0.error == nil })
        var stream = EventStream(engine: engine, lateness: 10)
        XCTAssertEqual(summary(stream.push(Position(device: "v", time: 0, lon: 0, lat: 0))), [])
        XCTAssertEqual(summary(stream.push(Position(device: "v", time: 9.5, lon: 1, lat: 1))), [])
        XCTAssertEqual(stream.pendingCount, 2)
        XCTAssertEqual(summary(stream.push(Position(device: "w", time: 10, lon: 0, lat: 0))), ["0 v c enter initial"])
        XCTAssertEqual(stream.pendingCount, 2)
        XCTAssertEqual(summary(stream.push(Position(device: "w", time: 19.5, lon: 0, lat: 0))), ["9 v c exit 9s"])
        XCTAssertEqual(summary(stream.flush()), ["10 w c enter initial"])
        XCTAssertEqual(stream.late, 0)
    }
}
