import RPCCore
import Synchronization
import XCTest

/// `Router.intercept(with:)` without a network: order, short-circuit, and
/// handlers registered after the interceptor.
final class RouterInterceptorTests: XCTestCase {
    private let method = MethodDescriptor(service: "test.v1.Router", method: "Call")
    private let late = MethodDescriptor(service: "test.v1.Router", method: "Late")

    private func request(_ method: MethodDescriptor, text: String) -> ServerRequest<[UInt8]> {
        ServerRequest(
            message: Array(text.utf8), metadata: [:],
            context: ServerContext(
                method: method, deadline: nil, remotePeer: "test", peerIdentity: PeerIdentity(dnsNames: ["a"])))
    }

    func testInterceptorsRunInTheOrderAddedAroundEveryHandler() async throws {
        let trace = Trace()
        var router = Router()
        router.registerRaw(method) { request in
            trace.append("handler")
            return ServerResponse(message: request.message)
        }
        router.intercept(with: Tracing(name: "first", trace: trace))
        router.intercept(with: Tracing(name: "second", trace: trace))
        router.registerRaw(late) { request in
            trace.append("late handler")
            return ServerResponse(message: request.message)
        }
        let handler = try XCTUnwrap(router.handler(forPath: method.path))
        let response = try await handler(request(method, text: "hi"))
        XCTAssertEqual(response.message, Array("hi".utf8))
        XCTAssertEqual(trace.entries, ["first a", "second a", "handler"])
        trace.clear()
        _ = try await XCTUnwrap(router.handler(forPath: late.path))(request(late, text: "x"))
        XCTAssertEqual(trace.entries, ["first a", "second a", "late handler"])
        XCTAssertNil(router.handler(forPath: "/test.v1.Router/Missing"))
    }

    func testAThrowingInterceptorStopsTheChain() async throws {
        let trace = Trace()
        var router = Router()
        router.registerRaw(method) { request in
            trace.append("handler")
            return ServerResponse(message: request.message)
        }
        router.intercept(with: Refusing())
        router.intercept(with: Tracing(name: "after", trace: trace))
        let handler = try XCTUnwrap(router.handler(forPath: method.path))
        do {
            _ = try await handler(request(method, text: "hi"))
            XCTFail("the refusing interceptor let the call through")
        } catch let error as RPCError {
            XCTAssertEqual(error.code, .permissionDenied)
        }
        XCTAssertEqual(trace.entries, [])
    }
}

private struct Tracing: ServerInterceptor {
    let name: String
    let trace: Trace

    func intercept(_ request: ServerRequest<[UInt8]>, next: Router.RawHandler) async throws -> ServerResponse<[UInt8]> {
        trace.append("\(name) \(request.context.peerIdentity?.names.joined() ?? "-")")
        return try await next(request)
    }
}

private struct Refusing: ServerInterceptor {
    func intercept(_ request: ServerRequest<[UInt8]>, next: Router.RawHandler) async throws -> ServerResponse<[UInt8]> {
        throw RPCError(code: .permissionDenied, message: "no")
    }
}

private final class Trace: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    func clear() { lines.withLock { $0 = [] } }
    var entries: [String] { lines.withLock { $0 } }
}
