import FenceEngine
import XCTest

/// `Position.isUsable`, the hot loops' quick check, agrees with `problem`, the reference that
/// names the reason, on every edge value and their combinations.
final class PositionCheckTests: XCTestCase {
    func testQuickCheckAgreesWithProblem() {
        let times: [Double] = [
            0, 1.7e9, -62_135_596_800, -62_135_596_800.001, 253_402_300_800, 253_402_300_799.999, 1.7e12,
            .nan, .infinity, -.infinity,
        ]
        let lons: [Double] = [0, -180, 180, 180.000_000_1, -180.000_000_1, 13.4, .nan, .infinity, -.infinity]
        let lats: [Double] = [0, -90, 90, 90.000_000_1, -90.000_000_1, 52.5, .nan, .infinity, -.infinity]
        let accuracies: [Double?] = [nil, 0, 5, -0.0, -1, .nan, .infinity]
        var checked = 0
        var usable = 0
        for t in times {
            for lon in lons {
                for lat in lats {
                    for a in accuracies {
                        let p = Position(device: "d", time: t, lon: lon, lat: lat, accuracy: a)
                        XCTAssertEqual(p.isUsable, p.problem == nil, "time \(t) lon \(lon) lat \(lat) accuracy \(String(describing: a))")
                        checked += 1
                        if p.isUsable { usable += 1 }
                    }
                }
            }
        }
        // Both outcomes occur: the check is not vacuous.
        XCTAssertEqual(checked, times.count * lons.count * lats.count * accuracies.count)
        XCTAssertEqual(usable, 4 * 4 * 4 * 4)
    }

    /// The last usable time is the last one events write within the year 9999: a time whose
    /// milliseconds round to 10000-01-01 is refused (253402300799.9999 was accepted and written
    /// as the year 10000; independent audit). Both Doubles beside the limit are checked.
    func testTimeLimitIsTheLastMillisecondOfTheYear9999() {
        let limit = 253_402_300_799.9995
        XCTAssertEqual((limit.nextDown * 1000).rounded(), 253_402_300_799_999)
        XCTAssertEqual((limit * 1000).rounded(), 253_402_300_800_000)
        for t in [limit.nextDown, 253_402_300_799.999] {
            let p = Position(device: "d", time: t, lon: 0, lat: 0)
            XCTAssertTrue(p.isUsable, "\(t)")
            XCTAssertNil(p.problem, "\(t)")
        }
        for t in [limit, 253_402_300_799.9999, 253_402_300_800] {
            let p = Position(device: "d", time: t, lon: 0, lat: 0)
            XCTAssertFalse(p.isUsable, "\(t)")
            XCTAssertTrue(p.problem?.contains("outside the years 1-9999") == true, p.problem ?? "nil")
        }
    }

    /// The first usable time is the first one events write within the year 1, rounded as the
    /// last is: -62135596800.0004 (and 0000-12-31T23:59:59.9996Z) write as
    /// 0001-01-01T00:00:00.000Z and were refused (independent audit). Both Doubles beside the
    /// limit are checked.
    func testFirstTimeIsTheFirstMillisecondOfTheYear1() {
        let first = -62_135_596_800.000_496
        XCTAssertEqual(FenceEvent.outputMillisecond(first), -62_135_596_800_000)
        XCTAssertEqual(FenceEvent.outputMillisecond(first.nextDown), -62_135_596_800_001)
        for t in [first, -62_135_596_800.0004, -62_135_596_800] {
            let p = Position(device: "d", time: t, lon: 0, lat: 0)
            XCTAssertTrue(p.isUsable, "\(t)")
            XCTAssertNil(p.problem, "\(t)")
        }
        for t in [first.nextDown, -62_135_596_800.0005, -62_135_596_800.001, -62_135_596_801] {
            let p = Position(device: "d", time: t, lon: 0, lat: 0)
            XCTAssertFalse(p.isUsable, "\(t)")
            XCTAssertTrue(p.problem?.contains("outside the years 1-9999") == true, p.problem ?? "nil")
            XCTAssertFalse(p.problem?.contains("milliseconds") == true, p.problem ?? "nil")
        }
        // Epoch milliseconds are named as the likely mistake.
        let millis = Position(device: "d", time: 1.7e12, lon: 0, lat: 0)
        XCTAssertTrue(millis.problem?.contains("epoch seconds expected, not milliseconds") == true, millis.problem ?? "nil")
        // A date-time written YYYYMMDDhhmmss is named as that (a README audit found it taken
        // for milliseconds); 14 digits that are no such date-time still read as milliseconds.
        let compact = Position(device: "d", time: 20_080_202_153_608, lon: 0, lat: 0)
        XCTAssertTrue(compact.problem?.contains("YYYYMMDDhhmmss") == true, compact.problem ?? "nil")
        for t in [17_000_000_000_000.0, 20_081_302_153_608, 20_080_202_156_008, 1_700_000_000_000] {
            let p = Position(device: "d", time: t, lon: 0, lat: 0)
            XCTAssertTrue(p.problem?.contains("not milliseconds") == true, "\(t): \(p.problem ?? "nil")")
        }
        // Microseconds and nanoseconds are named as what they are.
        // A fix's message names the `--time-format` that reads them.
        for (t, unit, directive) in [
            (1.7e15, "microseconds", "%s%6N"), (1.7e18, "nanoseconds", "%s%9N"), (-1e20, "nanoseconds", "%s%9N"), (9.9e14, "milliseconds", "%s%3N"),
        ] {
            let p = Position(device: "d", time: t, lon: 0, lat: 0)
            XCTAssertTrue(
                p.problem?.hasSuffix("(epoch seconds expected, not \(unit): --time-format \(directive) reads them)") == true, "\(t): \(p.problem ?? "nil")")
        }
    }

    /// A time still out of range when read as a count of a finer unit names the unit that
    /// would read it, and names none when no unit finer than the one given exists (nanoseconds)
    /// or the count is beyond nanoseconds since the year 1 (coverage audit: neither was tested).
    func testCountStillOutOfRangeNamesAFinerUnitOnlyWhenThereIsOne() {
        func problem(_ seconds: Double, _ digits: Int) -> String? {
            Position(device: "v", time: seconds, lon: 0, lat: 0).problem(countDigits: digits)
        }
        // 1.7e18 microseconds read as 1.7e12 seconds: a count of nanoseconds.
        XCTAssertEqual(
            problem(1.7e12, 6), "time 1700000000000.0 is outside the years 1-9999 (a count of nanoseconds, not microseconds: --time-format %s%9N reads them)")
        // Nanoseconds already: nothing finer to suggest.
        XCTAssertEqual(problem(1.7e12, 9), "time 1700000000000.0 is outside the years 1-9999")
        XCTAssertEqual(problem(-1.7e12, 9), "time -1700000000000.0 is outside the years 1-9999")
        XCTAssertEqual(problem(5e11, 9), "time 500000000000.0 is outside the years 1-9999")
        // A count of 1e21 or more is no unit's (past the year 9999 even in nanoseconds).
        XCTAssertEqual(problem(1e18, 3), "time 1e+18 is outside the years 1-9999")
        XCTAssertNil(problem(1.7e9, 9))
    }
}
