import XCTest

final class AppStoreVerificationTestsPlaceholder: XCTestCase {
    func testModuleLoads() {}
}
