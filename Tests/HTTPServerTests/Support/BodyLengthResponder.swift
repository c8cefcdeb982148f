@testable import HTTPServer

/// Answers 200 with the length of the body it got, and a framing failure
/// with its status and its reason as the body (`bufferedBytesExhausted`,
/// `requestTimeout`, ...).
struct BodyLengthResponder: HTTPResponder {
    func respond(to request: HTTPRequest, origin: RequestOrigin) async -> HTTPResponse {
        HTTPResponse(status: 200, body: Array("\(request.body.count)".utf8))
    }

    func framingFailure(_ error: HTTPRequestError, origin: RequestOrigin) -> HTTPResponse {
        HTTPResponse(status: error.status, body: Array(error.reason.rawValue.utf8))
    }
}
