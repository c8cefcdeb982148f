/// Encodes and parses the `grpc-timeout` header: at most eight ASCII digits
/// followed by a unit (H, M, S, m, u, n).
public enum GRPCTimeout {
    /// Encodes a duration with the finest unit that fits in eight digits.
    public static func encode(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let limit: Int64 = 99_999_999
        // Past ~285 years the nanoseconds below would overflow Int64: whole
        // hours (rounded up, capped) say it exactly enough.
        if seconds >= 9_000_000_000 {
            let hours = seconds / 3600 + (seconds % 3600 != 0 || attoseconds > 0 ? 1 : 0)
            return "\(min(hours, limit))H"
        }
        let nanoseconds = max(0, seconds) * 1_000_000_000 + (seconds >= 0 ? attoseconds / 1_000_000_000 : 0)
        let units: [(Int64, Character)] = [
            (1, "n"), (1_000, "u"), (1_000_000, "m"), (1_000_000_000, "S"), (60_000_000_000, "M"),
            (3_600_000_000_000, "H"),
        ]
        for (divisor, unit) in units {
            // Round up so a deadline is never shortened below the caller's intent.
            let value = (nanoseconds + divisor - 1) / divisor
            if value <= limit { return "\(value)\(unit)" }
        }
        return "\(limit)H"
    }

    /// Parses a header value; nil when malformed.
    public static func parse(_ text: String) -> Duration? {
        let utf8 = Array(text.utf8)
        guard utf8.count >= 2, utf8.count <= 9 else { return nil }
        var value: Int64 = 0
        for digit in utf8.dropLast() {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int64(digit - UInt8(ascii: "0"))
        }
        switch utf8.last! {
        case UInt8(ascii: "H"): return .seconds(value * 3600)
        case UInt8(ascii: "M"): return .seconds(value * 60)
        case UInt8(ascii: "S"): return .seconds(value)
        case UInt8(ascii: "m"): return .milliseconds(value)
        case UInt8(ascii: "u"): return .microseconds(value)
        case UInt8(ascii: "n"): return .nanoseconds(value)
        default: return nil
        }
    }
}
