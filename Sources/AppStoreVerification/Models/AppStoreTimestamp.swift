import Foundation

/// An App Store date: milliseconds since 1970-01-01T00:00:00Z, kept exact.
public struct AppStoreTimestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let millisecondsSince1970: Int64

    public init(millisecondsSince1970: Int64) { self.millisecondsSince1970 = millisecondsSince1970 }

    /// Whole seconds since 1970 (floor), as OpenSSL's verification time wants.
    public var secondsSince1970: Int64 {
        millisecondsSince1970 >= 0 ? millisecondsSince1970 / 1000 : (millisecondsSince1970 - 999) / 1000
    }

    public var date: Date { Date(timeIntervalSince1970: Double(millisecondsSince1970) / 1000) }

    public static func < (left: AppStoreTimestamp, right: AppStoreTimestamp) -> Bool {
        left.millisecondsSince1970 < right.millisecondsSince1970
    }

    public var description: String { "\(millisecondsSince1970)ms" }
}
