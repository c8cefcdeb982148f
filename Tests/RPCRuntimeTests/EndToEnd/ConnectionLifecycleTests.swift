import RPCCore
import RPCRuntime
import Synchronization
import XCTest

final class ConnectionLifecycleTests: XCTestCase {
    func testClientReconnectsAfterServerRestart() async throws {
        var (server, port) = try startTestServer()
        let client = try makeTestClient(ports: [port])
        let first = try await client.unary(TestMethods.echo, request: RawMessage("one"), responseType: RawMessage.self)
        XCTAssertEqual(first.message.text, "one")
        await server.shutdown(gracePeriod: .zero)

        let whileDown = await expectRPCError {
            _ = try await client.unary(TestMethods.echo, request: RawMessage("down"), responseType: RawMessage.self)
        }
        XCTAssertEqual(whileDown?.code, .unavailable)

        (server, _) = try startTestServer(port: port)
        var answered: String?
        // Bounded: backoff is at most 200 ms in test clients.
        for _ in 0..<100 {
            if let response = try? await client.unary(
                TestMethods.echo, request: RawMessage("two"), responseType: RawMessage.self)
            {
                answered = response.message.text
                break
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        XCTAssertEqual(answered, "two")
        await client.close()
        await server.shutdown(gracePeriod: .seconds(1))
    }

    func testRoundRobinAcrossTwoServers() async throws {
        let (serverA, portA) = try startTestServer(name: "A")
        let (serverB, portB) = try startTestServer(name: "B")
        let client = try makeTestClient(ports: [portA, portB])
        var seen: [String: Int] = [:]
        for _ in 0..<10 {
            let response = try await client.unary(
                TestMethods.whoami, request: RawMessage(""), responseType: RawMessage.self)
            seen[response.message.text, default: 0] += 1
        }
        XCTAssertEqual(seen, ["A": 5, "B": 5])
        await client.close()
        await serverA.shutdown(gracePeriod: .seconds(1))
        await serverB.shutdown(gracePeriod: .seconds(1))
    }

    func testRoundRobinSkipsDeadTarget() async throws {
        let (serverA, portA) = try startTestServer(name: "A")
        let (serverB, portB) = try startTestServer(name: "B")
        await serverB.shutdown(gracePeriod: .zero)
        // A long backoff keeps the dead target out of rotation for the whole test.
        let client = try makeTestClient(
            ports: [portA, portB], backoff: ConnectionBackoff(initialDelay: .seconds(60), maximumDelay: .seconds(60)))
        var answers: [String] = []
        for _ in 0..<10 {
            do {
                answers.append(
                    try await client.unary(TestMethods.whoami, request: RawMessage(""), responseType: RawMessage.self)
                        .message.text)
            } catch {
                answers.append("\((error as? RPCError)?.code.description ?? "other")")
            }
        }
        // Only the first visit to the dead target fails; later calls skip it while it backs off.
        XCTAssertEqual(answers, ["A", "UNAVAILABLE"] + Array(repeating: "A", count: 8))
        await client.close()
        await serverA.shutdown(gracePeriod: .seconds(1))
    }

    func testGracefulShutdownLetsInFlightCallsFinish() async throws {
        let probe = HandlerProbe()
        let (server, port) = try startTestServer(probe: probe)
        let client = try makeTestClient(ports: [port])
        let calls = Task {
            try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<5 {
                    group.addTask {
                        try await client.unary(
                            TestMethods.sleep, request: RawMessage("300"), responseType: RawMessage.self
                        ).message.text
                    }
                }
                var results: [String] = []
                for try await result in group { results.append(result) }
                return results
            }
        }
        for _ in 0..<200 where probe.started.withLock({ $0 }) < 5 {
            try await Task.sleep(for: .milliseconds(10))
        }
        XCTAssertEqual(probe.started.withLock { $0 }, 5)
        await server.shutdown(gracePeriod: .seconds(10))
        let results = try await calls.value
        XCTAssertEqual(results, Array(repeating: "slept", count: 5))
        // New calls are refused once the server is gone.
        let after = await expectRPCError {
            _ = try await client.unary(TestMethods.echo, request: RawMessage("late"), responseType: RawMessage.self)
        }
        XCTAssertEqual(after?.code, .unavailable)
        await client.close()
    }

    func testShutdownGracePeriodCutsLongCalls() async throws {
        let probe = HandlerProbe()
        let (server, port) = try startTestServer(probe: probe)
        let client = try makeTestClient(ports: [port])
        let call = Task {
            try await client.unary(TestMethods.sleep, request: RawMessage("60000"), responseType: RawMessage.self)
        }
        for _ in 0..<200 where probe.started.withLock({ $0 }) == 0 {
            try await Task.sleep(for: .milliseconds(10))
        }
        await server.shutdown(gracePeriod: .milliseconds(200))
        let error = await expectRPCError { _ = try await call.value }
        XCTAssertEqual(error?.code, .unavailable)
        for _ in 0..<200 where probe.cancelled.withLock({ $0 }) == 0 {
            try await Task.sleep(for: .milliseconds(10))
        }
        XCTAssertEqual(probe.cancelled.withLock { $0 }, 1)
        await client.close()
    }
}
