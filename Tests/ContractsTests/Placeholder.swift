import XCTest

final class ContractsTestsPlaceholder: XCTestCase {
    func testModuleLoads() {}
}
