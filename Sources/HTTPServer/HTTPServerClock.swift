#if canImport(Glibc)
import Glibc
#endif
import Locking
import UTCTime

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

    /// The `Date` header's value (IMF-fixdate) for now. It changes once a
    /// second, so the text is kept for the second it names and rebuilt only
    /// when the second changes (one lock, uncontended on a loop thread).
    public static func imfFixdate() -> String {
        let seconds = unixSeconds()
        return lastDate.withLock { last in
            if last.seconds != seconds {
                last = (seconds, UTCDateTime(unixMilliseconds: seconds * 1000).imfFixdate)
            }
            return last.text
        }
    }

    private static let lastDate = Mutex<(seconds: Int64, text: String)>((Int64.min, ""))
}
