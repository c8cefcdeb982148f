import Logging
import RPCCore
import ServiceKit
import Synchronization
import XCTest

/// The interceptor: refusals carry the right status and never reach the handler.
final class CallerAuthorizationTests: XCTestCase {
    private let grant = MethodDescriptor(service: "points.v1.Points", method: "Grant")

    func testRefusalsNeverReachTheHandlerAndAreLogged() async throws {
        let sink = MemorySink()
        let calls = Counter()
        var router = Router()
        router.registerRaw(grant) { request in
            calls.increment()
            return ServerResponse(message: request.message)
        }
        InternalAuth.authorize(
            &router, policy: CallerPolicy([grant: .only(["payments"])]), mode: .mutualTLS,
            logger: Logger(service: "test", minimumLevel: .debug, sink: sink))
        let handler = try XCTUnwrap(router.handler(forPath: grant.path))
        func call(_ caller: PeerIdentity?) async -> RPCError.Code {
            let request = ServerRequest(
                message: [UInt8(1)], metadata: [:],
                context: ServerContext(
                    method: grant, deadline: nil, remotePeer: "127.0.0.1:1", peerIdentity: caller))
            do {
                _ = try await handler(request)
                return .ok
            } catch {
                return RPCError.from(error).code
            }
        }
        let anonymous = await call(nil)
        XCTAssertEqual(anonymous, .unauthenticated)
        let gateway = await call(PeerIdentity(dnsNames: ["gateway"]))
        XCTAssertEqual(gateway, .permissionDenied)
        XCTAssertEqual(calls.value, 0)
        let payments = await call(PeerIdentity(dnsNames: ["payments"]))
        XCTAssertEqual(payments, .ok)
        XCTAssertEqual(calls.value, 1)
        let lines = sink.allLines.filter { $0.contains("caller refused") }
        XCTAssertEqual(lines.count, 2)
        XCTAssertTrue(lines[1].contains("gateway") && lines[1].contains("/points.v1.Points/Grant"), lines[1])
    }

    func testOffInstallsNothingAndWarns() async throws {
        let sink = MemorySink()
        var router = Router()
        router.registerRaw(grant) { request in ServerResponse(message: request.message) }
        InternalAuth.authorize(
            &router, policy: CallerPolicy([:]), mode: .off,
            logger: Logger(service: "test", minimumLevel: .debug, sink: sink))
        let handler = try XCTUnwrap(router.handler(forPath: grant.path))
        let response = try await handler(
            ServerRequest(
                message: [UInt8(7)], metadata: [:],
                context: ServerContext(method: grant, deadline: nil, remotePeer: "x")))
        XCTAssertEqual(response.message, [7])
        XCTAssertTrue(sink.allLines.contains { $0.contains("INTERNAL_AUTH=off") })
    }
}

private final class Counter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
