import XCTest

final class ServiceKitTestsPlaceholder: XCTestCase {
    func testModuleLoads() {}
}
