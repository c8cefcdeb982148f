import AppStoreServerAPI
import AppStoreVerification
import CryptoPrimitives
import Foundation
import XCTest

/// The stand-in told to misbehave: rate limits, server errors, slow answers,
/// dropped connections, wrong keys, wrong CA, wrong host name; and nothing
/// secret in what the client reports.
final class FaultTests: XCTestCase {
    private var fixture: StandInFixture!
    private var clients: [AppStoreServerAPIClient] = []
    private let transactionId = StandInFixture.productionId(1)
    private let path = "/inApps/v1/transactions/"

    override func setUp() async throws {
        fixture = try await StandInFixture()
    }

    override func tearDown() async throws {
        for client in clients { await client.close() }
        await fixture?.stop()
    }

    private func client(_ configuration: AppStoreServerAPIConfiguration? = nil) throws -> AppStoreServerAPIClient {
        let client = try fixture.client(configuration)
        clients.append(client)
        return client
    }

    private func expectError(_ body: () async throws -> Void, file: StaticString = #filePath, line: UInt = #line) async
        -> AppStoreServerAPIError?
    {
        do {
            try await body()
            XCTFail("expected an error", file: file, line: line)
            return nil
        } catch let error as AppStoreServerAPIError {
            return error
        } catch {
            XCTFail("not an AppStoreServerAPIError: \(error)", file: file, line: line)
            return nil
        }
    }

    /// Apple's form: Retry-After is the UNIX time, in milliseconds, of the
    /// next request allowed (read as a day's wait before session 20).
    func testRateLimitRetryAfterAsAppleSendsItIsObeyed() async throws {
        let client = try client()
        try await fixture.standIn.fault(["kind": "rate_limit", "retryAfter": 1], match: path)
        let started = ContinuousClock.now
        let info = try await client.transactionInfo(transactionId: transactionId, environment: .production)
        let elapsed = ContinuousClock.now - started
        XCTAssertEqual(try fixture.verifyTransaction(info.signedTransactionInfo).transactionId, transactionId)
        XCTAssertGreaterThanOrEqual(elapsed, .milliseconds(900), "the client waited until the time Apple named")
        XCTAssertLessThan(elapsed, .seconds(5))
        let statuses = try await fixture.standIn.requests().map { $0["status"] as? Int }
        XCTAssertEqual(statuses, [429, 200])
    }

    func testRateLimitRetryAfterIsObeyed() async throws {
        let client = try client()
        try await fixture.standIn.fault(
            ["kind": "rate_limit", "retryAfter": 1, "retryAfterForm": "delay-seconds"], match: path)
        let started = ContinuousClock.now
        let info = try await client.transactionInfo(transactionId: transactionId, environment: .production)
        let elapsed = ContinuousClock.now - started
        XCTAssertEqual(try fixture.verifyTransaction(info.signedTransactionInfo).transactionId, transactionId)
        XCTAssertGreaterThanOrEqual(elapsed, .seconds(1), "the client waited as Retry-After said")
        XCTAssertLessThan(elapsed, .seconds(5))
        let statuses = try await fixture.standIn.requests().map { $0["status"] as? Int }
        XCTAssertEqual(statuses, [429, 200])
        XCTAssertTrue(
            fixture.events.all.contains {
                $0.contains("retry") && $0.contains("status=429") && $0.contains("retry_after=1.0 seconds")
            },
            "\(fixture.events.all)")
    }

    func testRetryAfterLongerThanTheBoundGoesBackToTheCaller() async throws {
        let client = try client(fixture.configuration { $0.retryAfterMax = .seconds(2) })
        try await fixture.standIn.fault(["kind": "rate_limit", "retryAfter": 30], match: path)
        let started = ContinuousClock.now
        let error = await expectError {
            _ = try await client.transactionInfo(transactionId: transactionId, environment: .production)
        }
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(2), "no 30 s wait inside the call")
        XCTAssertEqual(error?.kind, .rateLimited)
        XCTAssertEqual(error?.apiErrorCode, .rateLimitExceeded)
        let wait = error?.retryAfter ?? .zero
        XCTAssertGreaterThan(wait, .seconds(25), "Apple's time, 30 s on, read as the wait until it")
        XCTAssertLessThanOrEqual(wait, .seconds(30))
        XCTAssertEqual(error?.isRetryable, true)
    }

    func testServerErrorsAreRetriedThenSucceed() async throws {
        let client = try client()
        try await fixture.standIn.fault(["kind": "status", "status": 500], match: path, count: 2)
        let info = try await client.transactionInfo(transactionId: transactionId, environment: .production)
        XCTAssertFalse(info.signedTransactionInfo.isEmpty)
        let statuses = try await fixture.standIn.requests().map { $0["status"] as? Int }
        XCTAssertEqual(statuses, [500, 500, 200])
    }

    func testServerErrorsStopAfterTheAttemptBound() async throws {
        let client = try client(fixture.configuration { $0.attemptsMax = 3 })
        try await fixture.standIn.fault(
            ["kind": "status", "status": 503, "errorCode": 5000001], match: path, count: 10)
        let error = await expectError {
            _ = try await client.transactionInfo(transactionId: transactionId, environment: .production)
        }
        XCTAssertEqual(error?.kind, .serverError)
        XCTAssertEqual(error?.httpStatus, 503)
        XCTAssertEqual(error?.apiErrorCode, .generalInternalRetryable)
        XCTAssertEqual(error?.isRetryable, true)
        let count = try await fixture.standIn.requests().count
        XCTAssertEqual(count, 3)
    }

    func testWrongKeyIsUnauthorizedAndNotRetried() async throws {
        let stranger = try TestKeys.credentials()
        let client = try client(fixture.configuration(credentials: stranger))
        let error = await expectError {
            _ = try await client.transactionInfo(transactionId: transactionId, environment: .production)
        }
        XCTAssertEqual(error?.kind, .unauthorized)
        XCTAssertEqual(error?.httpStatus, 401)
        XCTAssertEqual(error?.isRetryable, false)
        let requests = try await fixture.standIn.requests()
        XCTAssertEqual(requests.count, 1)
        XCTAssertEqual(requests.first?["jwtValid"] as? Bool, false)
        XCTAssertTrue(fixture.standIn.stderr.contains("bad signature"), fixture.standIn.stderr)
    }

    func testWrongIdsAreUnauthorized() async throws {
        var credentials = fixture.credentials
        credentials.bundleID = "com.example.other"
        let client = try client(fixture.configuration(credentials: credentials))
        let error = await expectError {
            _ = try await client.transactionInfo(transactionId: transactionId, environment: .production)
        }
        XCTAssertEqual(error?.kind, .unauthorized)
        XCTAssertTrue(fixture.standIn.stderr.contains("iss/aud/bid"), fixture.standIn.stderr)
    }

    func testDroppedConnectionIsATypedRetryableError() async throws {
        let once = try client(fixture.configuration { $0.attemptsMax = 1 })
        try await fixture.standIn.fault(["kind": "drop"], match: path)
        let error = await expectError {
            _ = try await once.transactionInfo(transactionId: transactionId, environment: .production)
        }
        XCTAssertEqual(error?.kind, .connectionLost)
        XCTAssertEqual(error?.isRetryable, true)
        // The same client reconnects for the next call.
        let info = try await once.transactionInfo(transactionId: transactionId, environment: .production)
        XCTAssertFalse(info.signedTransactionInfo.isEmpty)
        // With retries a drop is invisible to the caller.
        let retrying = try client()
        try await fixture.standIn.fault(["kind": "drop"], match: path)
        _ = try await retrying.transactionInfo(transactionId: transactionId, environment: .production)
    }

    func testSlowAnswerTimesOutAsRetryable() async throws {
        let client = try client(
            fixture.configuration {
                $0.attemptsMax = 1
                $0.requestTimeout = .milliseconds(500)
            })
        try await fixture.standIn.fault(["kind": "delay", "seconds": 3], match: path)
        let started = ContinuousClock.now
        let error = await expectError {
            _ = try await client.transactionInfo(transactionId: transactionId, environment: .production)
        }
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(2))
        XCTAssertEqual(error?.kind, .timeout)
        XCTAssertEqual(error?.isRetryable, true)
    }

    func testSlowAnswerThenRetrySucceeds() async throws {
        let client = try client(fixture.configuration { $0.requestTimeout = .milliseconds(700) })
        try await fixture.standIn.fault(["kind": "delay", "seconds": 2], match: path)
        let info = try await client.transactionInfo(transactionId: transactionId, environment: .production)
        XCTAssertFalse(info.signedTransactionInfo.isEmpty)
    }

    func testWrongCAIsRefused() async throws {
        let client = try client(fixture.configuration(trustRootsPath: fixture.standIn.otherCAPath))
        let error = await expectError {
            _ = try await client.transactionInfo(transactionId: transactionId, environment: .production)
        }
        XCTAssertEqual(error?.kind, .tlsFailed)
        XCTAssertEqual(error?.isRetryable, false)
        XCTAssertTrue(error?.detail.contains("certificate verify failed") ?? false, error?.detail ?? "")
        let count = try await fixture.standIn.requests().count
        XCTAssertEqual(count, 0, "nothing was sent over an unverified connection")
    }

    func testSystemTrustStoreRefusesTheTestCA() async throws {
        var configuration = fixture.configuration()
        configuration.trustRootsPath = nil
        let client = try client(configuration)
        let error = await expectError {
            _ = try await client.transactionInfo(transactionId: transactionId, environment: .production)
        }
        XCTAssertEqual(error?.kind, .tlsFailed)
    }

    func testWrongHostNameIsRefused() async throws {
        let client = try client(fixture.configuration(productionHost: "api.storekit.apple.com"))
        let error = await expectError {
            _ = try await client.transactionInfo(transactionId: transactionId, environment: .production)
        }
        XCTAssertEqual(error?.kind, .tlsFailed)
        XCTAssertTrue(error?.detail.contains("hostname mismatch") ?? false, error?.detail ?? "")
    }

    func testNothingReachesAClosedPort() async throws {
        var configuration = fixture.configuration { $0.attemptsMax = 2 }
        configuration.productionURL = "https://localhost:1"
        let client = try client(configuration)
        let error = await expectError {
            _ = try await client.transactionInfo(transactionId: transactionId, environment: .production)
        }
        XCTAssertEqual(error?.kind, .connectionFailed)
        XCTAssertEqual(error?.isRetryable, true)
    }

    func testCancellationEndsTheCall() async throws {
        let client = try client()
        try await fixture.standIn.fault(["kind": "delay", "seconds": 5], match: path)
        let id = transactionId
        let task = Task { try await client.transactionInfo(transactionId: id, environment: .production) }
        try await Task.sleep(for: .milliseconds(300))
        task.cancel()
        let started = ContinuousClock.now
        do {
            _ = try await task.value
            XCTFail("expected cancellation")
        } catch let error as AppStoreServerAPIError {
            XCTAssertEqual(error.kind, .cancelled)
        }
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(2))
    }

    func testOversizedAnswerIsRefused() async throws {
        let client = try client(
            fixture.configuration {
                $0.responseBodyBytesMax = 2048
                $0.attemptsMax = 1
            })
        let error = await expectError {
            _ = try await client.transactionHistory(transactionId: transactionId, environment: .production)
        }
        XCTAssertEqual(error?.kind, .responseTooLarge)
    }

    /// Neither the JWT nor the key appears in anything the client reports:
    /// events of successes, retries, a 401, a TLS failure, and the errors.
    func testNoKeyOrTokenInEventsOrErrors() async throws {
        let good = try client()
        try await fixture.standIn.fault(["kind": "status", "status": 500], match: path)
        _ = try await good.transactionInfo(transactionId: transactionId, environment: .production)
        _ = try await good.allTransactionHistory(transactionId: transactionId, environment: .production)
        var reported: [String] = []
        let unauthorized = try client(fixture.configuration(credentials: try TestKeys.credentials()))
        if let error = await expectError({
            _ = try await unauthorized.transactionInfo(transactionId: transactionId, environment: .production)
        }) {
            reported.append("\(error)")
            reported.append(String(reflecting: error))
        }
        let untrusted = try client(fixture.configuration(trustRootsPath: fixture.standIn.otherCAPath))
        if let error = await expectError({
            _ = try await untrusted.transactionInfo(transactionId: transactionId, environment: .production)
        }) {
            reported.append("\(error)")
        }
        reported += fixture.events.all
        reported.append("\(fixture.credentials)")
        reported.append("\(good.configuration.credentials)")
        XCTAssertGreaterThan(fixture.events.all.count, 6)
        let keyBody = String(decoding: fixture.keyPEM, as: UTF8.self).split(separator: "\n").filter {
            !$0.hasPrefix("-----")
        }
        XCTAssertFalse(keyBody.isEmpty)
        // The JWT header is always the same text, so its base64url is a fixed prefix.
        let jwtPrefix = StrictBase64.encodeURL(Array("{\"alg\":\"ES256\",\"kid\":\"\(TestKeys.keyID)\"".utf8)).prefix(
            20)
        for text in reported {
            XCTAssertFalse(text.contains(jwtPrefix), text)
            XCTAssertFalse(text.contains("eyJ"), text)
            XCTAssertFalse(text.lowercased().contains("bearer"), text)
            XCTAssertFalse(text.contains("PRIVATE KEY"), text)
            for line in keyBody { XCTAssertFalse(text.contains(line), text) }
        }
    }
}
