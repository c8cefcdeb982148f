@testable import AppStoreServerAPI
import RPCCore
import StrictJSON
import UTCTime
import XCTest

/// Error mapping, retryability and the retry decisions, without I/O.
final class ErrorsAndRetryTests: XCTestCase {
    private let parser = StrictJSONParser(documentBytesMax: 4096, depthMax: 8)

    private func response(_ status: Int, _ body: String, headers: [(String, String)] = []) -> AppStoreHTTPResponse {
        AppStoreHTTPResponse(
            status: status, headers: headers.map { HTTPHeaderField(name: $0.0, value: $0.1) }, body: Array(body.utf8))
    }

    func testAppleErrorBodyIsTyped() {
        let error = AppStoreServerAPIClient.error(
            from: response(404, #"{"errorCode":4040010,"errorMessage":"Transaction id not found."}"#), parser: parser)
        XCTAssertEqual(error.kind, .notFound)
        XCTAssertEqual(error.httpStatus, 404)
        XCTAssertEqual(error.apiErrorCode, .transactionIdNotFound)
        XCTAssertEqual(error.apiErrorMessage, "Transaction id not found.")
        XCTAssertFalse(error.isRetryable)
        XCTAssertTrue(error.isNotFound)
    }

    func testRetryableNotFoundCodesAreRetryable() {
        let error = AppStoreServerAPIClient.error(
            from: response(404, #"{"errorCode":4040006,"errorMessage":"x"}"#), parser: parser)
        XCTAssertTrue(error.isRetryable)
        XCTAssertFalse(error.isNotFound, "a retryable 404 must not send the lookup to sandbox")
    }

    /// Only Apple's codes for "no such data here" mean not found: a 404
    /// without a body or code (a wrong base URL, a proxy) or for an unknown
    /// app (a wrong bundle or key) once sent the lookup to sandbox and made
    /// the receipt route refuse paid purchases as unknown to Apple.
    func testOnlyApplesNotFoundCodesMeanNotInThisEnvironment() {
        for code in [4_040_010, 4_040_005, 4_040_001, 4_040_019] {
            let error = AppStoreServerAPIClient.error(
                from: response(404, #"{"errorCode":\#(code),"errorMessage":"x"}"#), parser: parser)
            XCTAssertTrue(error.isNotFound, "\(code)")
        }
        for body in [
            #"{"errorCode":4040003,"errorMessage":"App not found."}"#,
            #"{"errorCode":4040000,"errorMessage":"Not found."}"#,
            "", "<html>not found</html>", #"{"errorCode":4040008,"errorMessage":"x"}"#,
        ] {
            let error = AppStoreServerAPIClient.error(from: response(404, body), parser: parser)
            XCTAssertEqual(error.kind, .notFound)
            XCTAssertFalse(error.isNotFound, body)
        }
    }

    func testRateLimitCarriesRetryAfter() {
        let error = AppStoreServerAPIClient.error(
            from: response(
                429, #"{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}"#, headers: [("retry-after", "3")]),
            parser: parser)
        XCTAssertEqual(error.kind, .rateLimited)
        XCTAssertEqual(error.apiErrorCode, .rateLimitExceeded)
        XCTAssertEqual(error.retryAfter, .seconds(3))
        XCTAssertTrue(error.isRetryable)
        // As Apple sends it: the UNIX time in milliseconds of the next request
        // allowed, here 20 s from now (read against the wall clock).
        let next = UTCDateTime.now().unixMilliseconds + 20_000
        let apple = AppStoreServerAPIClient.error(
            from: response(
                429, #"{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}"#,
                headers: [("retry-after", "\(next)")]),
            parser: parser)
        let wait = try? XCTUnwrap(apple.retryAfter)
        XCTAssertGreaterThan(wait ?? .zero, .seconds(15), "not a day, not zero")
        XCTAssertLessThanOrEqual(wait ?? .zero, .seconds(20))
    }

    func testUnauthorizedPlainTextBody() {
        let error = AppStoreServerAPIClient.error(
            from: response(401, "Unauthenticated\n\nRequest ID: ABC.\n"), parser: parser)
        XCTAssertEqual(error.kind, .unauthorized)
        XCTAssertNil(error.apiErrorCode)
        XCTAssertFalse(error.isRetryable)
    }

    func testStatusKindsAndRetryability() {
        let cases: [(Int, AppStoreServerAPIError.Kind, Bool)] = [
            (400, .badRequest, false), (401, .unauthorized, false), (403, .forbidden, false), (404, .notFound, false),
            (429, .rateLimited, true), (500, .serverError, true), (503, .serverError, true),
            (418, .unexpectedStatus, false),
        ]
        for (status, kind, retryable) in cases {
            let error = AppStoreServerAPIClient.error(from: response(status, ""), parser: parser)
            XCTAssertEqual(error.kind, kind, "\(status)")
            XCTAssertEqual(error.isRetryable, retryable, "\(status)")
        }
        for kind: AppStoreServerAPIError.Kind in [.connectionFailed, .connectionLost, .timeout, .overloaded] {
            XCTAssertTrue(AppStoreServerAPIError(kind: kind, detail: "").isRetryable, "\(kind)")
        }
        for kind: AppStoreServerAPIError.Kind in [
            .tlsFailed, .invalidResponse, .responseTooLarge, .invalidArgument, .cancelled, .signingFailed,
        ] {
            XCTAssertFalse(AppStoreServerAPIError(kind: kind, detail: "").isRetryable, "\(kind)")
        }
    }

    func testHostileErrorMessageIsCleanedAndBounded() {
        let long = String(repeating: "x", count: 5000)
        let error = AppStoreServerAPIClient.error(
            from: response(400, #"{"errorCode":4000000,"errorMessage":"a\u0000\n"# + long + "\"}"),
            parser: StrictJSONParser(documentBytesMax: 65536, depthMax: 8))
        XCTAssertEqual(error.apiErrorMessage?.count, AppStoreServerAPIClient.errorMessageCharactersMax)
        XCTAssertFalse(error.apiErrorMessage?.contains("\n") ?? true)
    }

    func testRetryAfterForms() {
        XCTAssertEqual(RetryAfter.parse("0"), .zero)
        XCTAssertEqual(RetryAfter.parse(" 120 "), .seconds(120))
        XCTAssertEqual(RetryAfter.parse("99999999999999999999"), .seconds(RetryAfter.secondsMax))
        let now: Int64 = 1_445_412_480_000  // Wed, 21 Oct 2015 07:28:00 GMT
        XCTAssertEqual(RetryAfter.parse("Wed, 21 Oct 2015 07:28:30 GMT", nowUnixMilliseconds: now), .seconds(30))
        XCTAssertEqual(RetryAfter.parse(" Wed, 21 Oct 2015 07:28:30 GMT ", nowUnixMilliseconds: now), .seconds(30))
        XCTAssertEqual(RetryAfter.parse("Wed, 21 Oct 2015 07:27:00 GMT", nowUnixMilliseconds: now), .zero)
        XCTAssertEqual(
            RetryAfter.parse("Fri, 23 Oct 2015 07:28:00 GMT", nowUnixMilliseconds: now), .seconds(RetryAfter.secondsMax)
        )
        XCTAssertNil(RetryAfter.parse("Wednesday, 21-Oct-15 07:28:30 GMT", nowUnixMilliseconds: now))
        XCTAssertNil(RetryAfter.parse("soon"))
        XCTAssertNil(RetryAfter.parse("-5"))
    }

    /// Apple's form: the UNIX time, in milliseconds, of the next request allowed.
    func testRetryAfterAsAppleSendsItIsAUnixTimeInMilliseconds() {
        let now: Int64 = 1_767_225_600_000  // 2026-01-01T00:00:00Z
        XCTAssertEqual(RetryAfter.parse("1767225630000", nowUnixMilliseconds: now), .seconds(30))
        XCTAssertEqual(RetryAfter.parse("1767225600250", nowUnixMilliseconds: now), .milliseconds(250))
        XCTAssertEqual(RetryAfter.parse("1767225599000", nowUnixMilliseconds: now), .zero, "a time already past")
        XCTAssertEqual(
            RetryAfter.parse("1767484800000", nowUnixMilliseconds: now), .seconds(RetryAfter.secondsMax),
            "three days on: capped")
        XCTAssertEqual(
            RetryAfter.parse("1000000000000", nowUnixMilliseconds: now), .zero, "the smallest number read as a time")
        XCTAssertEqual(
            RetryAfter.parse("999999999999", nowUnixMilliseconds: now), .seconds(RetryAfter.secondsMax),
            "below it: delay-seconds")
    }

    private func policy(_ configure: (inout AppStoreServerAPILimits) -> Void = { _ in }) -> RetryPolicy {
        var limits = AppStoreServerAPILimits()
        limits.attemptsMax = 4
        limits.backoffInitial = .milliseconds(100)
        limits.backoffMax = .milliseconds(1000)
        limits.retryAfterMax = .seconds(10)
        limits.retryWaitTotalMax = .seconds(20)
        configure(&limits)
        return RetryPolicy(limits: limits, random: { 0.5 })
    }

    func testBackoffDoublesWithinCapAndJitter() {
        let policy = policy()
        // Half fixed plus half scaled by the jitter draw (0.5): 75% of the step.
        XCTAssertEqual(policy.backoff(afterAttempt: 1), .milliseconds(75))
        XCTAssertEqual(policy.backoff(afterAttempt: 2), .milliseconds(150))
        XCTAssertEqual(policy.backoff(afterAttempt: 3), .milliseconds(300))
        XCTAssertEqual(policy.backoff(afterAttempt: 5), .milliseconds(750))
        XCTAssertEqual(policy.backoff(afterAttempt: 50), .milliseconds(750))
        let extremes = [
            RetryPolicy(limits: policy.limits, random: { 0 }), RetryPolicy(limits: policy.limits, random: { 1 }),
        ]
        XCTAssertEqual(extremes[0].backoff(afterAttempt: 2), .milliseconds(100))
        XCTAssertLessThan(extremes[1].backoff(afterAttempt: 2), .milliseconds(200))
    }

    func testDecisions() {
        let policy = policy()
        let server = AppStoreServerAPIError(kind: .serverError, detail: "", httpStatus: 500)
        XCTAssertEqual(policy.decide(after: server, attempt: 1, waited: .zero), .retry(after: .milliseconds(75)))
        XCTAssertEqual(policy.decide(after: server, attempt: 4, waited: .zero), .giveUp, "attempts are bounded")
        let badRequest = AppStoreServerAPIError(kind: .badRequest, detail: "", httpStatus: 400)
        XCTAssertEqual(policy.decide(after: badRequest, attempt: 1, waited: .zero), .giveUp)
        var limited = AppStoreServerAPIError(kind: .rateLimited, detail: "", httpStatus: 429, retryAfter: .seconds(2))
        XCTAssertEqual(
            policy.decide(after: limited, attempt: 1, waited: .zero), .retry(after: .seconds(2)),
            "Retry-After is obeyed")
        limited.retryAfter = .seconds(11)
        XCTAssertEqual(
            policy.decide(after: limited, attempt: 1, waited: .zero), .giveUp, "a longer wait goes back to the caller")
        limited.retryAfter = .seconds(5)
        XCTAssertEqual(
            policy.decide(after: limited, attempt: 2, waited: .seconds(16)), .giveUp, "total waiting is bounded")
    }

    func testPercentEncodingKeepsIdsInOneSegment() {
        XCTAssertEqual(PercentEncoding.encode("2000000123"), "2000000123")
        XCTAssertEqual(PercentEncoding.encode("../a b?c#d/é"), "..%2Fa%20b%3Fc%23d%2F%C3%A9")
        XCTAssertEqual(PercentEncoding.pathWithQuery("/p", [("a", "1"), ("a", "x&y=z")]), "/p?a=1&a=x%26y%3Dz")
        XCTAssertEqual(PercentEncoding.pathWithQuery("/p", []), "/p")
    }

    func testHistoryQueryParametersRepeatAndKeepOrder() {
        let query = TransactionHistoryQuery(
            startDate: 1, endDate: 2, productIds: ["a", "b"], productTypes: [.consumable, .nonConsumable],
            subscriptionGroupIdentifiers: ["g"], sort: .descending, revoked: false, inAppOwnershipType: "PURCHASED")
        let names = query.parameters(revision: "r1").map { "\($0.0)=\($0.1)" }
        XCTAssertEqual(
            names,
            [
                "revision=r1", "startDate=1", "endDate=2", "productId=a", "productId=b", "productType=CONSUMABLE",
                "productType=NON_CONSUMABLE", "sort=DESCENDING", "subscriptionGroupIdentifier=g",
                "inAppOwnershipType=PURCHASED", "revoked=false",
            ])
        XCTAssertTrue(TransactionHistoryQuery().parameters(revision: nil).isEmpty)
    }

    func testBodiesAreTheDocumentedJSON() {
        let consumption = ConsumptionRequest(
            customerConsented: true, deliveryStatus: .delivered, sampleContentProvided: false,
            consumptionPercentage: 25_000, refundPreference: .grantProrated)
        XCTAssertEqual(
            JSONWriter.string(of: consumption.json),
            #"{"customerConsented":true,"deliveryStatus":"DELIVERED","sampleContentProvided":false,"consumptionPercentage":25000,"refundPreference":"GRANT_PRORATED"}"#
        )
        let minimal = ConsumptionRequest(
            customerConsented: true, deliveryStatus: .undeliveredOther, sampleContentProvided: true)
        XCTAssertEqual(
            JSONWriter.string(of: minimal.json),
            #"{"customerConsented":true,"deliveryStatus":"UNDELIVERED_OTHER","sampleContentProvided":true}"#)
        let history = NotificationHistoryRequest(
            startDate: 10, endDate: 20, notificationType: "REFUND", onlyFailures: true)
        XCTAssertEqual(
            JSONWriter.string(of: history.json),
            #"{"startDate":10,"endDate":20,"notificationType":"REFUND","onlyFailures":true}"#)
    }
}
