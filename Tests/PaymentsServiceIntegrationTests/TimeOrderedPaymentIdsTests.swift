import Foundation
@testable import PaymentsService
import PostgresClient
import TestSupport
import XCTest

/// A new purchase's row id is a version 7 UUID (`TimeOrderedUUID`),
/// carrying the time, later rows greater ids.
final class TimeOrderedPaymentIdsTests: XCTestCase {
    func testNewPurchasesGetTimeOrderedIds() async throws {
        let store = try await PaymentsTestDatabase.store()
        var ids: [String] = []
        for _ in 0..<3 {
            let payment = PaymentsTestDatabase.newPayment()
            let word = try await store.recordIfNew(
                .purchased, signedAtUnixMilliseconds: 1_738_645_600_000, for: payment)
            guard let id = word?.after.id else { return XCTFail("a fresh purchase is inserted") }
            ids.append(id.uuidString.lowercased())
            try await Task.sleep(for: .milliseconds(3))
        }
        XCTAssertEqual(
            VersionSevenUUID.problems(
                ofIdsWrittenInOrder: ids, nowMilliseconds: Int64(Date().timeIntervalSince1970 * 1000)), [])
    }
}
