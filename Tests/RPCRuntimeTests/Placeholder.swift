import XCTest

final class RPCRuntimeTestsPlaceholder: XCTestCase {
    func testModuleLoads() {}
}
