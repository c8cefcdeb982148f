import RPCCore
import Metrics
import RPCRuntime
@testable import ServiceKit
import XCTest

final class RPCMetricsInterceptorTests: XCTestCase {
    private func request(_ path: String) -> ServerRequest<[UInt8]> {
        let parts = path.split(separator: "/").map(String.init)
        return ServerRequest(
            message: [], metadata: [:],
            context: ServerContext(
                method: MethodDescriptor(service: parts[0], method: parts[1]), deadline: nil, remotePeer: "127.0.0.1:1")
        )
    }

    func testCountsEachCallByMethodAndStatusNameWithItsDuration() async throws {
        let registry = MetricsRegistry()
        let metrics = try RPCServerMetrics(registry: registry)
        let interceptor = RPCMetricsInterceptor(metrics: metrics)
        _ = try await interceptor.intercept(request("points.v1.Points/Grant")) { _ in ServerResponse(message: [1]) }
        _ = try await interceptor.intercept(request("points.v1.Points/Grant")) { _ in ServerResponse(message: [1]) }
        do {
            _ = try await interceptor.intercept(request("points.v1.Points/Spend")) { _ in
                throw RPCError(code: .failedPrecondition, message: "insufficient balance")
            }
            XCTFail("the error must pass through")
        } catch let error as RPCError {
            XCTAssertEqual(error.code, .failedPrecondition)
        }
        do {
            _ = try await interceptor.intercept(request("points.v1.Points/Spend")) { _ in throw CancellationError() }
        } catch {}
        XCTAssertEqual(metrics.requests.labels("/points.v1.Points/Grant", "OK").value, 2)
        XCTAssertEqual(metrics.requests.labels("/points.v1.Points/Spend", "FAILED_PRECONDITION").value, 1)
        XCTAssertEqual(metrics.requests.labels("/points.v1.Points/Spend", "CANCELLED").value, 1)
        XCTAssertEqual(metrics.requestDuration.labels("/points.v1.Points/Grant").count, 2)
        XCTAssertEqual(metrics.requestDuration.labels("/points.v1.Points/Spend").count, 2)
    }

    func testStatusNamesAreGRPCs() {
        XCTAssertEqual(RPCMetricsInterceptor.name(of: .ok), "OK")
        XCTAssertEqual(RPCMetricsInterceptor.name(of: .unavailable), "UNAVAILABLE")
        XCTAssertEqual(RPCMetricsInterceptor.name(of: .unauthenticated), "UNAUTHENTICATED")
        XCTAssertEqual(RPCMetricsInterceptor.name(of: RPCError.Code(rawValue: 42)), "CODE_42")
    }
}
