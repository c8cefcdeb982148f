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

    public init(
        service: String, minimumLevel: LogLevel = .info, sink: any LogSink = StandardErrorSink(),
        context: [String: String] = [:]
    ) {
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
        let line = Self.lineBytes(
            timestamp: Self.timestamp(), level: level, service: service, message: message,
            fields: context.isEmpty ? fields : context.merging(fields) { _, new in new })
        sink.write(utf8Line: line)
    }

    public func debug(_ message: String, _ fields: [String: String] = [:]) { log(.debug, message, fields) }
    public func info(_ message: String, _ fields: [String: String] = [:]) { log(.info, message, fields) }
    public func notice(_ message: String, _ fields: [String: String] = [:]) { log(.notice, message, fields) }
    public func warning(_ message: String, _ fields: [String: String] = [:]) { log(.warning, message, fields) }
    public func error(_ message: String, _ fields: [String: String] = [:]) { log(.error, message, fields) }
    public func critical(_ message: String, _ fields: [String: String] = [:]) { log(.critical, message, fields) }

    /// One line as UTF-8: the fixed keys first (lines are easy to scan),
    /// then the other fields sorted by key. A field named like a fixed key
    /// is dropped: the line's own `ts`, `level`, `service` and `msg` win.
    /// Written member by member: the same text as a `JSONObject` of those
    /// members through `JSONWriter`, without building the object (an audit
    /// line per money movement is on the hot path).
    static func lineBytes(
        timestamp: String, level: LogLevel, service: String, message: String, fields: [String: String]
    ) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(128 + 48 * fields.count)
        output.append(contentsOf: #"{"ts":"#.utf8)
        JSONWriter.writeString(timestamp, into: &output)
        output.append(contentsOf: #","level":"#.utf8)
        JSONWriter.writeString(level.name, into: &output)
        output.append(contentsOf: #","service":"#.utf8)
        JSONWriter.writeString(service, into: &output)
        output.append(contentsOf: #","msg":"#.utf8)
        JSONWriter.writeString(message, into: &output)
        for key in fields.keys.sorted() where !isFixedKey(key) {
            output.append(UInt8(ascii: ","))
            JSONWriter.writeString(key, into: &output)
            output.append(UInt8(ascii: ":"))
            JSONWriter.writeString(fields[key]!, into: &output)
        }
        output.append(UInt8(ascii: "}"))
        return output
    }

    /// Whether `key` is one of the line's own keys, byte for byte (as `JSONObject` compares keys).
    private static func isFixedKey(_ key: String) -> Bool {
        let bytes = key.utf8
        return bytes.elementsEqual("ts".utf8) || bytes.elementsEqual("level".utf8)
            || bytes.elementsEqual("service".utf8)
            || bytes.elementsEqual("msg".utf8)
    }

    static func timestamp() -> String { UTCDateTime.now().rfc3339 }
}
