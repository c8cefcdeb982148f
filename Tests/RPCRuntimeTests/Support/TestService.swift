import RPCCore
import RPCRuntime
import Synchronization

/// Methods of the in-test service.
enum TestMethods {
    static let echo = MethodDescriptor(service: "test.v1.Test", method: "Echo")
    static let fail = MethodDescriptor(service: "test.v1.Test", method: "Fail")
    static let sleep = MethodDescriptor(service: "test.v1.Test", method: "Sleep")
    static let metadata = MethodDescriptor(service: "test.v1.Test", method: "Metadata")
    static let whoami = MethodDescriptor(service: "test.v1.Test", method: "WhoAmI")
}

/// Counts what handlers saw, for cancellation assertions.
final class HandlerProbe: Sendable {
    let started = Mutex(0)
    let cancelled = Mutex(0)
    let completed = Mutex(0)

    enum Counter { case started, cancelled, completed }

    func count(_ counter: Counter) -> Int {
        switch counter {
        case .started: started.withLock { $0 }
        case .cancelled: cancelled.withLock { $0 }
        case .completed: completed.withLock { $0 }
        }
    }
}

/// Builds the router used by end-to-end tests. `name` lets round-robin tests
/// tell servers apart.
func makeTestRouter(name: String = "server", probe: HandlerProbe = HandlerProbe()) -> Router {
    var router = Router()
    router.registerUnary(TestMethods.echo, requestType: RawMessage.self, responseType: RawMessage.self) { request in
        ServerResponse(message: request.message)
    }
    router.registerUnary(TestMethods.fail, requestType: RawMessage.self, responseType: RawMessage.self) { request in
        // Request text: "<code>" fails with that code; "domain" / "secret" use error types.
        switch request.message.text {
        case "domain": throw InsufficientCredits()
        case "secret": throw SecretFailure()
        default:
            let code = Int(request.message.text) ?? 2
            var metadata = Metadata()
            metadata.addString("detail", forKey: "x-error-detail")
            throw RPCError(
                code: RPCError.Code(rawValue: code), message: "failed with ünïcode % \(code)", metadata: metadata)
        }
    }
    router.registerUnary(TestMethods.sleep, requestType: RawMessage.self, responseType: RawMessage.self) { request in
        probe.started.withLock { $0 += 1 }
        let milliseconds = Int(request.message.text) ?? 10_000
        do {
            try await Task.sleep(for: .milliseconds(milliseconds))
        } catch {
            probe.cancelled.withLock { $0 += 1 }
            throw error
        }
        probe.completed.withLock { $0 += 1 }
        return ServerResponse(message: RawMessage("slept"))
    }
    router.registerUnary(TestMethods.metadata, requestType: RawMessage.self, responseType: RawMessage.self) { request in
        // Echo every request metadata entry in both initial and trailing metadata.
        var initial = Metadata()
        var trailing = Metadata()
        for entry in request.metadata {
            initial.addValue(entry.value, forKey: entry.key)
            trailing.addValue(entry.value, forKey: entry.key)
        }
        let deadline = request.context.deadline.map { _ in "deadline" } ?? "none"
        return ServerResponse(message: RawMessage(deadline), metadata: initial, trailingMetadata: trailing)
    }
    router.registerUnary(TestMethods.whoami, requestType: RawMessage.self, responseType: RawMessage.self) { _ in
        ServerResponse(message: RawMessage(name))
    }
    return router
}

/// Starts a server on 127.0.0.1, OS-chosen port unless given.
func startTestServer(
    name: String = "server", port: Int = 0, probe: HandlerProbe = HandlerProbe(),
    limits: RPCLimits = .default, tls: TLSConfiguration? = nil
) throws -> (RPCServer, Int) {
    let server = RPCServer(
        configuration: .init(listen: .init(host: "127.0.0.1", port: port), limits: limits, tls: tls),
        router: makeTestRouter(name: name, probe: probe))
    let bound = try server.start()
    return (server, bound)
}

/// A client with short backoff so reconnect tests stay quick.
func makeTestClient(
    ports: [Int], tls: TLSConfiguration? = nil,
    backoff: ConnectionBackoff = ConnectionBackoff(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(200))
) throws -> RPCClient {
    try RPCClient(
        targets: ports.map { HostAndPort(host: "127.0.0.1", port: $0) },
        configuration: .init(backoff: backoff, tls: tls))
}

/// Runs `body` and returns the RPCError it threw; fails the test otherwise.
func expectRPCError(_ body: () async throws -> Void, file: StaticString = #filePath, line: UInt = #line) async
    -> RPCError?
{
    do {
        try await body()
        return nil
    } catch let error as RPCError {
        return error
    } catch {
        return RPCError(code: .init(rawValue: -1), message: "unexpected error type \(error)")
    }
}
