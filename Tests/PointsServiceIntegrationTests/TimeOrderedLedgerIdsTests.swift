import Contracts
import Foundation
@testable import PointsService
import PostgresClient
import TestSupport
import XCTest

/// Points migration 8: `uuid_v7()` gives version 7 UUIDs carrying the time,
/// and new ledger rows get them as ids, later rows greater ids, so inserts
/// land on the primary key's newest leaves.
final class TimeOrderedLedgerIdsTests: PointsStoreTestCase {
    func testUUIDv7CarriesItsVersionVariantAndTheCurrentTime() async throws {
        let rows = try await store.pool.withConnection {
            try await $0.query(
                """
                select uuid_v7()::text as id, (extract(epoch from clock_timestamp()) * 1000)::bigint as now_ms
                from generate_series(1, 500)
                """
            ).map { (try $0.string("id"), try $0.int64("now_ms")) }
        }
        XCTAssertEqual(Set(rows.map(\.0)).count, 500, "every id is new")
        for (id, now) in rows {
            guard let milliseconds = VersionSevenUUID.milliseconds(id) else {
                return XCTFail("not a version 7 UUID: \(id)")
            }
            XCTAssertLessThanOrEqual(abs(milliseconds - now), 1, id)
        }
    }

    func testNewLedgerRowsGetTimeOrderedIds() async throws {
        let user = newUser()
        var ids: [String] = []
        for _ in 0..<3 {
            let transactionId = String(UInt64.random(in: 1_000_000_000_000...9_999_999_999_999_999))
            let result = try await store.grant(
                GrantRequest(
                    eventId: "payment.apple_iap:\(transactionId)", userId: user.uuidString,
                    emailHash: "", productCode: "popular_pack", bizId: "apple_iap:\(transactionId)"))
            ids.append(result.ledgerEntryId.uuidString.lowercased())
            try await Task.sleep(for: .milliseconds(3))
        }
        XCTAssertEqual(
            VersionSevenUUID.problems(
                ofIdsWrittenInOrder: ids, nowMilliseconds: Int64(Date().timeIntervalSince1970 * 1000)), [])
    }
}
