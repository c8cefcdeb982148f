import Foundation
import IAPCreditsClient
import XCTest

/// The signed transaction travels to the gateway and into the record file,
/// and nowhere else: descriptions, debug descriptions, dumps and errors
/// leave it out.
final class RedactionTests: XCTestCase {
    let jws = "eyJhbGciOiJFUzI1NiJ9.SECRET-PAYLOAD.SECRET-SIGNATURE"

    private func rendered(_ value: Any) -> [String] {
        var dumped = ""
        dump(value, to: &dumped)
        return [String(describing: value), String(reflecting: value), dumped, "\(value)"]
    }

    func testNoRenderingShowsTheSignedTransaction() {
        let transaction = StoreTransaction(
            id: "2000000000000001", originalID: "2000000000000001", productID: "com.meeyao.qianwen.starter_pack",
            appAccountToken: nil, purchaseDate: Date(), revocationDate: nil, signedTransactionInfo: jws)
        let record = PendingPurchaseRecord(transaction: transaction, productCode: "starter_pack", now: Date())
        let values: [Any] = [
            transaction, record, record.verifyRequest, StoreTransactionResult.verified(transaction),
            PurchaseFlow.State.verifying(record), PurchaseFlow.Action.record(record), [record],
        ]
        for value in values {
            for text in rendered(value) {
                XCTAssertFalse(text.contains("SECRET"), text)
                XCTAssertTrue(text.contains("2000000000000001"), "the id stays, for support: \(text)")
            }
        }
    }

    func testTheRecordFileHoldsTheSignedTransactionButNoBearerToken() throws {
        let record = PendingPurchaseRecord(
            transactionId: "2000000000000001", productCode: "starter_pack", appStoreProductId: "com.x",
            signedTransactionInfo: jws, appAccountToken: nil, recordedAtUnixMilliseconds: 1)
        let text = String(decoding: try JSONEncoder().encode(record), as: UTF8.self)
        XCTAssertTrue(text.contains("SECRET-PAYLOAD"), "needed to resubmit")
        let keys = Set(
            (try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])?.keys.map { $0 } ?? [])
        XCTAssertEqual(
            keys,
            [
                "version", "transactionId", "productCode", "appStoreProductId", "signedTransactionInfo",
                "recordedAtUnixMilliseconds", "submissionCount",
            ])
    }
}
