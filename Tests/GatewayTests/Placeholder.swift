import XCTest

final class GatewayTestsPlaceholder: XCTestCase {
    func testModuleLoads() {}
}
