import Foundation
@testable import IAPCreditsClient
import XCTest

/// The history routes' paths and answers, without a network.
final class HistoryRoutesTests: XCTestCase {
    func testPathsCarryOnlyValuesTheGatewayAccepts() {
        XCTAssertEqual(GatewayRoutes.ledger()?.path, "/api/v1/points/ledger")
        XCTAssertEqual(
            GatewayRoutes.ledger(pageSize: 20, pageToken: "djE6MTIz")?.path,
            "/api/v1/points/ledger?pageSize=20&pageToken=djE6MTIz")
        XCTAssertEqual(
            GatewayRoutes.transactions(pageToken: "a-b_c")?.path, "/api/v1/payments/apple/transactions?pageToken=a-b_c")
        XCTAssertNil(GatewayRoutes.ledger(pageSize: 0))
        XCTAssertNil(GatewayRoutes.ledger(pageSize: 201))
        XCTAssertNil(GatewayRoutes.transactions(pageSize: 101))
        XCTAssertNil(GatewayRoutes.ledger(pageToken: "a/b"), "a token the gateway never issues is not sent")
        XCTAssertNil(GatewayRoutes.ledger(pageToken: String(repeating: "a", count: 129)))
    }

    func testALedgerPageDecodesWithSignedAmounts() throws {
        let body = Data(
            """
            {"entries":[{"id":"0b6f4a0e-1c7d-4d3e-9a51-2f3c8c1d7e90","eventId":"chat.turn:1","changeType":"consume","direction":-1,
            "amount":30,"balanceAfter":70,"bizType":"chat","bizId":"s","createdAt":"2026-04-27T09:02:11.480Z"}],"nextPageToken":"djE6MTIz"}
            """.utf8)
        let page = try XCTUnwrap(GatewayRoutes.ledger()).decode(body)
        XCTAssertEqual(page.entries.map(\.signedAmount), [-30])
        XCTAssertEqual(page.nextPageToken, "djE6MTIz")
    }
}
