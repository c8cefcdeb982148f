import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import IAPCreditsClient
import XCTest

/// A transport that answers from a script and keeps the requests.
final class ScriptedTransport: HTTPTransport, @unchecked Sendable {
    struct Answer {
        var status: Int
        var body: String
        var headers: [String: String] = ["Content-Type": "application/json", "X-Request-Id": "req-42"]
    }

    private let lock = NSLock()
    private var answers: [Result<Answer, URLError>]
    private(set) var requests: [URLRequest] = []

    init(_ answers: [Result<Answer, URLError>]) { self.answers = answers }

    var sent: [URLRequest] { lock.withLock { requests } }

    func send(_ request: URLRequest) async throws -> (HTTPURLResponse, Data) {
        let next = lock.withLock { () -> Result<Answer, URLError> in
            requests.append(request)
            return answers.isEmpty ? .failure(URLError(.cannotConnectToHost)) : answers.removeFirst()
        }
        let answer = try next.get()
        let response = HTTPURLResponse(
            url: request.url!, statusCode: answer.status, httpVersion: "HTTP/1.1", headerFields: answer.headers)!
        return (response, Data(answer.body.utf8))
    }
}

final class GatewayClientTests: XCTestCase {
    let base = URL(string: "https://api.example.test/iap/")!
    let grantJSON =
        #"{"status":"granted","productCode":"starter_pack","transactionId":"2000000000000001","creditsAdded":100,"newBalance":180,"ledgerEventId":"payment.apple_iap:2000000000000001"}"#
    let request = VerifyTransactionRequest(
        productCode: "starter_pack", appStoreProductId: "com.meeyao.qianwen.starter_pack",
        transactionId: "2000000000000001", signedTransactionInfo: "eyJ.jws.sig",
        appAccountToken: UUID(uuidString: "7C4C7A82-2F6F-4E70-B57A-8B0A7F2E9B72"))

    private func client(_ transport: ScriptedTransport, tokens: [String?] = ["token-1", "token-2"]) -> (
        GatewayClient, TokenLog
    ) {
        let log = TokenLog(tokens)
        return (GatewayClient(baseURL: base, transport: transport, tokenSource: { refresh in log.next(refresh) }), log)
    }

    func testVerifySendsTheDocumentedBodyWithTheBearerToken() async throws {
        let transport = ScriptedTransport([.success(.init(status: 200, body: grantJSON))])
        let (client, _) = client(transport)
        let grant = try await client.verify(request)
        XCTAssertEqual(grant.status, .granted)
        XCTAssertEqual(grant.creditsAdded, 100)
        let sent = try XCTUnwrap(transport.sent.first)
        XCTAssertEqual(
            sent.url?.absoluteString, "https://api.example.test/iap/api/v1/payments/apple/transactions/verify")
        XCTAssertEqual(sent.httpMethod, "POST")
        XCTAssertEqual(sent.value(forHTTPHeaderField: "Authorization"), "Bearer token-1")
        XCTAssertEqual(sent.value(forHTTPHeaderField: "Content-Type"), "application/json")
        let body = try XCTUnwrap(JSONSerialization.jsonObject(with: try XCTUnwrap(sent.httpBody)) as? [String: String])
        XCTAssertEqual(
            body,
            [
                "productCode": "starter_pack", "appStoreProductId": "com.meeyao.qianwen.starter_pack",
                "transactionId": "2000000000000001",
                "signedTransactionInfo": "eyJ.jws.sig", "appAccountToken": "7c4c7a82-2f6f-4e70-b57a-8b0a7f2e9b72",
            ])
    }

    func testVerifyWithoutAnAccountTokenLeavesTheMemberOut() async throws {
        let transport = ScriptedTransport([.success(.init(status: 200, body: grantJSON))])
        let (client, _) = client(transport)
        _ = try await client.verify(
            VerifyTransactionRequest(
                productCode: "starter_pack", appStoreProductId: "com.meeyao.qianwen.starter_pack",
                transactionId: "2000000000000001", signedTransactionInfo: "j", appAccountToken: nil))
        let body = try XCTUnwrap(
            JSONSerialization.jsonObject(with: try XCTUnwrap(transport.sent.first?.httpBody)) as? [String: Any])
        XCTAssertNil(body["appAccountToken"])
    }

    func testAProblemBecomesATypedErrorWithTheRequestId() async {
        let problem =
            #"{"type":"urn:iap-credits:problem:payment-grant-failed","title":"Credits could not be granted yet","status":500,"code":"PAYMENT_GRANT_FAILED","retryable":true}"#
        let transport = ScriptedTransport([
            .success(
                .init(
                    status: 500, body: problem,
                    headers: ["Content-Type": "application/problem+json", "X-Request-Id": "r-9"]))
        ])
        let (client, _) = client(transport)
        do {
            _ = try await client.verify(request)
            XCTFail("a problem is an error")
        } catch {
            XCTAssertEqual(error.problemCode, .paymentGrantFailed)
            XCTAssertEqual(error.requestID, "r-9")
            XCTAssertEqual(
                error.kind,
                .problem(
                    GatewayProblem(
                        code: .paymentGrantFailed, status: 500, title: "Credits could not be granted yet",
                        retryable: true)))
            XCTAssertEqual(error.disposition, .keepAndRetry)
        }
    }

    func testUnauthenticatedIsRetriedOnceWithARefreshedToken() async throws {
        let unauthenticated = #"{"code":"UNAUTHENTICATED","status":401,"retryable":true}"#
        let transport = ScriptedTransport([
            .success(.init(status: 401, body: unauthenticated)),
            .success(.init(status: 200, body: #"{"balance":5,"lifetimeEarned":5,"lifetimeSpent":0}"#)),
        ])
        let (client, log) = client(transport)
        let balance = try await client.balance()
        XCTAssertEqual(balance.balance, 5)
        XCTAssertEqual(
            transport.sent.map { $0.value(forHTTPHeaderField: "Authorization") }, ["Bearer token-1", "Bearer token-2"])
        XCTAssertEqual(log.refreshes, [false, true])
    }

    /// A 401 without a problem body (a proxy in front of the gateway) asks
    /// for a fresh token too; other bare statuses do not.
    func testABare401IsRetriedOnceWithARefreshedToken() async throws {
        let transport = ScriptedTransport([
            .success(.init(status: 401, body: "<html>401</html>")),
            .success(.init(status: 200, body: #"{"balance":5,"lifetimeEarned":5,"lifetimeSpent":0}"#)),
        ])
        let (refreshing, log) = client(transport)
        let balance = try await refreshing.balance()
        XCTAssertEqual(balance.balance, 5)
        XCTAssertEqual(log.refreshes, [false, true])
        let bare503 = ScriptedTransport([.success(.init(status: 503, body: "<html>503</html>"))])
        let (other, otherLog) = client(bare503)
        await XCTAssertThrowsCreditsError(try await other.balance()) {
            XCTAssertEqual($0.kind, .unexpectedAnswer(status: 503))
        }
        XCTAssertEqual(otherLog.refreshes, [false])
    }

    func testUnauthenticatedTwiceIsTheError() async {
        let unauthenticated = #"{"code":"UNAUTHENTICATED","status":401,"retryable":true}"#
        let transport = ScriptedTransport([
            .success(.init(status: 401, body: unauthenticated)), .success(.init(status: 401, body: unauthenticated)),
        ])
        let (client, _) = client(transport, tokens: ["a", "b", "c"])
        await XCTAssertThrowsCreditsError(try await client.balance()) {
            XCTAssertEqual($0.problemCode, .unauthenticated)
        }
        XCTAssertEqual(transport.sent.count, 2)
    }

    func testNoTokenIsNotSignedInAndSendsNothing() async {
        let transport = ScriptedTransport([])
        let (client, _) = client(transport, tokens: [nil])
        await XCTAssertThrowsCreditsError(try await client.packages()) { XCTAssertEqual($0.kind, .notSignedIn) }
        XCTAssertTrue(transport.sent.isEmpty)
    }

    func testNoAnswerIsATransportErrorNamingOnlyTheCause() async {
        let transport = ScriptedTransport([.failure(URLError(.timedOut))])
        let (client, _) = client(transport)
        await XCTAssertThrowsCreditsError(try await client.verify(request)) { error in
            XCTAssertEqual(error.kind, .transport("timed out"))
            XCTAssertEqual(error.disposition, .keepAndRetry)
            XCTAssertFalse(error.description.contains("token-1"))
            XCTAssertFalse(error.description.contains("eyJ"))
        }
    }

    func testATransactionIdThatIsNotDigitsIsRefusedBeforeSending() async {
        let transport = ScriptedTransport([])
        let (client, _) = client(transport)
        await XCTAssertThrowsCreditsError(try await client.transactionStatus(transactionId: "12/../../balance")) {
            XCTAssertEqual($0.kind, .invalidRequest("a transaction id is decimal digits"))
        }
        XCTAssertTrue(transport.sent.isEmpty)
    }

    func testTransactionStatusDecodes() async throws {
        let json =
            #"{"transactionId":"2000000000000001","originalTransactionId":"2000000000000001","productCode":"starter_pack","appStoreProductId":"com.meeyao.qianwen.starter_pack","environment":"Production","status":"refunded_insufficient","credits":100,"purchaseDate":"2024-01-01T00:00:00.000Z","ledgerEventId":"payment.apple_iap:2000000000000001"}"#
        let transport = ScriptedTransport([.success(.init(status: 200, body: json))])
        let (client, _) = client(transport)
        let status = try await client.transactionStatus(transactionId: "2000000000000001")
        XCTAssertEqual(status.status, .refundedInsufficient)
        XCTAssertNil(status.revocationDate)
        XCTAssertEqual(transport.sent.first?.url?.path, "/iap/api/v1/payments/apple/transactions/2000000000000001")
    }

    func testAccountTokenDecodes() async throws {
        let transport = ScriptedTransport([
            .success(.init(status: 200, body: #"{"appAccountToken":"7c4c7a82-2f6f-4e70-b57a-8b0a7f2e9b72"}"#))
        ])
        let (client, _) = client(transport)
        let token = try await client.accountToken()
        XCTAssertEqual(token, UUID(uuidString: "7c4c7a82-2f6f-4e70-b57a-8b0a7f2e9b72"))
        XCTAssertEqual(transport.sent.first?.httpMethod, "GET")
        XCTAssertNil(transport.sent.first?.httpBody)
    }
}

/// Hands out tokens in order and remembers whether a refresh was asked.
final class TokenLog: @unchecked Sendable {
    private let lock = NSLock()
    private var tokens: [String?]
    private(set) var asked: [Bool] = []
    init(_ tokens: [String?]) { self.tokens = tokens }
    func next(_ refresh: Bool) -> String? {
        lock.withLock {
            asked.append(refresh)
            return tokens.isEmpty ? nil : tokens.removeFirst()
        }
    }
    var refreshes: [Bool] { lock.withLock { asked } }
}

func XCTAssertThrowsCreditsError<T>(
    _ body: @autoclosure () async throws(CreditsError) -> T, file: StaticString = #filePath, line: UInt = #line,
    _ check: (CreditsError) -> Void
) async {
    do {
        _ = try await body()
        XCTFail("expected a CreditsError", file: file, line: line)
    } catch {
        check(error)
    }
}
