import Foundation

/// SplitMix64: a small deterministic generator, so a failing property run
/// can be replayed from its printed seed (`FIELD_RULES_SEED=<seed>`).
struct SeededGenerator: RandomNumberGenerator {
    private(set) var state: UInt64

    init(seed: UInt64) { state = seed }

    /// The seed from `FIELD_RULES_SEED`, else a fresh one.
    static func seedFromEnvironment() -> UInt64 {
        if let text = ProcessInfo.processInfo.environment["FIELD_RULES_SEED"], let seed = UInt64(text) { return seed }
        return UInt64.random(in: 0...UInt64.max)
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
