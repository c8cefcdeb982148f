import ServiceKit
import XCTest

final class HealthMonitorTests: XCTestCase {
    func testServingFollowsDependenciesAndShutdown() {
        let monitor = HealthMonitor()
        XCTAssertTrue(monitor.isServing)
        monitor.report("database", healthy: false, detail: "connection refused")
        XCTAssertFalse(monitor.isServing)
        monitor.report("database", healthy: true)
        XCTAssertTrue(monitor.isServing)
        monitor.beginShutdown()
        XCTAssertFalse(monitor.isServing)
    }

    func testProbeReportsUntilCancelled() async throws {
        let monitor = HealthMonitor()
        let task = Task { await monitor.runProbe("db", every: .milliseconds(5)) { (false, "down") } }
        for _ in 0..<200 where monitor.dependencies["db"] == nil { try await Task.sleep(for: .milliseconds(5)) }
        XCTAssertEqual(monitor.dependencies["db"], .init(isHealthy: false, detail: "down"))
        task.cancel()
        await task.value
    }
}
