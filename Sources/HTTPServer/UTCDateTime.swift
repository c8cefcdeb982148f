/// A UTC calendar time computed from Unix milliseconds without Foundation
/// (proleptic Gregorian, days-from-civil arithmetic), for the HTTP `Date`
/// header and RFC 3339 timestamps in responses.
public struct UTCDateTime: Sendable, Equatable {
    public let year: Int
    /// 1...12.
    public let month: Int
    /// 1...31.
    public let day: Int
    public let hour: Int
    public let minute: Int
    public let second: Int
    public let millisecond: Int
    /// 0 = Sunday ... 6 = Saturday.
    public let weekday: Int

    public init(unixMilliseconds: Int64) {
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
        // Civil-from-days: eras of 400 years starting on March 1st.
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        day = Int(dayOfYear - (153 * monthIndex + 2) / 5 + 1)
        month = Int(monthIndex < 10 ? monthIndex + 3 : monthIndex - 9)
        year = Int(yearOfEra + era * 400 + (month <= 2 ? 1 : 0))
    }

    private static let weekdayNames = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// RFC 9110 IMF-fixdate, e.g. "Sun, 06 Nov 1994 08:49:37 GMT".
    public var imfFixdate: String {
        "\(Self.weekdayNames[weekday]), \(pad(day, 2)) \(Self.monthNames[month - 1]) \(pad(year, 4)) "
            + "\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2)) GMT"
    }

    /// RFC 3339 with milliseconds, e.g. "2026-04-27T10:00:00.000Z".
    public var rfc3339: String {
        "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2))"
            + ".\(pad(millisecond, 3))Z"
    }

    private func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
