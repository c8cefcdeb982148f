/// RFC 3339 date-times as receipts write them: `YYYY-MM-DDTHH:MM:SS`, an
/// optional fraction, then `Z` or a `+HH:MM` / `-HH:MM` offset. Xcode's
/// older receipts wrote the offset without its colon (`+0800`), which is
/// accepted too. No Foundation: the day count is Howard Hinnant's
/// days-from-civil.
enum RFC3339 {
    static func millisecondsSince1970(_ text: [UInt8]) -> Int64? {
        var cursor = 0
        func digits(_ count: Int) -> Int64? {
            guard text.count - cursor >= count else { return nil }
            var value: Int64 = 0
            for _ in 0..<count {
                let byte = text[cursor]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
                cursor += 1
            }
            return value
        }
        func take(_ allowed: UInt8...) -> Bool {
            guard cursor < text.count, allowed.contains(text[cursor]) else { return false }
            cursor += 1
            return true
        }
        guard let year = digits(4), take(UInt8(ascii: "-")), let month = digits(2), take(UInt8(ascii: "-")),
              let day = digits(2), take(UInt8(ascii: "T"), UInt8(ascii: "t")),
              let hour = digits(2), take(UInt8(ascii: ":")), let minute = digits(2), take(UInt8(ascii: ":")),
              let second = digits(2)
        else { return nil }
        guard (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
              hour <= 23, minute <= 59, second <= 60
        else { return nil }
        var milliseconds: Int64 = 0
        if take(UInt8(ascii: ".")) {
            var fractionDigits = 0
            while cursor < text.count, text[cursor] >= UInt8(ascii: "0"), text[cursor] <= UInt8(ascii: "9") {
                if fractionDigits < 3 { milliseconds = milliseconds * 10 + Int64(text[cursor] - UInt8(ascii: "0")) }
                fractionDigits += 1
                cursor += 1
            }
            guard (1...9).contains(fractionDigits) else { return nil }
            var scaledDigits = fractionDigits
            while scaledDigits < 3 {
                milliseconds *= 10
                scaledDigits += 1
            }
        }
        var offsetSeconds: Int64 = 0
        if !take(UInt8(ascii: "Z"), UInt8(ascii: "z")) {
            guard cursor < text.count else { return nil }
            let sign: Int64 = text[cursor] == UInt8(ascii: "-") ? -1 : 1
            guard take(UInt8(ascii: "+"), UInt8(ascii: "-")), let offsetHours = digits(2) else { return nil }
            _ = take(UInt8(ascii: ":"))
            guard let offsetMinutes = digits(2), offsetHours <= 23, offsetMinutes <= 59 else { return nil }
            offsetSeconds = sign * (offsetHours * 3600 + offsetMinutes * 60)
        }
        guard cursor == text.count else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second - offsetSeconds
        return seconds * 1_000 + milliseconds
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (years 0-9999 here).
    private static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
