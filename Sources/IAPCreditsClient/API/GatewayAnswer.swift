import Foundation

/// Reads one HTTP answer of the gateway: the documented 200 body, an RFC
/// 9457 problem, or neither. Pure, so every shape is tested without a network.
enum GatewayAnswer {
    static func interpret<Response>(
        status: Int, requestID: String?, body: Data, decode: (Data) throws -> Response
    ) -> Result<Response, CreditsError> {
        guard body.count <= ClientLimits.responseBytesMax else {
            return .failure(CreditsError(.unexpectedAnswer(status: status), requestID: requestID))
        }
        if status == 200 {
            guard let value = try? decode(body) else {
                return .failure(CreditsError(.unexpectedAnswer(status: status), requestID: requestID))
            }
            return .success(value)
        }
        guard let problem = problem(status: status, body: body) else {
            return .failure(CreditsError(.unexpectedAnswer(status: status), requestID: requestID))
        }
        return .failure(CreditsError(.problem(problem), requestID: requestID))
    }

    /// A problem document needs a string `code`; the rest is optional.
    static func problem(status: Int, body: Data) -> GatewayProblem? {
        guard let document = try? JSONDecoder().decode(ProblemDocument.self, from: body), !document.code.isEmpty else { return nil }
        return GatewayProblem(code: ProblemCode(wireCode: document.code), status: status, title: document.title,
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
