import Foundation
import UTCTime

/// `Retry-After` on a 429 of the App Store Server API. Apple's
/// "Identifying rate limits" says the header "contains a UNIX time, in
/// milliseconds, that informs you when you can next send a request"
/// (13 digits today); RFC 9110 §10.2.3's forms, delay-seconds and an
/// HTTP-date, are read too (stand-ins and proxies send them). A number is
/// a UNIX time in milliseconds from `unixMillisecondsMin` up (no
/// delay-seconds value a server means is that large: it is over 31,000
/// years), delay-seconds below it.
enum RetryAfter {
    /// Longest wait accepted (a day); a later time is treated as that.
    static let secondsMax: Int64 = 86_400
    /// The smallest number read as a UNIX time in milliseconds:
    /// 2001-09-09T01:46:40Z, the first 13-digit one.
    static let unixMillisecondsMin: Int64 = 1_000_000_000_000

    static func parse(_ value: String, nowUnixMilliseconds now: Int64 = UTCDateTime.now().unixMilliseconds) -> Duration?
    {
        let text = value.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
            // More digits than Int64 holds is later than any wait we accept.
            guard let number = Int64(text) else { return .seconds(secondsMax) }
            if number >= unixMillisecondsMin { return wait(untilUnixMilliseconds: number, now: now) }
            return .seconds(min(number, secondsMax))
        }
        guard let date = UTCDateTime.unixMilliseconds(httpDate: text) else { return nil }
        return wait(untilUnixMilliseconds: date, now: now)
    }

    /// From `now` to `time`: zero when it has passed, at most `secondsMax`.
    private static func wait(untilUnixMilliseconds time: Int64, now: Int64) -> Duration {
        .milliseconds(max(0, min(time - now, secondsMax * 1000)))
    }
}
