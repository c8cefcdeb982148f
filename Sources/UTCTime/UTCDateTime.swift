#if canImport(Glibc)
import Glibc
#endif

/// A UTC calendar time at millisecond precision, computed from Unix
/// milliseconds without Foundation (proleptic Gregorian). The one home of
/// the system's timestamp texts: RFC 3339 (`UTCDateTime+RFC3339.swift`)
/// and the HTTP-date (`UTCDateTime+HTTPDate.swift`), written and read.
public struct UTCDateTime: Sendable, Equatable {
    public let year: Int
    /// 1...12.
    public let month: Int
    /// 1...31.
    public let day: Int
    /// 0...23.
    public let hour: Int
    /// 0...59.
    public let minute: Int
    /// 0...59.
    public let second: Int
    /// 0...999.
    public let millisecond: Int
    /// 0 = Sunday ... 6 = Saturday.
    public let weekday: Int
    /// The instant, in milliseconds since 1970-01-01T00:00:00Z.
    public let unixMilliseconds: Int64

    public init(unixMilliseconds: Int64) {
        self.unixMilliseconds = unixMilliseconds
        let millisecondsPerDay: Int64 = 86_400_000
        var days = unixMilliseconds / millisecondsPerDay
        var remainder = unixMilliseconds % millisecondsPerDay
        if remainder < 0 {
            remainder += millisecondsPerDay
            days -= 1
        }
        millisecond = Int(remainder % 1000)
        second = Int(remainder / 1000 % 60)
        minute = Int(remainder / 60_000 % 60)
        hour = Int(remainder / 3_600_000)
        // 1970-01-01 was a Thursday (4).
        weekday = Int(((days % 7) + 11) % 7)
        let date = CivilCalendar.date(days: days)
        year = Int(date.year)
        month = Int(date.month)
        day = Int(date.day)
    }

    /// The wall clock's current time.
    public static func now() -> UTCDateTime {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return UTCDateTime(unixMilliseconds: Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000)
    }

    /// Milliseconds since 1970 of a calendar time whose fields are already
    /// checked (`second` may be 60, a leap second, read as the next one).
    static func unixMilliseconds(year: Int64, month: Int64, day: Int64, hour: Int64, minute: Int64, second: Int64)
        -> Int64
    {
        let days = CivilCalendar.days(year: year, month: month, day: day)
        return (days * 86_400 + hour * 3_600 + minute * 60 + second) * 1_000
    }

    /// Appends `value` in decimal, zero-padded to `width` digits.
    static func append(_ value: Int, width: Int, to text: inout [UInt8]) {
        var digits: [UInt8] = []
        var rest = value
        repeat {
            digits.append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        } while rest > 0
        if digits.count < width {
            text.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: width - digits.count))
        }
        text.append(contentsOf: digits.reversed())
    }
}
