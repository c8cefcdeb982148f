import AppStoreServerAPI
import AppStoreVerification
import Foundation
import XCTest

/// Every endpoint against the stand-in, over HTTPS/HTTP/2 with real JWTs;
/// every signed answer is checked with `SignedDataVerifier`.
final class EndpointTests: XCTestCase {
    private var fixture: StandInFixture!
    private var client: AppStoreServerAPIClient!

    override func setUp() async throws {
        fixture = try await StandInFixture()
        client = try fixture.client()
    }

    override func tearDown() async throws {
        await client?.close()
        await fixture?.stop()
    }

    func testTransactionInfoIsVerifiableSignedData() async throws {
        let response = try await client.transactionInfo(
            transactionId: StandInFixture.productionId(7), environment: .production)
        let transaction = try fixture.verifyTransaction(response.signedTransactionInfo)
        XCTAssertEqual(transaction.transactionId, StandInFixture.productionId(7))
        XCTAssertEqual(transaction.environment, .production)
        XCTAssertEqual(transaction.bundleId, TestKeys.bundleID)
        let requests = try await fixture.standIn.requests()
        XCTAssertEqual(requests.count, 1)
        XCTAssertEqual(requests.first?["jwtValid"] as? Bool, true)
        XCTAssertEqual(requests.first?["path"] as? String, "/inApps/v1/transactions/\(StandInFixture.productionId(7))")
        XCTAssertEqual(requests.first?["authority"] as? String, "localhost:\(fixture.standIn.productionPort)")
    }

    func testUnknownTransactionIsTypedNotFound() async throws {
        do {
            _ = try await client.transactionInfo(transactionId: "2999999999999999", environment: .production)
            XCTFail("expected 404")
        } catch {
            XCTAssertEqual(error.kind, .notFound)
            XCTAssertEqual(error.apiErrorCode, .transactionIdNotFound)
            XCTAssertFalse(error.isRetryable)
        }
        let requests = try await fixture.standIn.requests()
        XCTAssertEqual(requests.count, 1, "a plain 404 is not retried")
    }

    func testTransactionHistoryWalksThreePagesWithOpaqueRevisions() async throws {
        let result = try await client.allTransactionHistory(
            transactionId: StandInFixture.productionId(1), environment: .production)
        XCTAssertEqual(result.pageCount, 3)
        XCTAssertTrue(result.isComplete)
        XCTAssertEqual(result.items.count, StandInFixture.historyCount)
        let ids = try result.items.map { try fixture.verifyTransaction($0).transactionId ?? "" }
        XCTAssertEqual(ids, (1...StandInFixture.historyCount).map(StandInFixture.productionId))
        XCTAssertNotNil(result.nextToken)
        // The revisions are opaque and were sent back as the stand-in issued them.
        let requests = try await fixture.standIn.requests()
        XCTAssertEqual(requests.count, 3)
        XCTAssertEqual(requests[0]["query"] as? String, "")
        XCTAssertTrue((requests[1]["query"] as? String ?? "").hasPrefix("revision="))

        // A later call from the stored revision sees nothing new.
        let later = try await client.allTransactionHistory(
            transactionId: StandInFixture.productionId(1), from: result.nextToken, environment: .production)
        XCTAssertEqual(later.items.count, 0)
        XCTAssertTrue(later.isComplete)
    }

    func testHistoryPageBoundStopsAndResumes() async throws {
        let first = try await client.allTransactionHistory(
            transactionId: StandInFixture.productionId(3), environment: .production, pagesMax: 2)
        XCTAssertFalse(first.isComplete)
        XCTAssertEqual(first.pageCount, 2)
        XCTAssertEqual(first.items.count, 40)
        let rest = try await client.allTransactionHistory(
            transactionId: StandInFixture.productionId(3), from: first.nextToken, environment: .production)
        XCTAssertTrue(rest.isComplete)
        XCTAssertEqual(rest.items.count, 5)
    }

    func testHistoryFiltersTravelOnEveryPage() async throws {
        let revoked = try await client.allTransactionHistory(
            transactionId: StandInFixture.productionId(1), query: TransactionHistoryQuery(revoked: true),
            environment: .production)
        let revokedIds = try revoked.items.map { try fixture.verifyTransaction($0) }
        XCTAssertEqual(revokedIds.map(\.transactionId), [10, 20, 30, 40].map(StandInFixture.productionId))
        XCTAssertTrue(revokedIds.allSatisfy { $0.revocationDate != nil })

        let cheap = try await client.allTransactionHistory(
            transactionId: StandInFixture.productionId(1),
            query: TransactionHistoryQuery(
                productIds: ["credits.100"], productTypes: [.consumable], sort: .descending, revoked: false),
            environment: .production)
        let cheapIds = try cheap.items.map { try fixture.verifyTransaction($0).transactionId! }
        let expected = (1...StandInFixture.historyCount).filter { $0 % 2 == 0 && !StandInFixture.isRevoked($0) }
            .reversed().map(StandInFixture.productionId)
        XCTAssertEqual(cheapIds, expected)
        XCTAssertEqual(cheap.pageCount, 1, "18 transactions fit one page")

        let subscriptions = try await client.transactionHistory(
            transactionId: StandInFixture.subscriptionRenewalId,
            query: TransactionHistoryQuery(productTypes: [.autoRenewable]), environment: .production)
        XCTAssertEqual(subscriptions.signedTransactions.count, 2)
        XCTAssertEqual(subscriptions.bundleId, TestKeys.bundleID)
        XCTAssertEqual(subscriptions.appAppleId, StandInFixture.appAppleId)
        XCTAssertEqual(subscriptions.environment, "Production")
        XCTAssertFalse(subscriptions.hasMore)
    }

    func testRevisionFromAnotherQueryIsRefused() async throws {
        let page = try await client.transactionHistory(
            transactionId: StandInFixture.productionId(1), environment: .production)
        do {
            _ = try await client.transactionHistory(
                transactionId: StandInFixture.productionId(1), revision: page.revision,
                query: TransactionHistoryQuery(revoked: true), environment: .production)
            XCTFail("a revision is bound to its query")
        } catch {
            XCTAssertEqual(error.kind, .badRequest)
            XCTAssertEqual(error.apiErrorCode, .invalidRequestRevision)
        }
    }

    func testRefundHistory() async throws {
        let refunds = try await client.allRefundHistory(
            transactionId: StandInFixture.productionId(5), environment: .production)
        XCTAssertTrue(refunds.isComplete)
        let transactions = try refunds.items.map { try fixture.verifyTransaction($0) }
        XCTAssertEqual(transactions.map(\.transactionId), [10, 20, 30, 40].map(StandInFixture.productionId))
        XCTAssertEqual(transactions.map(\.revocationType), Array(repeating: .refundFull, count: 4))
    }

    func testNotificationHistoryPagesAndFilters() async throws {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let request = NotificationHistoryRequest(startDate: now - 7 * 86_400_000, endDate: now)
        let all = try await client.allNotificationHistory(request, environment: .production)
        XCTAssertEqual(all.pageCount, 3)
        XCTAssertEqual(all.items.count, StandInFixture.notificationCount)
        let first = try fixture.verifyNotification(all.items[0].signedPayload)
        XCTAssertEqual(first.notificationType, .oneTimeCharge)
        XCTAssertEqual(all.items[0].sendAttempts.first?.sendAttemptResult, "SUCCESS")
        let requests = try await fixture.standIn.requests()
        XCTAssertEqual(requests.map { $0["method"] as? String }, ["POST", "POST", "POST"])
        XCTAssertEqual(requests.map { $0["contentType"] as? String }, Array(repeating: "application/json", count: 3))
        XCTAssertTrue((requests[2]["query"] as? String ?? "").hasPrefix("paginationToken="))

        let failures = try await client.allNotificationHistory(
            NotificationHistoryRequest(startDate: request.startDate, endDate: now, onlyFailures: true),
            environment: .production)
        XCTAssertEqual(failures.items.count, StandInFixture.notificationCount / 4)
        XCTAssertTrue(failures.items.allSatisfy { $0.sendAttempts.first?.sendAttemptResult == "NO_RESPONSE" })

        let refunds = try await client.notificationHistory(
            NotificationHistoryRequest(startDate: request.startDate, endDate: now, notificationType: "REFUND"),
            environment: .production)
        XCTAssertEqual(refunds.notificationHistory.count, StandInFixture.notificationCount / 3)
        XCTAssertFalse(refunds.hasMore)
        XCTAssertNotNil(refunds.paginationToken, "every answer carries a paginationToken")

        let oneCustomer = try await client.notificationHistory(
            NotificationHistoryRequest(
                startDate: request.startDate, endDate: now, transactionId: StandInFixture.productionId(4)),
            environment: .production)
        XCTAssertEqual(oneCustomer.notificationHistory.count, 20)
        XCTAssertTrue(oneCustomer.hasMore)
    }

    func testNotificationHistoryRefusals() async throws {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        do {
            _ = try await client.notificationHistory(
                NotificationHistoryRequest(
                    startDate: now - 1000, endDate: now, notificationType: "REFUND", transactionId: "2000000000000001"),
                environment: .production)
            XCTFail("both filters")
        } catch {
            XCTAssertEqual(error.apiErrorCode, .multipleFiltersSupplied)
        }
        do {
            _ = try await client.notificationHistory(
                NotificationHistoryRequest(startDate: now - 31 * 86_400_000, endDate: now), environment: .sandbox)
            XCTFail("sandbox keeps 30 days")
        } catch {
            XCTAssertEqual(error.apiErrorCode, .startDateTooFarInPast)
        }
        do {
            _ = try await client.notificationHistory(
                NotificationHistoryRequest(startDate: now, endDate: now - 1), environment: .production)
            XCTFail("refused before sending")
        } catch {
            XCTAssertEqual(error.kind, .invalidArgument)
        }
    }

    func testExpiredPaginationTokenIsTypedAndNotRetried() async throws {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let request = NotificationHistoryRequest(startDate: now - 7 * 86_400_000, endDate: now)
        let page = try await client.notificationHistory(request, environment: .production)
        XCTAssertTrue(page.hasMore)
        try await fixture.standIn.command(["op": "paginationTokenTtl", "seconds": 0])
        do {
            _ = try await client.notificationHistory(
                request, paginationToken: page.paginationToken, environment: .production)
            XCTFail("expected an expired token")
        } catch {
            XCTAssertEqual(error.kind, .badRequest)
            XCTAssertEqual(error.apiErrorCode, .paginationTokenExpired)
            XCTAssertFalse(error.isRetryable)
        }
        do {
            _ = try await client.notificationHistory(request, paginationToken: "forged.token", environment: .production)
            XCTFail("expected an invalid token")
        } catch {
            XCTAssertEqual(error.apiErrorCode, .invalidPaginationToken)
        }
    }

    func testTestNotificationRoundTrip() async throws {
        let token = try await client.requestTestNotification(environment: .sandbox)
        XCTAssertFalse(token.isEmpty)
        let status = try await client.testNotificationStatus(testNotificationToken: token, environment: .sandbox)
        let payload = try fixture.verifyNotification(try XCTUnwrap(status.signedPayload))
        XCTAssertEqual(payload.notificationType, .test)
        XCTAssertEqual(status.sendAttempts.map(\.sendAttemptResult), ["SUCCESS"])
        do {
            _ = try await client.testNotificationStatus(testNotificationToken: "\(UUID())_1", environment: .sandbox)
            XCTFail("unknown token")
        } catch {
            XCTAssertEqual(error.apiErrorCode, .testNotificationNotFound)
        }
    }

    func testSendConsumptionInformation() async throws {
        let request = ConsumptionRequest(
            customerConsented: true, deliveryStatus: .delivered, sampleContentProvided: false,
            consumptionPercentage: 42_500, refundPreference: .grantProrated)
        try await client.sendConsumptionInformation(
            transactionId: StandInFixture.productionId(9), request, environment: .production)
        let recorded =
            try await fixture.standIn.command(["op": "consumption", "env": "Production"])["consumption"]
            as? [[String: Any]]
        XCTAssertEqual(recorded?.count, 1)
        XCTAssertEqual(recorded?.first?["transactionId"] as? String, StandInFixture.productionId(9))
        let body = recorded?.first?["body"] as? [String: Any]
        XCTAssertEqual(body?["customerConsented"] as? Bool, true)
        XCTAssertEqual(body?["deliveryStatus"] as? String, "DELIVERED")
        XCTAssertEqual(body?["sampleContentProvided"] as? Bool, false)
        XCTAssertEqual(body?["consumptionPercentage"] as? Int, 42_500)
        XCTAssertEqual(body?["refundPreference"] as? String, "GRANT_PRORATED")
        let requests = try await fixture.standIn.requests()
        XCTAssertEqual(requests.last?["method"] as? String, "PUT")
        XCTAssertEqual(
            requests.last?["path"] as? String, "/inApps/v2/transactions/consumption/\(StandInFixture.productionId(9))")
        XCTAssertEqual(requests.last?["status"] as? Int, 202)

        do {
            try await client.sendConsumptionInformation(
                transactionId: StandInFixture.productionId(9),
                ConsumptionRequest(customerConsented: false, deliveryStatus: .delivered, sampleContentProvided: false),
                environment: .production)
            XCTFail("Apple refuses customerConsented false")
        } catch {
            XCTAssertEqual(error.apiErrorCode, .invalidCustomerConsented)
        }
        do {
            try await client.sendConsumptionInformation(
                transactionId: StandInFixture.productionId(9),
                ConsumptionRequest(
                    customerConsented: true, deliveryStatus: .delivered, sampleContentProvided: false,
                    consumptionPercentage: 100_001),
                environment: .production)
            XCTFail("milliunits are bounded")
        } catch {
            XCTAssertEqual(error.kind, .invalidArgument)
        }
    }

    func testLookUpOrderId() async throws {
        let valid = try await client.lookUpOrderId(StandInFixture.orderId)
        XCTAssertTrue(valid.isValid)
        XCTAssertEqual(
            try valid.signedTransactions.map { try fixture.verifyTransaction($0).transactionId! },
            [StandInFixture.productionId(1), StandInFixture.productionId(2)])
        let invalid = try await client.lookUpOrderId("NOSUCHORDER")
        XCTAssertEqual(invalid.status, 1)
        XCTAssertTrue(invalid.signedTransactions.isEmpty)
    }

    func testAppTransactionInfo() async throws {
        let response = try await client.appTransactionInfo(
            transactionId: StandInFixture.productionId(2), environment: .production)
        let appTransaction = try fixture.verifyAppTransaction(response.signedAppTransactionInfo)
        XCTAssertEqual(appTransaction.bundleId, TestKeys.bundleID)
        XCTAssertEqual(appTransaction.receiptType, .production)
    }

    func testSetAppAccountTokenShowsInTheTransaction() async throws {
        let token = UUID()
        try await client.setAppAccountToken(
            originalTransactionId: StandInFixture.subscriptionOriginalId, appAccountToken: token,
            environment: .production)
        for id in [StandInFixture.subscriptionOriginalId, StandInFixture.subscriptionRenewalId] {
            let info = try await client.transactionInfo(transactionId: id, environment: .production)
            XCTAssertEqual(try fixture.verifyTransaction(info.signedTransactionInfo).appAccountToken, token)
        }
        do {
            try await client.setAppAccountToken(
                originalTransactionId: StandInFixture.subscriptionRenewalId, appAccountToken: token,
                environment: .production)
            XCTFail("only an original transaction id")
        } catch {
            XCTAssertEqual(error.apiErrorCode, .transactionIdIsNotOriginalTransactionId)
        }
    }

    func testProductionThenSandbox() async throws {
        let production = try await client.transactionInfoProductionThenSandbox(
            transactionId: StandInFixture.productionId(1))
        XCTAssertEqual(production.environment, .production)
        let sandbox = try await client.transactionInfoProductionThenSandbox(transactionId: StandInFixture.sandboxOnlyId)
        XCTAssertEqual(sandbox.environment, .sandbox)
        XCTAssertEqual(try fixture.verifyTransaction(sandbox.value.signedTransactionInfo).environment, .sandbox)
        let requests = try await fixture.standIn.requests()
        XCTAssertEqual(
            requests.map { $0["env"] as? String }, ["Production", "Production", "Sandbox"],
            "production first, sandbox only after its 404")
        do {
            _ = try await client.transactionInfoProductionThenSandbox(transactionId: "2999999999999999")
            XCTFail("in neither")
        } catch {
            XCTAssertEqual(error.apiErrorCode, .transactionIdNotFound)
        }
    }

    func testProductionOutageDoesNotFallBackToSandbox() async throws {
        await client.close()
        client = try fixture.client(fixture.configuration { $0.attemptsMax = 1 })
        try await fixture.standIn.fault(
            ["kind": "status", "status": 503, "errorCode": 5000001], environment: "Production")
        do {
            _ = try await client.transactionInfoProductionThenSandbox(transactionId: StandInFixture.sandboxOnlyId)
            XCTFail("a production 503 must not be answered from sandbox")
        } catch {
            XCTAssertEqual(error.kind, .serverError)
            XCTAssertTrue(error.isRetryable)
        }
        let requests = try await fixture.standIn.requests()
        XCTAssertEqual(requests.map { $0["env"] as? String }, ["Production"])
    }

    func testManyConcurrentCallsShareTheConnection() async throws {
        let client = self.client!
        let fixture = self.fixture!
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 1...40 {
                group.addTask {
                    let id = StandInFixture.productionId(index)
                    let info = try await client.transactionInfo(transactionId: id, environment: .production)
                    XCTAssertEqual(try fixture.verifyTransaction(info.signedTransactionInfo).transactionId, id)
                }
            }
            try await group.waitForAll()
        }
    }
}
