import SpatialIndex
import XCTest

final class BoxTests: XCTestCase {
    let unit = Box(minX: 0, minY: 0, maxX: 1, maxY: 1)

    func testContainsIsInclusiveOnEdgesAndCorners() {
        for (x, y) in [
            (0.0, 0.0), (1, 1), (0, 1), (1, 0), (0.5, 0), (0.5, 1), (0, 0.5), (1, 0.5), (0.5, 0.5),
        ] {
            XCTAssertTrue(unit.contains(x: x, y: y), "(\(x), \(y))")
        }
        for (x, y) in [
            (-0.000001, 0.5), (1.000001, 0.5), (0.5, -1e-9), (0.5, 1 + 1e-9), (.nan, 0.5),
        ] {
            XCTAssertFalse(unit.contains(x: x, y: y), "(\(x), \(y))")
        }
    }

    func testPointBoxContainsOnlyItself() {
        let p = Box(minX: 3, minY: 4, maxX: 3, maxY: 4)
        XCTAssertTrue(p.contains(x: 3, y: 4))
        XCTAssertFalse(p.contains(x: 3, y: 4.0.nextUp))
        XCTAssertEqual(p.area, 0)
    }

    func testIntersectsIsInclusive() {
        XCTAssertTrue(unit.intersects(Box(minX: 1, minY: 1, maxX: 2, maxY: 2)), "corner touch")
        XCTAssertTrue(unit.intersects(Box(minX: 1, minY: 0.2, maxX: 2, maxY: 0.3)), "edge touch")
        XCTAssertTrue(
            unit.intersects(Box(minX: 0.5, minY: 0.5, maxX: 0.5, maxY: 0.5)), "point inside")
        XCTAssertTrue(unit.intersects(Box(minX: -1, minY: -1, maxX: 2, maxY: 2)), "covering")
        XCTAssertFalse(unit.intersects(Box(minX: 1.0.nextUp, minY: 0, maxX: 2, maxY: 1)))
        XCTAssertFalse(unit.intersects(Box(minX: 0, minY: -2, maxX: 1, maxY: -1e-300)))
    }

    func testUnionAndArea() {
        let b = Box(minX: 2, minY: -1, maxX: 3, maxY: 0.5)
        XCTAssertEqual(unit.union(b), Box(minX: 0, minY: -1, maxX: 3, maxY: 1))
        XCTAssertEqual(unit.union(unit), unit)
        XCTAssertEqual(b.area, 1.5)
        XCTAssertEqual(Box(minX: 0, minY: 0, maxX: 0, maxY: 5).area, 0)
        XCTAssertEqual(Box(minX: -.infinity, minY: 0, maxX: .infinity, maxY: 1).area, .infinity)
    }
}
