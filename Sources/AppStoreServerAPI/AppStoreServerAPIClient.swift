import Foundation
import RPCCore
import StrictJSON

/// A client of Apple's App Store Server API: HTTPS over HTTP/2 (nghttp2 and
/// OpenSSL, on RPCRuntime's event loop), the server verified against the
/// system trust store or a configured CA, a short-lived ES256 JWT on every
/// request, typed answers and errors, bounded retries of what may succeed
/// later (obeying `Retry-After`), and helpers that walk paginated answers
/// and look in production before sandbox. No global state: make one per
/// configuration and `close()` it. All methods are safe from any task; the
/// signed data it returns is Apple's JWS, to be checked with
/// `SignedDataVerifier` before use.
public final class AppStoreServerAPIClient: Sendable {
    public let configuration: AppStoreServerAPIConfiguration
    private let transport: HTTP2Transport
    private let tokens: TokenCache
    private let policy: RetryPolicy
    private let parser: StrictJSONParser

    /// Loads the trust roots (a file read: make clients at start-up, not
    /// per request) and starts the client's I/O thread. `nowSeconds` (UNIX
    /// time, for the JWT) and `random` (retry jitter, 0..<1) are injectable
    /// for tests.
    public init(
        configuration: AppStoreServerAPIConfiguration,
        nowSeconds: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) },
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) throws(AppStoreServerAPIConfigurationError) {
        try configuration.validate()
        self.configuration = configuration
        let signer = AppStoreAPITokenSigner(
            credentials: configuration.credentials, lifetimeSeconds: configuration.limits.tokenLifetimeSeconds)
        tokens = TokenCache(
            signer: signer, reuseSeconds: configuration.limits.tokenReuseSeconds, nowSeconds: nowSeconds)
        policy = RetryPolicy(limits: configuration.limits, random: random)
        parser = StrictJSONParser(
            documentBytesMax: configuration.limits.responseBodyBytesMax, depthMax: configuration.limits.jsonDepthMax)
        transport = try HTTP2Transport(configuration: configuration)
    }

    /// Ends calls in flight (`cancelled`), closes the connections and stops
    /// the I/O thread. Call once when done.
    public func close() async {
        await transport.close()
    }

    // MARK: Endpoints

    /// Get Transaction Info: `GET /inApps/v1/transactions/{transactionId}`
    /// → `{"signedTransactionInfo": JWS}`; 404 with 4040010 when the id is
    /// not in this environment for this bundle id.
    public func transactionInfo(transactionId: String, environment: AppStoreServerEnvironment)
        async throws(AppStoreServerAPIError) -> TransactionInfoResponse
    {
        let path = "/inApps/v1/transactions/" + (try Self.segment(transactionId, "transactionId"))
        let reader = try await jsonCall("GET", path, environment: environment, what: "TransactionInfoResponse")
        return TransactionInfoResponse(signedTransactionInfo: try reader.requiredString("signedTransactionInfo"))
    }

    /// Get Transaction History (v2): `GET /inApps/v2/history/{transactionId}`
    /// with the query's filters and `revision` for later pages → a
    /// `HistoryResponse` of at most 20 transactions (see `allTransactionHistory`).
    public func transactionHistory(
        transactionId: String, revision: String? = nil, query: TransactionHistoryQuery = .init(),
        environment: AppStoreServerEnvironment
    ) async throws(AppStoreServerAPIError) -> SignedTransactionsPage {
        let path = "/inApps/v2/history/" + (try Self.segment(transactionId, "transactionId"))
        let reader = try await jsonCall(
            "GET", path, query: query.parameters(revision: revision), environment: environment, what: "HistoryResponse")
        return try Self.page(reader)
    }

    /// Get Refund History (v2): `GET /inApps/v2/refund/lookup/{transactionId}`
    /// with `revision` for later pages → a `RefundHistoryResponse`.
    public func refundHistory(
        transactionId: String, revision: String? = nil,
        environment: AppStoreServerEnvironment
    ) async throws(AppStoreServerAPIError) -> SignedTransactionsPage {
        let path = "/inApps/v2/refund/lookup/" + (try Self.segment(transactionId, "transactionId"))
        let query = revision.map { [("revision", $0)] } ?? []
        let reader = try await jsonCall(
            "GET", path, query: query, environment: environment, what: "RefundHistoryResponse")
        return try Self.page(reader)
    }

    /// Get Notification History: `POST /inApps/v1/notifications/history`
    /// with the request as body and `paginationToken` in the query for later
    /// pages → `{"notificationHistory": [{signedPayload, sendAttempts}],
    /// "hasMore", "paginationToken"}` (see `allNotificationHistory`).
    public func notificationHistory(
        _ request: NotificationHistoryRequest, paginationToken: String? = nil,
        environment: AppStoreServerEnvironment
    ) async throws(AppStoreServerAPIError) -> NotificationHistoryPage {
        guard request.startDate < request.endDate else {
            throw AppStoreServerAPIError(kind: .invalidArgument, detail: "startDate must precede endDate")
        }
        let query = paginationToken.map { [("paginationToken", $0)] } ?? []
        let reader = try await jsonCall(
            "POST", "/inApps/v1/notifications/history", query: query, body: request.json,
            environment: environment, what: "NotificationHistoryResponse")
        var items: [NotificationHistoryItem] = []
        for element in try reader.array("notificationHistory") {
            let item = try ResponseReader(element, what: "notificationHistory[]")
            items.append(
                NotificationHistoryItem(
                    signedPayload: try item.requiredString("signedPayload"), sendAttempts: try SendAttempt.list(item)))
        }
        return NotificationHistoryPage(
            notificationHistory: items, hasMore: try reader.bool("hasMore") ?? false,
            paginationToken: try reader.string("paginationToken"))
    }

    /// Request a Test Notification: `POST /inApps/v1/notifications/test` →
    /// `{"testNotificationToken"}`; Apple then sends a TEST notification to
    /// the environment's notification URL, asynchronously.
    public func requestTestNotification(environment: AppStoreServerEnvironment) async throws(AppStoreServerAPIError)
        -> String
    {
        let reader = try await jsonCall(
            "POST", "/inApps/v1/notifications/test", environment: environment, what: "SendTestNotificationResponse")
        return try reader.requiredString("testNotificationToken")
    }

    /// Get Test Notification Status: `GET /inApps/v1/notifications/test/{testNotificationToken}`
    /// → `CheckTestNotificationResponse` (`signedPayload`, `sendAttempts`).
    public func testNotificationStatus(
        testNotificationToken: String,
        environment: AppStoreServerEnvironment
    ) async throws(AppStoreServerAPIError) -> TestNotificationStatus {
        let path = "/inApps/v1/notifications/test/" + (try Self.segment(testNotificationToken, "testNotificationToken"))
        let reader = try await jsonCall("GET", path, environment: environment, what: "CheckTestNotificationResponse")
        return TestNotificationStatus(
            signedPayload: try reader.string("signedPayload"), sendAttempts: try SendAttempt.list(reader))
    }

    /// Send Consumption Information (v2): `PUT /inApps/v2/transactions/consumption/{transactionId}`
    /// with a `ConsumptionRequest`; Apple answers 202 Accepted, no body.
    public func sendConsumptionInformation(
        transactionId: String, _ request: ConsumptionRequest,
        environment: AppStoreServerEnvironment
    ) async throws(AppStoreServerAPIError) {
        if let percentage = request.consumptionPercentage,
            !(0...ConsumptionRequest.consumptionPercentageMax).contains(percentage)
        {
            throw AppStoreServerAPIError(
                kind: .invalidArgument, detail: "consumptionPercentage is in milliunits, 0...100000")
        }
        let path = "/inApps/v2/transactions/consumption/" + (try Self.segment(transactionId, "transactionId"))
        _ = try await call("PUT", path, body: request.json, environment: environment)
    }

    /// Look Up Order ID: `GET /inApps/v1/lookup/{orderId}` → `OrderLookupResponse`.
    /// Apple offers it in production only.
    public func lookUpOrderId(_ orderId: String, environment: AppStoreServerEnvironment = .production)
        async throws(AppStoreServerAPIError) -> OrderLookupResponse
    {
        let path = "/inApps/v1/lookup/" + (try Self.segment(orderId, "orderId"))
        let reader = try await jsonCall("GET", path, environment: environment, what: "OrderLookupResponse")
        guard let status = try reader.int64("status") else {
            throw ResponseReader.invalid("OrderLookupResponse.status is missing")
        }
        return OrderLookupResponse(status: status, signedTransactions: try reader.strings("signedTransactions"))
    }

    /// Get App Transaction Info: `GET /inApps/v1/transactions/appTransactions/{transactionId}`
    /// → `{"signedAppTransactionInfo"}` (any transaction id of the customer).
    public func appTransactionInfo(transactionId: String, environment: AppStoreServerEnvironment)
        async throws(AppStoreServerAPIError) -> AppTransactionInfoResponse
    {
        let path = "/inApps/v1/transactions/appTransactions/" + (try Self.segment(transactionId, "transactionId"))
        let reader = try await jsonCall("GET", path, environment: environment, what: "AppTransactionInfoResponse")
        return AppTransactionInfoResponse(
            signedAppTransactionInfo: try reader.requiredString("signedAppTransactionInfo"))
    }

    /// Set App Account Token: `PUT /inApps/v1/transactions/{originalTransactionId}/appAccountToken`
    /// with `{"appAccountToken": UUID}` (`UpdateAppAccountTokenRequest`),
    /// e.g. for a purchase made outside the app (an offer code redeemed in
    /// the App Store). Sent as lower-case UUID text.
    public func setAppAccountToken(
        originalTransactionId: String, appAccountToken: UUID,
        environment: AppStoreServerEnvironment
    ) async throws(AppStoreServerAPIError) {
        let path =
            "/inApps/v1/transactions/" + (try Self.segment(originalTransactionId, "originalTransactionId"))
            + "/appAccountToken"
        let body = JSONValue.object(JSONObject(["appAccountToken": .string(appAccountToken.uuidString.lowercased())]))
        _ = try await call("PUT", path, body: body, environment: environment)
    }

    // MARK: Requests

    /// Longest id accepted in a path segment.
    static let pathSegmentBytesMax = 256

    static func segment(_ value: String, _ name: String) throws(AppStoreServerAPIError) -> String {
        guard !value.isEmpty, value.utf8.count <= pathSegmentBytesMax else {
            throw AppStoreServerAPIError(
                kind: .invalidArgument, detail: "\(name) must be 1-\(pathSegmentBytesMax) bytes")
        }
        return PercentEncoding.encode(value)
    }

    private static func page(_ reader: ResponseReader) throws(AppStoreServerAPIError) -> SignedTransactionsPage {
        SignedTransactionsPage(
            signedTransactions: try reader.strings("signedTransactions"), revision: try reader.string("revision"),
            hasMore: try reader.bool("hasMore") ?? false, bundleId: try reader.string("bundleId"),
            appAppleId: try reader.int64("appAppleId"), environment: try reader.string("environment"))
    }

    private func jsonCall(
        _ method: String, _ path: String, query: [(String, String)] = [], body: JSONValue? = nil,
        environment: AppStoreServerEnvironment, what: String
    ) async throws(AppStoreServerAPIError) -> ResponseReader {
        let response = try await call(method, path, query: query, body: body, environment: environment)
        let value: JSONValue
        do {
            value = try parser.parse(response.body)
        } catch {
            throw ResponseReader.invalid("\(what) is not valid JSON: \(error)")
        }
        return try ResponseReader(value, what: what)
    }

    /// Sends one request, retrying what may succeed later, and returns the
    /// 2xx answer or the final error.
    func call(
        _ method: String, _ path: String, query: [(String, String)] = [], body: JSONValue? = nil,
        environment: AppStoreServerEnvironment
    ) async throws(AppStoreServerAPIError) -> AppStoreHTTPResponse {
        let fullPath = PercentEncoding.pathWithQuery(path, query)
        let bodyBytes = body.map(JSONWriter.bytes(of:))
        var waited = Duration.zero
        var attempt = 0
        while true {
            attempt += 1
            if Task.isCancelled { throw AppStoreServerAPIError(kind: .cancelled, detail: "the task was cancelled") }
            let request = AppStoreHTTPRequest(
                method: method, path: fullPath, headers: try headers(bodyLength: bodyBytes?.count), body: bodyBytes)
            emit(.attempt, environment, method, path, attempt)
            let outcome: Result<AppStoreHTTPResponse, AppStoreServerAPIError>
            switch await transport.send(request, to: environment) {
            case .success(let response) where (200...299).contains(response.status): outcome = .success(response)
            case .success(let response): outcome = .failure(Self.error(from: response, parser: parser))
            case .failure(let error): outcome = .failure(error)
            }
            switch outcome {
            case .success(let response):
                emit(.succeeded, environment, method, path, attempt, status: response.status)
                return response
            case .failure(let error):
                switch policy.decide(after: error, attempt: attempt, waited: waited) {
                case .retry(let wait):
                    emit(
                        .retry, environment, method, path, attempt, status: error.httpStatus, error: error,
                        retryAfter: wait)
                    waited += wait
                    do {
                        try await Task.sleep(for: wait)
                    } catch {
                        throw AppStoreServerAPIError(
                            kind: .cancelled, detail: "the task was cancelled while waiting to retry")
                    }
                case .giveUp:
                    emit(.failed, environment, method, path, attempt, status: error.httpStatus, error: error)
                    throw error
                }
            }
        }
    }

    private func headers(bodyLength: Int?) throws(AppStoreServerAPIError) -> [HTTPHeaderField] {
        var headers = [
            HTTPHeaderField(name: "authorization", value: "Bearer " + (try tokens.token())),
            HTTPHeaderField(name: "accept", value: "application/json"),
            HTTPHeaderField(name: "user-agent", value: "iap-credits-app-store-api/1"),
        ]
        if let bodyLength {
            headers.append(HTTPHeaderField(name: "content-type", value: "application/json"))
            headers.append(HTTPHeaderField(name: "content-length", value: String(bodyLength)))
        }
        return headers
    }

    /// Longest `errorMessage` kept (Apple's are one short sentence).
    static let errorMessageCharactersMax = 200

    /// The typed error for a non-2xx answer: Apple's `{"errorCode",
    /// "errorMessage"}` when the body is that JSON (a 401 usually is plain
    /// text), and `Retry-After`.
    static func error(from response: AppStoreHTTPResponse, parser: StrictJSONParser) -> AppStoreServerAPIError {
        var code: APIErrorCode?
        var message: String?
        if let value = try? parser.parse(response.body), let reader = try? ResponseReader(value, what: "error") {
            code = (try? reader.int64("errorCode"))?.map(APIErrorCode.init(rawValue:))
            message = (try? reader.string("errorMessage"))?.map { text in
                String(
                    text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.prefix(
                        errorMessageCharactersMax
                    ).map(Character.init))
            }
        }
        let retryAfter = response.headers.first(named: "retry-after").flatMap { RetryAfter.parse($0) }
        return AppStoreServerAPIError(
            kind: AppStoreServerAPIError.kind(forStatus: response.status),
            detail: "Apple answered HTTP \(response.status)", httpStatus: response.status,
            apiErrorCode: code, apiErrorMessage: message, retryAfter: retryAfter)
    }

    private func emit(
        _ kind: AppStoreServerAPIEvent.Kind, _ environment: AppStoreServerEnvironment, _ method: String, _ path: String,
        _ attempt: Int, status: Int? = nil, error: AppStoreServerAPIError? = nil, retryAfter: Duration? = nil
    ) {
        guard let sink = configuration.eventSink else { return }
        sink(
            AppStoreServerAPIEvent(
                kind: kind, environment: environment, method: method, path: path, attempt: attempt,
                httpStatus: status, error: error, retryAfter: retryAfter))
    }
}
