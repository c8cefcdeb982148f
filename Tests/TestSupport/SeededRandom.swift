import Foundation

/// SplitMix64: a small seeded generator, so a failing random sequence can be
/// replayed from the seed its test prints.
public struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    /// The seed named by `variable` in the environment, else a fresh one.
    public static func seed(from variable: String) -> UInt64 {
        if let text = ProcessInfo.processInfo.environment[variable], let seed = UInt64(text) { return seed }
        return UInt64.random(in: 1...UInt64.max)
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in 0..<bound (0 when bound is 0).
    public mutating func next(upTo bound: UInt64) -> UInt64 {
        bound == 0 ? 0 : next() % bound
    }
}
