import Foundation

/// How a `CreditsClient` paces itself. The defaults suit an app; tests
/// shorten the retry delays and fix the clock and the jitter.
public struct CreditsClientConfiguration: Sendable {
    public var retrySchedule: RetrySchedule
    /// The wall clock (record timestamps).
    public var now: @Sendable () -> Date
    /// A number in 0..<1 for retry jitter.
    public var unitRandom: @Sendable () -> Double

    public init(
        retrySchedule: RetrySchedule = RetrySchedule(), now: @escaping @Sendable () -> Date = { Date() },
        unitRandom: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.retrySchedule = retrySchedule
        self.now = now
        self.unitRandom = unitRandom
    }
}
