import Foundation
@testable import PointsService
import XCTest

/// The `uuid[]` parameter of GetBalances' statement, written in one buffer.
final class UUIDArrayLiteralTests: XCTestCase {
    func testIsTheJoinedLowerCaseTexts() {
        for count in [0, 1, 2, 8, 64] {
            let ids = (0..<count).map { _ in UUID() }
            let expected = "{" + ids.map { $0.uuidString.lowercased() }.joined(separator: ",") + "}"
            XCTAssertEqual(PointsStore.uuidArrayLiteral(ids), expected)
        }
    }
}
