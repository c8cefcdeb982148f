import HTTPServer

/// The router's verdict for one request.
public enum RouteMatch: Sendable, Equatable {
    case matched(Route, requiresAuthentication: Bool)
    case notFound
    /// The path exists with other methods; answer 405 with this Allow list.
    case methodNotAllowed(allowedMethods: [String])

    /// The problem to answer when nothing matched; nil for a match.
    public var problem: Problem? {
        switch self {
        case .matched: return nil
        case .notFound: return Problem(.notFound, detail: "No such route.")
        case .methodNotAllowed(let allowed):
            var headers = HTTPHeaders()
            headers.add(name: "Allow", value: allowed.joined(separator: ", "))
            return Problem(.methodNotAllowed, detail: "Allowed: \(allowed.joined(separator: ", ")).", headers: headers)
        }
    }
}
