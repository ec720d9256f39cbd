/// Seeded pseudo-random numbers for the benchmark's data and the tests' oracles: the same seed
/// gives the same sequence on every machine and every Swift release, which
/// `SystemRandomNumberGenerator` does not.
///
/// The generator is `splitmix64` (Steele, Lea and Flood 2014; java.util.SplittableRandom's):
/// 8 bytes of state, a few multiplies a draw, and it passes BigCrush. Not for anything that
/// needs unpredictability.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    /// The raw state; the next draw adds the golden-ratio increment to it first.
    public var state: UInt64

    /// Starts from `seed` as the raw state (plain splitmix64 seeding).
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits. O(1).
    @inlinable
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1), on the 2^-53 grid.
    @inlinable
    public mutating func unit() -> Double { Double(next() >> 11) * 0x1p-53 }

    /// Uniform in [lo, hi) (hi itself can come out when rounding reaches it).
    @inlinable
    public mutating func uniform(_ lo: Double, _ hi: Double) -> Double { lo + (hi - lo) * unit() }

    /// Uniform integer in `range` (the standard library's unbiased method).
    @inlinable
    public mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }

    /// True with probability `p`.
    @inlinable
    public mutating func chance(_ p: Double) -> Bool { unit() < p }
}
