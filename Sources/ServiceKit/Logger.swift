import Foundation
import Synchronization

/// Severity of a log line.
public enum LogLevel: Int, Comparable, Sendable {
    case debug, info, notice, warning, error, critical

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    var name: String {
        switch self {
        case .debug: "debug"
        case .info: "info"
        case .notice: "notice"
        case .warning: "warning"
        case .error: "error"
        case .critical: "critical"
        }
    }
}

/// Where log lines go; tests capture them to check what is (not) logged.
public protocol LogSink: Sendable {
    func write(line: String)
}

/// Writes each line to standard error in one `write(2)` (lines from many
/// threads never interleave).
public struct StandardErrorSink: LogSink {
    public init() {}
    public func write(line: String) {
        var bytes = Array(line.utf8)
        bytes.append(0x0A)
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(2, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 { if errno == EINTR { continue } else { return } }
                offset += written
            }
        }
    }
}

/// Keeps lines in memory (for tests).
public final class MemorySink: LogSink {
    private let lines = Mutex<[String]>([])
    public init() {}
    public func write(line: String) { lines.withLock { $0.append(line) } }
    public var allLines: [String] { lines.withLock { $0 } }
}

/// Structured logging: one JSON object per line with `ts`, `level`,
/// `service`, `msg` and fields such as `request_id`. Values are rendered as
/// given: callers pass identifiers, codes and masked forms, never a JWS, an
/// email, a bearer token or a key (the end-to-end tests grep for them).
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
        var object: [String: String] = context
        object.merge(fields) { _, new in new }
        object["ts"] = Self.timestamp()
        object["level"] = level.name
        object["service"] = service
        object["msg"] = message
        sink.write(line: Self.render(object))
    }

    public func debug(_ message: String, _ fields: [String: String] = [:]) { log(.debug, message, fields) }
    public func info(_ message: String, _ fields: [String: String] = [:]) { log(.info, message, fields) }
    public func notice(_ message: String, _ fields: [String: String] = [:]) { log(.notice, message, fields) }
    public func warning(_ message: String, _ fields: [String: String] = [:]) { log(.warning, message, fields) }
    public func error(_ message: String, _ fields: [String: String] = [:]) { log(.error, message, fields) }
    public func critical(_ message: String, _ fields: [String: String] = [:]) { log(.critical, message, fields) }

    static func render(_ object: [String: String]) -> String {
        // Fixed leading keys make lines easy to scan; the rest are sorted.
        let leading = ["ts", "level", "service", "msg"]
        var parts: [String] = []
        for key in leading { if let value = object[key] { parts.append("\(quote(key)):\(quote(value))") } }
        for key in object.keys.sorted() where !leading.contains(key) {
            parts.append("\(quote(key)):\(quote(object[key]!))")
        }
        return "{" + parts.joined(separator: ",") + "}"
    }

    static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    static func timestamp() -> String {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        var seconds = time_t(spec.tv_sec)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        // Hand-formatted: this runs for every log line, and String(format:)
        // costs more than the rest of the line.
        var text = ""
        text.reserveCapacity(24)
        func append(_ value: Int, width: Int) {
            let digits = String(value)
            if digits.count < width { text += String(repeating: "0", count: width - digits.count) }
            text += digits
        }
        append(Int(parts.tm_year) + 1900, width: 4); text += "-"
        append(Int(parts.tm_mon) + 1, width: 2); text += "-"
        append(Int(parts.tm_mday), width: 2); text += "T"
        append(Int(parts.tm_hour), width: 2); text += ":"
        append(Int(parts.tm_min), width: 2); text += ":"
        append(Int(parts.tm_sec), width: 2); text += "."
        append(Int(spec.tv_nsec / 1_000_000), width: 3); text += "Z"
        return text
    }
}
