import Foundation
@testable import PaymentsService
import PostgresClient
import TestSupport
import XCTest

/// Payments migration 8 (`signed_transaction_lz4`): the JWS column compresses
/// with lz4 from then on, where pglz gave up on base64url text and stored it
/// as it came. Catalog only: nothing rewritten, stored JWS read back as
/// written, and each JWS the store writes after it comes back byte for byte.
final class PaymentsSignedTransactionCompressionTests: XCTestCase {
    /// A transaction Apple's sandbox really signed (5,079 bytes of
    /// base64url, so TOASTed): the kind of text the column holds.
    private static let appleSignedJWS: String = {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("AppStoreVerificationTests/Fixtures/tx_sandbox_consumable.jws")
        return ((try? String(contentsOf: fixture, encoding: .utf8)) ?? "").trimmingCharacters(
            in: .whitespacesAndNewlines)
    }()

    private static func payment() -> NewPayment {
        var payment = PaymentsTestDatabase.newPayment()
        payment.signedTransactionInfo = appleSignedJWS
        return payment
    }

    private struct StoredJWS: Equatable {
        var text: String
        var compression: String?
    }

    private func stored(_ transactionId: String, _ store: PaymentsStore) async throws -> StoredJWS {
        try await store.pool.withConnection { connection in
            let rows = try await connection.query(
                """
                select signed_transaction_info, pg_column_compression(signed_transaction_info) as compression
                from apple_iap_transactions where transaction_id = $1
                """, [.text(transactionId)])
            let row = try XCTUnwrap(rows.first)
            return StoredJWS(
                text: try row.string("signed_transaction_info"), compression: try row.optionalString("compression"))
        }
    }

    private func columnCompression(_ store: PaymentsStore) async throws -> String {
        try await store.pool.withConnection { connection in
            let rows = try await connection.query(
                """
                select attcompression::text as method from pg_attribute
                where attrelid = 'apple_iap_transactions'::regclass and attname = 'signed_transaction_info'
                """)
            return try XCTUnwrap(rows.first).string("method")
        }
    }

    func testMigrationEightCompressesNewJWSWithLZ4AndRewritesNothing() async throws {
        let store = try await PaymentsSchemaAtVersion.store(version: 7, for: self)
        let before = Self.payment()
        XCTAssertEqual(before.signedTransactionInfo.utf8.count, 5_079, "the fixture is read")
        try await PaymentsTestDatabase.record(store, before)
        let beforeStored = try await stored(before.transactionId, store)
        XCTAssertEqual(
            beforeStored, StoredJWS(text: before.signedTransactionInfo, compression: nil),
            "under pglz the JWS is stored uncompressed: pglz gives up on it")
        let compressionBefore = try await columnCompression(store)
        XCTAssertEqual(compressionBefore, "", "migration 7 leaves the server's default")
        let schemaBefore = try await store.pool.withConnection { try await SchemaSnapshot.read($0) }
        let recordBefore = try await store.find(transactionId: before.transactionId)

        try await PaymentsSchemaAtVersion.migrate(store.pool, upTo: 8)

        let compressionAfter = try await columnCompression(store)
        XCTAssertEqual(compressionAfter, "l")
        let schemaAfter = try await store.pool.withConnection { try await SchemaSnapshot.read($0) }
        XCTAssertEqual(schemaAfter, schemaBefore, "no table, index or TOAST table was rewritten")
        let beforeStoredAfter = try await stored(before.transactionId, store)
        XCTAssertEqual(beforeStoredAfter, beforeStored, "a stored JWS keeps its form")
        let recordAfter = try await store.find(transactionId: before.transactionId)
        XCTAssertEqual(recordAfter, recordBefore)

        let after = Self.payment()
        try await PaymentsTestDatabase.record(store, after)
        let afterStored = try await stored(after.transactionId, store)
        XCTAssertEqual(afterStored, StoredJWS(text: after.signedTransactionInfo, compression: "lz4"))
        let sizes = try await store.pool.withConnection { connection in
            let rows = try await connection.query(
                """
                select pg_column_size(signed_transaction_info)::bigint as stored, octet_length(signed_transaction_info)::bigint as length
                from apple_iap_transactions where transaction_id = $1
                """, [.text(after.transactionId)])
            return try XCTUnwrap(rows.first)
        }
        let (storedBytes, length) = (try sizes.int64("stored"), try sizes.int64("length"))
        XCTAssertLessThan(storedBytes, length, "lz4 stores it smaller")
    }
}
