import Foundation
import UTCTime

/// RFC 9110 §10.2.3 `Retry-After`: delay-seconds or an HTTP-date. Apple's
/// App Store Server API documentation does not promise the header on 429;
/// the client obeys it when present and backs off on its own otherwise.
enum RetryAfter {
    /// Longest delay accepted as a number (a day); larger is treated as that.
    static let secondsMax: Int64 = 86_400

    static func parse(_ value: String, nowUnixMilliseconds now: Int64 = UTCDateTime.now().unixMilliseconds) -> Duration? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
            guard text.utf8.count <= 12, let seconds = Int64(text) else { return .seconds(secondsMax) }
            return .seconds(min(seconds, secondsMax))
        }
        guard let date = UTCDateTime.unixMilliseconds(httpDate: text) else { return nil }
        return .milliseconds(max(0, min(date - now, secondsMax * 1000)))
    }
}
