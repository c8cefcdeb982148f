import Logging

/// The audit trail: one JSON log line per money movement (PointsService)
/// and per saga outcome (PaymentsService), marked `"audit":"true"` so a
/// log pipeline can route them apart. Written at level notice whatever
/// `LOG_LEVEL` says: an operator may quieten the logs, never the audit.
/// Like every log line, it carries ids, amounts and reason codes only: no
/// email, JWS, token or key.
public struct AuditLog: Sendable {
    /// The field, and its value, that marks an audit line.
    public static let markerField = "audit"
    public static let markerValue = "true"

    private let logger: Logger

    /// Audit lines through `logger`'s sink, service name and context.
    public init(_ logger: Logger) {
        var unfiltered = logger
        unfiltered.minimumLevel = .debug
        self.logger = unfiltered
    }

    /// Writes one audit line: a fixed `message` and the movement's fields.
    public func record(_ message: String, _ fields: [String: String]) {
        var fields = fields
        fields[Self.markerField] = Self.markerValue
        logger.notice(message, fields)
    }
}
