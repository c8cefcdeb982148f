/// An RFC 9457 problem the gateway answered (`application/problem+json`,
/// with the extension members `code`, `retryable` and `field`). The gateway
/// never puts tokens, signed data or emails in `detail`.
public struct GatewayProblem: Sendable, Hashable {
    public let code: ProblemCode
    /// The HTTP status of the answer (VALIDATION_FAILED is 400 or 422).
    public let status: Int
    public let title: String?
    public let detail: String?
    /// The gateway's own `retryable`; the library decides by `code.policy`
    /// (so an unknown code is retried even when this says false).
    public let retryable: Bool?
    /// The request field at fault (validation problems only).
    public let field: String?

    public init(
        code: ProblemCode, status: Int, title: String? = nil, detail: String? = nil, retryable: Bool? = nil,
        field: String? = nil
    ) {
        self.code = code
        self.status = status
        self.title = title
        self.detail = detail
        self.retryable = retryable
        self.field = field
    }
}
