import StrictJSON
import UTCTime

/// Structured logging: one JSON object per line with `ts`, `level`,
/// `service`, `msg` and fields such as `request_id`, written by StrictJSON's
/// writer. Values are rendered as given: callers pass identifiers, codes and
/// masked forms, never a JWS, an email, a bearer token or a key (the
/// end-to-end tests grep for them).
public struct Logger: Sendable {
    public var service: String
    public var minimumLevel: LogLevel
    public var sink: any LogSink
    /// Fields added to every line (e.g. the request id of one call).
    public var context: [String: String]

    public init(service: String, minimumLevel: LogLevel = .info, sink: any LogSink = StandardErrorSink(), context: [String: String] = [:]) {
        self.service = service
        self.minimumLevel = minimumLevel
        self.sink = sink
        self.context = context
    }

    /// A logger whose lines all carry these fields too.
    public func with(_ fields: [String: String]) -> Logger {
        var copy = self
        copy.context.merge(fields) { _, new in new }
        return copy
    }

    public func log(_ level: LogLevel, _ message: String, _ fields: [String: String] = [:]) {
        guard level >= minimumLevel else { return }
        var extra = context
        extra.merge(fields) { _, new in new }
        sink.write(line: Self.line(timestamp: Self.timestamp(), level: level, service: service, message: message, fields: extra))
    }

    public func debug(_ message: String, _ fields: [String: String] = [:]) { log(.debug, message, fields) }
    public func info(_ message: String, _ fields: [String: String] = [:]) { log(.info, message, fields) }
    public func notice(_ message: String, _ fields: [String: String] = [:]) { log(.notice, message, fields) }
    public func warning(_ message: String, _ fields: [String: String] = [:]) { log(.warning, message, fields) }
    public func error(_ message: String, _ fields: [String: String] = [:]) { log(.error, message, fields) }
    public func critical(_ message: String, _ fields: [String: String] = [:]) { log(.critical, message, fields) }

    /// One line: the fixed keys first (lines are easy to scan), then the
    /// other fields sorted by key. A field named like a fixed key is
    /// dropped: the line's own `ts`, `level`, `service` and `msg` win.
    static func line(timestamp: String, level: LogLevel, service: String, message: String, fields: [String: String]) -> String {
        var object = JSONObject()
        object.insert("ts", .string(timestamp))
        object.insert("level", .string(level.name))
        object.insert("service", .string(service))
        object.insert("msg", .string(message))
        for key in fields.keys.sorted() { object.insert(key, .string(fields[key]!)) }
        return JSONWriter.string(of: .object(object))
    }

    static func timestamp() -> String { UTCDateTime.now().rfc3339 }
}
