import Foundation

/// An App Store date: milliseconds since 1970-01-01T00:00:00Z, kept exact.
public struct AppStoreTimestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let millisecondsSince1970: Int64

    public init(millisecondsSince1970: Int64) { self.millisecondsSince1970 = millisecondsSince1970 }

    /// The dates a signed payload may carry: 1970-01-01 through
    /// 9999-12-31T23:59:59.999Z. Apple signs none outside them, and a date
    /// outside is refused before anything computes with it.
    public static let payloadRange: ClosedRange<Int64> = 0...253_402_300_799_999

    /// Whole seconds since 1970 (floor), as OpenSSL's verification time wants.
    public var secondsSince1970: Int64 {
        // Floor without `ms - 999`, which overflows near Int64.min.
        let truncated = millisecondsSince1970 / 1000
        return millisecondsSince1970 % 1000 < 0 ? truncated - 1 : truncated
    }

    public var date: Date { Date(timeIntervalSince1970: Double(millisecondsSince1970) / 1000) }

    public static func < (left: AppStoreTimestamp, right: AppStoreTimestamp) -> Bool {
        left.millisecondsSince1970 < right.millisecondsSince1970
    }

    public var description: String { "\(millisecondsSince1970)ms" }
}
