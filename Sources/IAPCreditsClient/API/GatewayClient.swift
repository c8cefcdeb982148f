import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The gateway's JSON API over HTTP(S). The bearer token comes from the app
/// for every request (`tokenSource`); it is sent in the Authorization
/// header only, never stored, logged or put in an error. On an
/// UNAUTHENTICATED answer the request is sent once more with a refreshed
/// token (`tokenSource(true)`).
public struct GatewayClient: CreditsAPI {
    /// The signed-in user's access token, nil when signed out; `true` asks for a fresh one.
    public typealias TokenSource = @Sendable (_ forceRefresh: Bool) async -> String?

    public let baseURL: URL
    public let timeoutSeconds: Double
    private let tokenSource: TokenSource
    private let transport: any HTTPTransport

    /// `baseURL` is the gateway's origin (plus any path prefix), e.g. `https://api.example.com`.
    public init(
        baseURL: URL, timeoutSeconds: Double = ClientLimits.requestTimeoutSecondsDefault,
        transport: any HTTPTransport = URLSessionTransport(), tokenSource: @escaping TokenSource
    ) {
        self.baseURL = baseURL
        self.timeoutSeconds = timeoutSeconds
        self.transport = transport
        self.tokenSource = tokenSource
    }

    public func accountToken() async throws(CreditsError) -> UUID { try await send(GatewayRoutes.accountToken) }

    public func packages() async throws(CreditsError) -> [CreditPackage] { try await send(GatewayRoutes.packages) }

    public func balance() async throws(CreditsError) -> CreditBalance { try await send(GatewayRoutes.balance) }

    public func verify(_ request: VerifyTransactionRequest) async throws(CreditsError) -> VerifiedGrant {
        let route: GatewayRoute<VerifiedGrant>
        do {
            route = try GatewayRoutes.verify(request)
        } catch {
            throw CreditsError(.invalidRequest("the verify body could not be encoded"))
        }
        return try await send(route)
    }

    public func transactionStatus(transactionId: String) async throws(CreditsError) -> TransactionStatus {
        guard let route = GatewayRoutes.transaction(id: transactionId) else {
            throw CreditsError(.invalidRequest("a transaction id is decimal digits"))
        }
        return try await send(route)
    }

    /// One page of the user's points ledger, newest first.
    public func ledger(pageSize: Int? = nil, pageToken: String? = nil) async throws(CreditsError) -> LedgerPage {
        guard let route = GatewayRoutes.ledger(pageSize: pageSize, pageToken: pageToken) else {
            throw CreditsError(.invalidRequest("a page size of 1...200 and a page token the gateway issued"))
        }
        return try await send(route)
    }

    /// One page of the user's purchases with their status, newest first.
    public func purchaseHistory(pageSize: Int? = nil, pageToken: String? = nil) async throws(CreditsError)
        -> TransactionPage
    {
        guard let route = GatewayRoutes.transactions(pageSize: pageSize, pageToken: pageToken) else {
            throw CreditsError(.invalidRequest("a page size of 1...100 and a page token the gateway issued"))
        }
        return try await send(route)
    }

    /// Sends any route (also one this library does not list yet).
    public func send<Response: Sendable>(_ route: GatewayRoute<Response>) async throws(CreditsError) -> Response {
        let first = try await attempt(route, forceRefresh: false)
        if case .failure(let error) = first, Self.asksForAFreshToken(error) {
            return try await attempt(route, forceRefresh: true).get()
        }
        return try first.get()
    }

    /// UNAUTHENTICATED, or a bare 401 (a proxy or load balancer in front of
    /// the gateway answers without a problem body): the token is refreshed
    /// and the request sent once more.
    static func asksForAFreshToken(_ error: CreditsError) -> Bool {
        switch error.kind {
        case .problem(let problem): problem.code == .unauthenticated
        case .unexpectedAnswer(let status): status == 401
        case .transport, .notSignedIn, .invalidRequest: false
        }
    }

    private func attempt<Response>(_ route: GatewayRoute<Response>, forceRefresh: Bool) async throws(CreditsError)
        -> Result<Response, CreditsError>
    {
        guard let token = await tokenSource(forceRefresh), !token.isEmpty else { throw CreditsError(.notSignedIn) }
        let request = makeRequest(route, token: token)
        let response: HTTPURLResponse
        let body: Data
        do {
            (response, body) = try await transport.send(request)
        } catch {
            throw CreditsError(.transport(Self.cause(of: error)))
        }
        let requestID = response.value(forHTTPHeaderField: "X-Request-Id")
        return GatewayAnswer.interpret(
            status: response.statusCode, requestID: requestID,
            retryAfter: response.value(forHTTPHeaderField: "Retry-After"), body: body, decode: route.decode)
    }

    func makeRequest<Response>(_ route: GatewayRoute<Response>, token: String) -> URLRequest {
        var base = baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        // Paths are fixed texts plus validated digits, so the URL always parses.
        var request = URLRequest(
            url: URL(string: base + route.path)!, cachePolicy: .reloadIgnoringLocalCacheData,
            timeoutInterval: timeoutSeconds)
        request.httpMethod = route.method
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let body = route.body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        return request
    }

    /// A short cause naming no URL, header or body.
    static func cause(of error: any Error) -> String {
        if error is CancellationError { return "cancelled" }
        if let urlError = error as? URLError {
            switch urlError.code {
            case .notConnectedToInternet: return "offline"
            case .timedOut: return "timed out"
            case .cannotConnectToHost, .cannotFindHost: return "cannot connect"
            case .networkConnectionLost: return "connection lost"
            case .cancelled: return "cancelled"
            case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate: return "TLS failed"
            default: return "URL error \(urlError.code.rawValue)"
            }
        }
        return "transport error"
    }
}
