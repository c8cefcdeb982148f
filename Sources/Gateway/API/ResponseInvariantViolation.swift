/// A backend answer that breaks a rule of the public API (e.g. a negative
/// balance). The gateway answers INTERNAL rather than crash or pass it on;
/// `message` is for logs only.
public struct ResponseInvariantViolation: Error, Sendable, Equatable, ProblemConvertible {
    public let message: String

    public init(_ message: String) { self.message = message }

    public var problem: Problem { Problem(.internalError) }
}
