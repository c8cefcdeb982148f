/// The HTTP/1.x versions the gateway speaks. A request naming HTTP/1.2 or
/// later minor versions is treated as 1.1 (RFC 9110 §6.2); other majors are
/// refused with 505.
public enum HTTPVersion: Sendable, Equatable {
    case http1_0
    case http1_1

    /// The protocol text, e.g. "HTTP/1.1".
    public var text: String {
        switch self {
        case .http1_0: return "HTTP/1.0"
        case .http1_1: return "HTTP/1.1"
        }
    }
}
