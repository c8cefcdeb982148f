import Foundation

/// Parses the ISO text PostgreSQL prints for timestamptz in a UTC session,
/// e.g. "2026-11-29 17:51:34.123456+00" (fraction and offset minutes optional).
enum PostgresTimestamp {
    static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 19, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            bytes[10] == UInt8(ascii: " ") || bytes[10] == UInt8(ascii: "T"),
            bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
            let year = number(bytes, 0, 4), let month = number(bytes, 5, 2), let day = number(bytes, 8, 2),
            let hour = number(bytes, 11, 2), let minute = number(bytes, 14, 2), let second = number(bytes, 17, 2)
        else { return nil }
        var position = 19
        var fraction = 0.0
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            position += 1
            var scale = 0.1
            while position < bytes.count, let digit = digit(bytes[position]) {
                fraction += Double(digit) * scale
                scale /= 10
                position += 1
            }
        }
        var offsetSeconds = 0
        if position < bytes.count {
            let sign = bytes[position]
            guard sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-"),
                let offsetHours = number(bytes, position + 1, 2)
            else { return nil }
            var offsetMinutes = 0
            position += 3
            if bytes.count >= position + 3, bytes[position] == UInt8(ascii: ":") {
                guard let minutes = number(bytes, position + 1, 2) else { return nil }
                offsetMinutes = minutes
                position += 3
            }
            offsetSeconds = (offsetHours * 3600 + offsetMinutes * 60) * (sign == UInt8(ascii: "-") ? -1 : 1)
        }
        // Nothing may follow: " BC" (a year before 1) or seconds in the
        // offset would otherwise be read as another instant.
        guard position == bytes.count else { return nil }
        var components = DateComponents()
        components.calendar = Calendar(identifier: .gregorian)
        components.timeZone = TimeZone(secondsFromGMT: 0)
        components.year = year
        components.month = month
        components.day = day
        components.hour = hour
        components.minute = minute
        components.second = second
        guard let whole = components.date else { return nil }
        return whole.addingTimeInterval(fraction - Double(offsetSeconds))
    }

    private static func digit(_ byte: UInt8) -> Int? {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") ? Int(byte - UInt8(ascii: "0")) : nil
    }

    private static func number(_ bytes: [UInt8], _ start: Int, _ length: Int) -> Int? {
        guard start + length <= bytes.count else { return nil }
        var value = 0
        for position in start..<(start + length) {
            guard let digit = digit(bytes[position]) else { return nil }
            value = value * 10 + digit
        }
        return value
    }
}
