import Foundation
@testable import Demo

/// One HTTP/1.1 answer from the gateway.
struct HTTPAnswer: Sendable {
    let status: Int
    let headers: [(name: String, value: String)]
    let body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    var text: String { String(decoding: body, as: UTF8.self) }
    /// The body as a JSON object (empty when it is not one).
    var json: [String: Any] { ((try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]) ?? [:] }
    /// The problem `code` of an application/problem+json answer.
    var problemCode: String? {
        guard header("Content-Type")?.hasPrefix("application/problem+json") == true else { return nil }
        return json["code"] as? String
    }
}

struct HTTPExchangeError: Error, CustomStringConvertible {
    let description: String
}

/// One HTTP/1.1 exchange with the gateway through the Demo's client (the
/// same client the demo uses), run on its own thread so the cooperative pool
/// never blocks; every socket operation is bounded by a timeout.
enum HTTPExchange {
    static let timeoutSeconds = 20

    static func send(port: Int, method: String, path: String, headers: [(String, String)], body: [UInt8]?) async throws
        -> HTTPAnswer
    {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(
                    with: Result {
                        var client = DemoHTTPClient(host: "127.0.0.1", port: port)
                        client.timeoutSeconds = timeoutSeconds
                        let response = try client.send(method: method, path: path, headers: headers, body: body)
                        return HTTPAnswer(status: response.status, headers: response.headers, body: response.body)
                    })
            }
        }
    }
}
