import Foundation
@testable import PointsService
import XCTest

/// A test case on the shared points store: every user a test makes with
/// `newUser()` has its ledger invariants (balance = ledger sum, credit lots)
/// checked after the test.
class PointsStoreTestCase: XCTestCase {
    var store: PointsStore!
    private(set) var users: [UUID] = []

    override func setUp() async throws {
        store = try await PointsTestDatabase.store()
        users = []
    }

    override func tearDown() async throws {
        if let store { try await PointsTestDatabase.assertInvariants(store, users: users) }
    }

    /// A fresh user whose invariants are checked after the test.
    func newUser() -> UUID {
        let id = UUID()
        users.append(id)
        return id
    }
}
