import Foundation
@testable import PaymentsService
import PostgresClient
import XCTest

/// The shared store of the storage tests: PAYMENTS_DATABASE_URL in a schema
/// of its own (recreated once per run), so their fake pending rows are never
/// picked up by a PaymentsService under test. Tests isolate by random
/// transaction and user ids.
enum PaymentsTestDatabase {
    private actor Shared {
        var store: PaymentsStore?

        func store(url: String) async throws -> PaymentsStore {
            if let store { return store }
            let admin = PostgresPool(configuration: .init(connectionString: url, connectionsMax: 1))
            try await admin.withConnection { connection in
                _ = try await connection.query("drop schema if exists \(schema) cascade")
                _ = try await connection.query("create schema \(schema)")
            }
            await admin.close()
            let pool = PostgresPool(
                configuration: .init(
                    connectionString: url, connectionsMax: 8, acquireTimeout: .seconds(30), searchPath: schema))
            let created = PaymentsStore(
                pool: pool,
                backoff: RetryBackoff(
                    initialDelayMilliseconds: 50, maximumDelayMilliseconds: 1_000, leaseMilliseconds: 2_000))
            try await created.migrate()
            store = created
            return created
        }
    }

    private static let shared = Shared()
    /// The storage tests' own schema.
    static let schema = "payments_store_tests"

    static var url: String {
        get throws {
            guard let url = ProcessInfo.processInfo.environment["PAYMENTS_DATABASE_URL"], !url.isEmpty else {
                let message =
                    "PAYMENTS_DATABASE_URL is not set: run scripts/test.sh, or eval \"$(scripts/pg.sh start | sed 's/^/export /')\""
                XCTFail(message)
                throw PaymentsError.databaseUnavailable(detail: message)
            }
            return url
        }
    }

    static func store() async throws -> PaymentsStore {
        try await shared.store(url: try url)
    }

    static func randomTransactionId() -> String {
        String(UInt64.random(in: 1_000_000_000_000_000...9_000_000_000_000_000))
    }

    static func newPayment(
        userId: UUID = UUID(), transactionId: String = randomTransactionId(), productCode: String = "starter_pack",
        claimed: Bool = true
    ) -> NewPayment {
        NewPayment(
            appStoreProductId: "com.meeyao.qianwen.\(productCode)", transactionId: transactionId,
            originalTransactionId: transactionId,
            webOrderLineItemId: nil, environment: "Sandbox", bundleId: "com.meeyao.qianwen", appAccountToken: nil,
            purchaseDateUnixMilliseconds: 1_738_645_560_000, quantity: 1, currency: "USD", priceMilliunits: 990,
            signedTransactionInfo: "header.payload.signature",
            applePayloadJSON: "{\"transactionId\":\"\(transactionId)\"}",
            tokenOwner: nil,
            claim: claimed
                ? PaymentClaim(
                    userId: userId, productCode: productCode, credits: 100,
                    emailHash: String(repeating: "ab", count: 32),
                    emailMasked: "a***@example.com") : nil)
    }

    /// Records Apple's word about `payment` in its own transaction.
    @discardableResult
    static func record(
        _ store: PaymentsStore, _ payment: NewPayment, _ verdict: AppleVerdict = .purchased,
        signedAt: Int64 = 1_738_645_600_000
    ) async throws -> PaymentsStore.WordResult {
        try await store.pool.withTransaction {
            try await store.record(verdict, signedAtUnixMilliseconds: signedAt, for: payment, in: $0)
        }
    }
}
