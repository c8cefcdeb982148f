import Foundation
import RPCRuntime

/// Parsing of `host:port` addresses as operators write them
/// (`127.0.0.1:50051`, `[::1]:50051`, `points:50052`).
extension HostAndPort {
    /// Parses `host:port`; the port must be 0...65535.
    public init(parsing text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        var host: Substring
        var portText: Substring
        if trimmed.hasPrefix("[") {
            guard let close = trimmed.firstIndex(of: "]"), trimmed[trimmed.index(after: close)...].hasPrefix(":") else {
                throw CommandLineError("bad address \(text): expected [v6]:port")
            }
            host = trimmed[trimmed.index(after: trimmed.startIndex)..<close]
            portText = trimmed[trimmed.index(close, offsetBy: 2)...]
        } else {
            guard let colon = trimmed.lastIndex(of: ":") else {
                throw CommandLineError("bad address \(text): expected host:port")
            }
            host = trimmed[..<colon]
            portText = trimmed[trimmed.index(after: colon)...]
        }
        guard !host.isEmpty, let port = Int(portText), (0...65535).contains(port) else {
            throw CommandLineError("bad address \(text): expected host:port with a port in 0...65535")
        }
        self.init(host: String(host), port: port)
    }

    /// Parses a comma-separated list such as `POINTS_ADDR`.
    public static func parseList(_ text: String) throws -> [HostAndPort] {
        let parts = text.split(separator: ",").map(String.init).filter {
            !$0.trimmingCharacters(in: .whitespaces).isEmpty
        }
        guard !parts.isEmpty else { throw CommandLineError("empty address list") }
        return try parts.map(HostAndPort.init(parsing:))
    }
}
