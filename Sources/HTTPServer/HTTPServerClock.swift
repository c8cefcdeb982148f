#if canImport(Glibc)
import Glibc
#endif

/// The two clocks the I/O edge hands to the pure layers: a monotonic one
/// for timeouts and durations, and wall-clock Unix time for token expiry
/// and the `Date` header.
public enum HTTPServerClock {
    private static let origin = ContinuousClock.now

    /// Milliseconds on a monotonic clock (only differences mean anything).
    public static func monotonicMilliseconds() -> Int64 {
        let (seconds, attoseconds) = origin.duration(to: .now).components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    /// Wall-clock Unix time in milliseconds.
    public static func unixMilliseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }

    /// Wall-clock Unix time in whole seconds.
    public static func unixSeconds() -> Int64 { unixMilliseconds() / 1000 }
}
