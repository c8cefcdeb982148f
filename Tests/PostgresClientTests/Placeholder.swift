import XCTest

final class PostgresClientTestsPlaceholder: XCTestCase {
    func testModuleLoads() {}
}
