extension UTCDateTime {
    /// RFC 9110 IMF-fixdate, e.g. "Sun, 06 Nov 1994 08:49:37 GMT" (the
    /// `Date` header; milliseconds are dropped).
    public var imfFixdate: String {
        var text: [UInt8] = []
        text.reserveCapacity(29)
        text.append(contentsOf: CivilCalendar.weekdayNames[weekday].utf8); text.append(contentsOf: ", ".utf8)
        Self.append(day, width: 2, to: &text); text.append(UInt8(ascii: " "))
        text.append(contentsOf: CivilCalendar.monthNames[month - 1].utf8); text.append(UInt8(ascii: " "))
        Self.append(year, width: 4, to: &text); text.append(UInt8(ascii: " "))
        Self.append(hour, width: 2, to: &text); text.append(UInt8(ascii: ":"))
        Self.append(minute, width: 2, to: &text); text.append(UInt8(ascii: ":"))
        Self.append(second, width: 2, to: &text); text.append(contentsOf: " GMT".utf8)
        return String(decoding: text, as: UTF8.self)
    }

    /// The instant of an RFC 9110 IMF-fixdate (`Retry-After`, `Date`),
    /// names in their exact case; nil for anything else. The two obsolete
    /// HTTP-date forms (RFC 850, asctime) are not read: no server this
    /// system calls sends them, and a nil only means "no date given". The
    /// day name must be one, but is not checked against the date.
    public static func unixMilliseconds(httpDate text: some StringProtocol) -> Int64? {
        var scanner = DateTextScanner(text)
        guard scanner.name(among: CivilCalendar.weekdayNames) != nil,
            scanner.take(UInt8(ascii: ",")), scanner.take(UInt8(ascii: " ")),
            let day = scanner.digits(2), scanner.take(UInt8(ascii: " ")),
            let monthIndex = scanner.name(among: CivilCalendar.monthNames), scanner.take(UInt8(ascii: " ")),
            let year = scanner.digits(4), scanner.take(UInt8(ascii: " ")),
            let hour = scanner.digits(2), scanner.take(UInt8(ascii: ":")),
            let minute = scanner.digits(2), scanner.take(UInt8(ascii: ":")),
            let second = scanner.digits(2), scanner.take(UInt8(ascii: " ")),
            scanner.name(among: ["GMT"]) != nil, scanner.atEnd
        else { return nil }
        let month = Int64(monthIndex + 1)
        guard (1...CivilCalendar.daysIn(month: month, year: year)).contains(day), hour <= 23, minute <= 59, second <= 60
        else { return nil }
        return unixMilliseconds(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    }
}
