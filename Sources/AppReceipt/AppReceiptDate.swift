import UTCTime

/// A date as a receipt writes it (IA5STRING, "interpreted as an RFC 3339
/// date", e.g. `2023-10-19T01:18:54Z`), with its instant when it follows
/// RFC 3339. Dates are informational (Apple's signed transaction has the
/// real ones), so a text in another shape keeps its text and has no
/// instant rather than failing the whole receipt.
public struct AppReceiptDate: Sendable, Equatable, CustomStringConvertible {
    /// The printable ASCII text, as written.
    public let text: String
    /// Milliseconds since 1970-01-01T00:00:00Z (fractions below a
    /// millisecond dropped); nil when `text` is not an RFC 3339 date-time.
    public let millisecondsSince1970: Int64?

    public init(text: String) {
        self.text = text
        // Xcode's older receipts wrote the offset without its colon (`+0800`).
        self.millisecondsSince1970 = UTCDateTime.unixMilliseconds(
            rfc3339: text, leniency: .init(offsetWithoutColon: true))
    }

    public var description: String { text }
}
