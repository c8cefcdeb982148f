extension UTCDateTime {
    /// RFC 3339 in UTC with milliseconds, e.g. "2026-04-27T10:00:00.000Z"
    /// (every timestamp the system writes: log lines and API answers).
    public var rfc3339: String {
        var text: [UInt8] = []
        text.reserveCapacity(24)
        Self.append(year, width: 4, to: &text); text.append(UInt8(ascii: "-"))
        Self.append(month, width: 2, to: &text); text.append(UInt8(ascii: "-"))
        Self.append(day, width: 2, to: &text); text.append(UInt8(ascii: "T"))
        Self.append(hour, width: 2, to: &text); text.append(UInt8(ascii: ":"))
        Self.append(minute, width: 2, to: &text); text.append(UInt8(ascii: ":"))
        Self.append(second, width: 2, to: &text); text.append(UInt8(ascii: "."))
        Self.append(millisecond, width: 3, to: &text); text.append(UInt8(ascii: "Z"))
        return String(decoding: text, as: UTF8.self)
    }

    /// How far a reader of RFC 3339 date-times bends.
    public struct RFC3339Leniency: Sendable, Equatable {
        /// Accept an offset written without its colon (`+0800`), as Xcode's
        /// older StoreKit receipts wrote it.
        public var offsetWithoutColon: Bool

        public init(offsetWithoutColon: Bool = false) { self.offsetWithoutColon = offsetWithoutColon }

        /// RFC 3339 exactly.
        public static let strict = RFC3339Leniency()
    }

    /// The instant of an RFC 3339 date-time, `YYYY-MM-DDTHH:MM:SS`, an
    /// optional fraction of 1...9 digits (below a millisecond dropped), then
    /// `Z` or a `+HH:MM` / `-HH:MM` offset (`T` and `Z` in either case);
    /// nil for anything else, a date-time without a zone included.
    public static func unixMilliseconds(rfc3339 text: some StringProtocol, leniency: RFC3339Leniency = .strict)
        -> Int64?
    {
        var scanner = DateTextScanner(text)
        guard let date = fullDate(&scanner), scanner.take(UInt8(ascii: "T"), UInt8(ascii: "t")),
            let hour = scanner.digits(2), scanner.take(UInt8(ascii: ":")),
            let minute = scanner.digits(2), scanner.take(UInt8(ascii: ":")),
            let second = scanner.digits(2), hour <= 23, minute <= 59, second <= 60
        else { return nil }
        var milliseconds: Int64 = 0
        if scanner.take(UInt8(ascii: ".")) {
            let fraction = scanner.digitRun(keeping: 3)
            guard (1...9).contains(fraction.length) else { return nil }
            milliseconds = fraction.value
            for _ in fraction.kept..<3 { milliseconds *= 10 }
        }
        guard let offsetSeconds = zoneOffsetSeconds(&scanner, leniency: leniency), scanner.atEnd else { return nil }
        let local = unixMilliseconds(
            year: date.year, month: date.month, day: date.day, hour: hour, minute: minute, second: second)
        return local + milliseconds - offsetSeconds * 1_000
    }

    /// The instant of an RFC 3339 `full-date` (`YYYY-MM-DD`) at UTC midnight.
    public static func unixMilliseconds(fullDate text: some StringProtocol) -> Int64? {
        var scanner = DateTextScanner(text)
        guard let date = fullDate(&scanner), scanner.atEnd else { return nil }
        return unixMilliseconds(year: date.year, month: date.month, day: date.day, hour: 0, minute: 0, second: 0)
    }

    private static func fullDate(_ scanner: inout DateTextScanner) -> (year: Int64, month: Int64, day: Int64)? {
        guard let year = scanner.digits(4), scanner.take(UInt8(ascii: "-")),
            let month = scanner.digits(2), scanner.take(UInt8(ascii: "-")),
            let day = scanner.digits(2),
            (1...12).contains(month), (1...CivilCalendar.daysIn(month: month, year: year)).contains(day)
        else { return nil }
        return (year, month, day)
    }

    /// `Z`, or `±HH:MM` (east of UTC positive), in seconds.
    private static func zoneOffsetSeconds(_ scanner: inout DateTextScanner, leniency: RFC3339Leniency) -> Int64? {
        if scanner.take(UInt8(ascii: "Z"), UInt8(ascii: "z")) { return 0 }
        let sign: Int64 = scanner.next == UInt8(ascii: "-") ? -1 : 1
        guard scanner.take(UInt8(ascii: "+"), UInt8(ascii: "-")), let hours = scanner.digits(2) else { return nil }
        guard scanner.take(UInt8(ascii: ":")) || leniency.offsetWithoutColon else { return nil }
        guard let minutes = scanner.digits(2), hours <= 23, minutes <= 59 else { return nil }
        return sign * (hours * 3_600 + minutes * 60)
    }
}
