import Glibc
import ServiceKit
import XCTest

final class ShutdownSignalTests: XCTestCase {
    func testASignalBeforeWaitIsRememberedAndEveryWaiterWakes() async throws {
        let shutdown = ShutdownSignal.manual()
        shutdown.trigger("early")
        let first = await shutdown.wait()
        XCTAssertEqual(first, "early")
        async let second = shutdown.wait()
        let secondName = await second
        XCTAssertEqual(secondName, "early")
    }

    func testARealSIGTERMWakesTheWaiterInsteadOfKillingTheProcess() async throws {
        let shutdown = ShutdownSignal.install()
        let waiter = Task { await shutdown.wait() }
        kill(getpid(), SIGTERM)
        let name = await waiter.value
        XCTAssertEqual(name, "SIGTERM")
        XCTAssertTrue(ShutdownSignal.install() === shutdown, "one instance per process")
    }
}
