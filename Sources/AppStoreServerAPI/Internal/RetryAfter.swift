import Foundation

/// RFC 9110 §10.2.3 `Retry-After`: delay-seconds or an HTTP-date. Apple's
/// App Store Server API documentation does not promise the header on 429;
/// the client obeys it when present and backs off on its own otherwise.
enum RetryAfter {
    /// Longest delay accepted as a number (a day); larger is treated as that.
    static let secondsMax: Int64 = 86_400

    static func parse(_ value: String, now: Date = Date()) -> Duration? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
            guard text.utf8.count <= 12, let seconds = Int64(text) else { return .seconds(secondsMax) }
            return .seconds(min(seconds, secondsMax))
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        guard let date = formatter.date(from: text) else { return nil }
        let seconds = max(0, min(date.timeIntervalSince(now), Double(secondsMax)))
        return .milliseconds(Int64(seconds * 1000))
    }
}
