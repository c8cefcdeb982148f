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
        guard path.hasPrefix("/") else { return nil }
        let parts = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return nil }
        self.init(service: String(parts[0]), method: String(parts[1]))
    }

    public var description: String { path }
}
