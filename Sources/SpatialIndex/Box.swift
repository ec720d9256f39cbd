/// An axis-aligned rectangle with inclusive edges: the only geometry the R-tree knows.
///
/// Boxes are closed sets. A point on an edge or a corner is inside, and two boxes that share only
/// an edge or a corner intersect. A point is a box with `minX == maxX` and `minY == maxY`; a
/// segment parallel to an axis is a box of zero width or height.
///
/// The tree requires `minX <= maxX` and `minY <= maxY`, which also rules out NaN; `insert` and the
/// bulk loader check it. Infinite coordinates are allowed.
public struct Box: Sendable, Hashable, BitwiseCopyable {
    public var minX: Double
    public var minY: Double
    public var maxX: Double
    public var maxY: Double

    /// Creates a box from its corners, stored as given (an inverted box is not repaired).
    ///
    /// - Complexity: O(1).
    @inlinable
    public init(minX: Double, minY: Double, maxX: Double, maxY: Double) {
        self.minX = minX
        self.minY = minY
        self.maxX = maxX
        self.maxY = maxY
    }

    /// Whether the point lies in the box, edges and corners included.
    ///
    /// - Parameters:
    ///   - x: The point's x coordinate. NaN is never contained.
    ///   - y: The point's y coordinate. NaN is never contained.
    /// - Complexity: O(1).
    @inlinable
    public func contains(x: Double, y: Double) -> Bool {
        minX <= x && x <= maxX && minY <= y && y <= maxY
    }

    /// Whether the two boxes share at least one point; touching edges or corners count.
    ///
    /// - Parameter other: The box to test against.
    /// - Complexity: O(1).
    @inlinable
    public func intersects(_ other: Box) -> Bool {
        minX <= other.maxX && other.minX <= maxX && minY <= other.maxY && other.minY <= maxY
    }

    /// The smallest box covering both boxes.
    ///
    /// - Parameter other: The box to merge with this one.
    /// - Complexity: O(1).
    @inlinable
    public func union(_ other: Box) -> Box {
        Box(
            minX: Swift.min(minX, other.minX), minY: Swift.min(minY, other.minY),
            maxX: Swift.max(maxX, other.maxX), maxY: Swift.max(maxY, other.maxY))
    }

    /// Width times height: 0 for points and zero-width boxes, `+infinity` for unbounded boxes
    /// (NaN when an infinite side meets a zero one).
    ///
    /// - Complexity: O(1).
    @inlinable
    public var area: Double { (maxX - minX) * (maxY - minY) }

    /// No box: inverted and infinite, so that the first `extend` makes it that point (and
    /// `isOrdered` is false until then).
    public static let empty = Box(minX: .infinity, minY: .infinity, maxX: -.infinity, maxY: -.infinity)

    /// Grows the box to hold the point: the box of a run of points, from `empty`.
    ///
    /// - Complexity: O(1).
    @inlinable
    public mutating func extend(_ x: Double, _ y: Double) {
        minX = Swift.min(minX, x)
        maxX = Swift.max(maxX, x)
        minY = Swift.min(minY, y)
        maxY = Swift.max(maxY, y)
    }
}

extension Box {
    /// Whether `minX <= maxX` and `minY <= maxY` (false when any coordinate is NaN).
    var isOrdered: Bool { minX <= maxX && minY <= maxY }

    /// Half the perimeter, the R* split's "margin".
    var margin: Double { (maxX - minX) + (maxY - minY) }

    /// Area of the common part, 0 when the boxes are disjoint or only touch.
    func overlapArea(_ other: Box) -> Double {
        let w = Swift.min(maxX, other.maxX) - Swift.max(minX, other.minX)
        let h = Swift.min(maxY, other.maxY) - Swift.max(minY, other.minY)
        return w > 0 && h > 0 ? w * h : 0
    }
}
