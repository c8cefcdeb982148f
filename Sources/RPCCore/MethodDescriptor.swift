/// Names one RPC: the fully qualified service and the method, e.g.
/// `MethodDescriptor(service: "points.v1.Points", method: "Grant")`.
public struct MethodDescriptor: Hashable, Sendable, CustomStringConvertible {
    public var service: String
    public var method: String

    public init(service: String, method: String) {
        self.service = service
        self.method = method
    }

    /// The HTTP/2 `:path`, `/service/method`.
    public var path: String { "/\(service)/\(method)" }

    /// Parses a `:path` of the form `/service/method`.
    public init?(path: String) {
        if let parsed = Self.parseASCII(path) {
            self = parsed
            return
        }
        guard path.hasPrefix("/") else { return nil }
        let parts = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return nil }
        self.init(service: String(parts[0]), method: String(parts[1]))
    }

    public var description: String { path }

    /// The common case, parsed on UTF-8 bytes without splitting into
    /// Characters: an all-ASCII `/service/method`. Nil when the path is
    /// not ASCII or not of that form; `init?(path:)` then decides.
    private static func parseASCII(_ path: String) -> MethodDescriptor? {
        let slash = UInt8(ascii: "/")
        let bytes = path.utf8
        guard bytes.first == slash, bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
        let rest = bytes.index(after: bytes.startIndex)
        guard let separator = bytes[rest...].firstIndex(of: slash) else { return nil }
        let methodStart = bytes.index(after: separator)
        guard separator > rest, methodStart < bytes.endIndex,
            !bytes[methodStart...].contains(slash)
        else { return nil }
        return MethodDescriptor(service: String(path[rest..<separator]), method: String(path[methodStart...]))
    }
}
