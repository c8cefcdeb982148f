import HTTPServer

/// An error that knows its public problem. The gateway's single catch site
/// renders any error through `Problem.init(rendering:)`; everything that
/// does not conform becomes INTERNAL, with no detail leaked.
public protocol ProblemConvertible: Error {
    var problem: Problem { get }
}

extension Problem: ProblemConvertible {
    public var problem: Problem { self }

    /// The problem for any error: its own when it has one, else INTERNAL.
    public init(rendering error: any Error, instance: String? = nil) {
        let base = (error as? any ProblemConvertible)?.problem ?? Problem(.internalError)
        self.init(
            base.code, detail: base.detail, instance: instance ?? base.instance, field: base.field,
            headers: base.headers)
    }
}

extension ValidationError: ProblemConvertible {}
extension AuthFailure: ProblemConvertible {}

extension HTTPRequestError: ProblemConvertible {
    /// The problem answered before closing the connection.
    public var problem: Problem {
        let code: ProblemCode
        switch status {
        case 408: code = .requestTimeout
        case 413: code = .payloadTooLarge
        case 414: code = .uriTooLong
        case 417: code = .expectationFailed
        case 429: code = .rateLimited
        case 431: code = .headerFieldsTooLarge
        case 501: code = .featureUnsupported
        case 503: code = .serviceUnavailable
        case 505: code = .httpVersionNotSupported
        default: code = .validationFailedMalformed
        }
        return Problem(code, detail: "HTTP framing error (\(reason.rawValue)).")
    }
}
