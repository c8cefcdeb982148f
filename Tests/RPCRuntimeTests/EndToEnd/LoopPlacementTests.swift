import RPCCore
import RPCRuntime
import Synchronization
import XCTest

/// Where calls run: a server's handlers on its event loop
/// (`handlersOnLoop`) or on the cooperative pool, and a client on a loop
/// lent by its owner, which the client's close leaves running.
final class LoopPlacementTests: XCTestCase {
    private static let placement = MethodDescriptor(service: "test.v1.Test", method: "Placement")

    /// A router whose Placement handler answers "loop" when its task has a
    /// task executor preference (the server's loop), "pool" otherwise.
    private func makeRouter(probe: HandlerProbe) -> Router {
        var router = makeTestRouter(probe: probe)
        router.registerUnary(Self.placement, requestType: RawMessage.self, responseType: RawMessage.self) { _ in
            let preferred = withUnsafeCurrentTask { $0?.unownedTaskExecutor != nil }
            return ServerResponse(message: RawMessage(preferred ? "loop" : "pool"))
        }
        return router
    }

    private func startServer(handlersOnLoop: Bool, probe: HandlerProbe = HandlerProbe()) throws -> (RPCServer, Int) {
        let server = RPCServer(
            configuration: .init(listen: .init(host: "127.0.0.1", port: 0), handlersOnLoop: handlersOnLoop),
            router: makeRouter(probe: probe))
        return (server, try server.start())
    }

    func testHandlersRunOnTheLoopOnlyWhenAskedTo() async throws {
        for (handlersOnLoop, expected) in [(true, "loop"), (false, "pool")] {
            let (server, port) = try startServer(handlersOnLoop: handlersOnLoop)
            let client = try makeTestClient(ports: [port])
            let answers = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        try await client.unary(Self.placement, request: RawMessage("?"), responseType: RawMessage.self)
                            .message.text
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            XCTAssertEqual(answers, Array(repeating: expected, count: 20), "handlersOnLoop: \(handlersOnLoop)")
            await client.close()
            await server.shutdown(gracePeriod: .seconds(1))
        }
    }

    func testHandlersOnTheLoopAreCancelledAtTheirDeadlineAndFailAsBefore() async throws {
        let probe = HandlerProbe()
        let (server, port) = try startServer(handlersOnLoop: true, probe: probe)
        let client = try makeTestClient(ports: [port])
        let timedOut = await expectRPCError {
            _ = try await client.unary(
                TestMethods.sleep, request: RawMessage("10000"), responseType: RawMessage.self,
                timeout: .milliseconds(50))
        }
        XCTAssertEqual(timedOut?.code, .deadlineExceeded)
        let failed = await expectRPCError {
            _ = try await client.unary(TestMethods.fail, request: RawMessage("9"), responseType: RawMessage.self)
        }
        XCTAssertEqual(failed?.code, .failedPrecondition)
        let echoed = try await client.unary(
            TestMethods.echo, request: RawMessage("still serving"), responseType: RawMessage.self)
        XCTAssertEqual(echoed.message.text, "still serving")
        let deadline = ContinuousClock.now + .seconds(5)
        while probe.count(.cancelled) == 0 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        XCTAssertEqual(probe.count(.cancelled), 1, "the handler's task was cancelled at the deadline")
        await client.close()
        await server.shutdown(gracePeriod: .seconds(1))
    }

    func testAClientOnALentLoopCallsFromItAndLeavesItRunning() async throws {
        let (server, port) = try startTestServer()
        let loop = try EventLoop(name: "lent")
        let client = try RPCClient(targets: [HostAndPort(host: "127.0.0.1", port: port)], loop: loop)
        // Called from a task on the same loop: the call is sent and answered there.
        let answer = try await Task(executorPreference: loop) { () -> String in
            let response = try await client.unary(
                TestMethods.echo, request: RawMessage("on the loop"), responseType: RawMessage.self)
            XCTAssertTrue(loop.inEventLoop)
            return response.message.text
        }.value
        XCTAssertEqual(answer, "on the loop")
        let fromPool = try await client.unary(
            TestMethods.echo, request: RawMessage("from the pool"), responseType: RawMessage.self)
        XCTAssertEqual(fromPool.message.text, "from the pool")
        await client.close()
        XCTAssertTrue(loop.execute {}, "the lent loop still runs after the client's close")
        let closed = await expectRPCError {
            _ = try await client.unary(TestMethods.echo, request: RawMessage("x"), responseType: RawMessage.self)
        }
        XCTAssertEqual(closed?.code, .unavailable)
        await loop.shutdown()
        await server.shutdown(gracePeriod: .zero)
    }
}
