import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import IAPCreditsClient
import RPCCore
import RPCRuntime

/// The gateways, called round-robin by the caller's counter, over
/// IAPCreditsClient's URLSession transport (ephemeral: nothing written to disk).
struct GatewayHTTP: Sendable {
    let gateways: [HostAndPort]
    let transport = URLSessionTransport()

    /// POSTs `body` (JSON) to `path` on gateway `counter % count`.
    func post(_ path: String, body: String, token: String?, counter: Int) async -> FaultAnswer {
        let gateway = gateways[counter % gateways.count]
        guard let url = URL(string: "http://\(gateway.host):\(gateway.port)\(path)") else {
            return .unexpected("bad URL")
        }
        var request = URLRequest(url: url, timeoutInterval: FaultLimits.httpTimeoutSeconds)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        request.httpBody = Data(body.utf8)
        do {
            let (response, data) = try await transport.send(request)
            return FaultAnswer.http(status: response.statusCode, body: data)
        } catch {
            // No answer: the request may or may not have run. Never print the request (it holds a token).
            return .unknown((error as? URLError).map { "URLError \($0.code.rawValue)" } ?? "transport")
        }
    }
}
