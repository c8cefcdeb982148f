import XCTest

final class PointsServiceTestsPlaceholder: XCTestCase {
    func testModuleLoads() {}
}
