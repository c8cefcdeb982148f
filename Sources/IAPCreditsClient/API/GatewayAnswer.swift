import Foundation

/// Reads one HTTP answer of the gateway: the documented 200 body, an RFC
/// 9457 problem, or neither. Pure, so every shape is tested without a network.
enum GatewayAnswer {
    static func interpret<Response>(
        status: Int, requestID: String?, retryAfter: String? = nil, body: Data, decode: (Data) throws -> Response
    ) -> Result<Response, CreditsError> {
        let retryAfterSeconds = retryAfterSeconds(retryAfter)
        guard body.count <= ClientLimits.responseBytesMax else {
            return .failure(
                CreditsError(
                    .unexpectedAnswer(status: status), requestID: requestID, retryAfterSeconds: retryAfterSeconds))
        }
        if status == 200 {
            guard let value = try? decode(body) else {
                return .failure(CreditsError(.unexpectedAnswer(status: status), requestID: requestID))
            }
            return .success(value)
        }
        guard let problem = problem(status: status, body: body) else {
            return .failure(
                CreditsError(
                    .unexpectedAnswer(status: status), requestID: requestID, retryAfterSeconds: retryAfterSeconds))
        }
        return .failure(CreditsError(.problem(problem), requestID: requestID, retryAfterSeconds: retryAfterSeconds))
    }

    /// A `Retry-After` header's delta-seconds (RFC 9110 §10.2.3), at most
    /// `ClientLimits.retryAfterSecondsMax`; nil when absent or not digits
    /// (an HTTP-date is not read: the gateway sends seconds).
    static func retryAfterSeconds(_ header: String?) -> Int? {
        guard let header, !header.isEmpty, header.utf8.count <= 9,
            header.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            let seconds = Int(header)
        else { return nil }
        return min(seconds, ClientLimits.retryAfterSecondsMax)
    }

    /// A problem document needs a string `code`; the rest is optional.
    static func problem(status: Int, body: Data) -> GatewayProblem? {
        guard let document = try? JSONDecoder().decode(ProblemDocument.self, from: body), !document.code.isEmpty else {
            return nil
        }
        return GatewayProblem(
            code: ProblemCode(wireCode: document.code), status: status, title: document.title,
            detail: document.detail, retryable: document.retryable, field: document.field)
    }

    private struct ProblemDocument: Decodable {
        let code: String
        let title: String?
        let detail: String?
        let retryable: Bool?
        let field: String?
    }
}
