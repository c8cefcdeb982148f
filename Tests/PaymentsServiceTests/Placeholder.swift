import XCTest

final class PaymentsServiceTestsPlaceholder: XCTestCase {
    func testModuleLoads() {}
}
