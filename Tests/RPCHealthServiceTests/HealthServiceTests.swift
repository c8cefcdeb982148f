import Contracts
import RPCCore
import RPCHealthService
import RPCRuntime
import ServiceKit
import XCTest

/// The health service over a real loopback connection.
final class HealthServiceTests: XCTestCase {
    func testCheckFollowsTheMonitorAndRefusesUnknownServices() async throws {
        let monitor = HealthMonitor()
        var router = Router()
        HealthService.register(on: &router, monitor: monitor, serviceNames: ["points.v1.Points"])
        let server = RPCServer(configuration: .init(listen: .init(host: "127.0.0.1", port: 0)), router: router)
        let port = try server.start()
        let client = try RPCClient(targets: [HostAndPort(host: "127.0.0.1", port: port)])
        do {
            var status = try await client.call(
                HealthMethods.check, HealthCheckRequest(service: ""), timeout: .seconds(5)
            ).status
            XCTAssertEqual(status, .serving)
            monitor.report("database", healthy: false)
            status = try await client.call(
                HealthMethods.check, HealthCheckRequest(service: "points.v1.Points"), timeout: .seconds(5)
            ).status
            XCTAssertEqual(status, .notServing)
            do {
                _ = try await client.call(
                    HealthMethods.check, HealthCheckRequest(service: "nope.v1.Nope"), timeout: .seconds(5))
                XCTFail("expected NOT_FOUND")
            } catch let error as RPCError {
                XCTAssertEqual(error.code, .notFound)
            }
        } catch {
            XCTFail("\(error)")
        }
        await client.close()
        await server.shutdown(gracePeriod: .seconds(1))
    }
}
