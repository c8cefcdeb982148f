import RPCCore
import RPCRuntime
import Synchronization
import XCTest

final class EndToEndTests: XCTestCase {
    private var server: RPCServer!
    private var port = 0
    private var client: RPCClient!
    private let probe = HandlerProbe()

    override func setUp() async throws {
        (server, port) = try startTestServer(probe: probe)
        client = try makeTestClient(ports: [port])
    }

    override func tearDown() async throws {
        await client.close()
        await server.shutdown(gracePeriod: .seconds(1))
    }

    private func echo(_ text: String, metadata: Metadata = [:], timeout: Duration? = nil) async throws
        -> ClientResponse<RawMessage>
    {
        try await client.unary(
            TestMethods.echo, request: RawMessage(text), responseType: RawMessage.self, metadata: metadata,
            timeout: timeout)
    }

    func testUnarySuccessRoundTrip() async throws {
        let response = try await echo("hello")
        XCTAssertEqual(response.message.text, "hello")
    }

    func testEmptyMessageRoundTrip() async throws {
        let response = try await echo("")
        XCTAssertEqual(response.message.bytes, [])
    }

    func testLargeMessageUnderLimitRoundTrip() async throws {
        let big = [UInt8](repeating: 7, count: 3 * 1024 * 1024)
        let response = try await client.unary(TestMethods.echo, request: RawMessage(big), responseType: RawMessage.self)
        XCTAssertEqual(response.message.bytes, big)
    }

    func testEveryStatusCodeReachesTheClient() async throws {
        for code in RPCError.Code.all where code != .ok {
            let error = await expectRPCError {
                _ = try await self.client.unary(
                    TestMethods.fail, request: RawMessage(String(code.rawValue)), responseType: RawMessage.self)
            }
            XCTAssertEqual(error?.code, code)
            XCTAssertEqual(error?.message, "failed with ünïcode % \(code.rawValue)")
            XCTAssertEqual(error?.metadata[stringValues: "x-error-detail"], ["detail"])
        }
    }

    func testDomainErrorChoosesItsCode() async throws {
        let error = await expectRPCError {
            _ = try await self.client.unary(
                TestMethods.fail, request: RawMessage("domain"), responseType: RawMessage.self)
        }
        XCTAssertEqual(error?.code, .failedPrecondition)
        XCTAssertEqual(error?.message, "Not enough credits")
    }

    func testOtherErrorsBecomeUnknownWithoutLeakingDetails() async throws {
        let error = await expectRPCError {
            _ = try await self.client.unary(
                TestMethods.fail, request: RawMessage("secret"), responseType: RawMessage.self)
        }
        XCTAssertEqual(error?.code, .unknown)
        XCTAssertFalse(error?.message.contains("hunter2") ?? true)
    }

    func testUnknownMethodIsUnimplemented() async throws {
        let error = await expectRPCError {
            _ = try await self.client.unary(
                MethodDescriptor(service: "test.v1.Test", method: "Nope"), request: RawMessage("x"),
                responseType: RawMessage.self)
        }
        XCTAssertEqual(error?.code, .unimplemented)
        let serviceError = await expectRPCError {
            _ = try await self.client.unary(
                MethodDescriptor(service: "nope.v1.Nope", method: "Echo"), request: RawMessage("x"),
                responseType: RawMessage.self)
        }
        XCTAssertEqual(serviceError?.code, .unimplemented)
    }

    func testOversizedRequestIsResourceExhaustedByServer() async throws {
        // The client's own limit is raised so the server's limit is what trips.
        var limits = RPCLimits()
        limits.messageSizeBytesMax = 16 * 1024 * 1024
        let bigClient = try RPCClient(
            targets: [HostAndPort(host: "127.0.0.1", port: port)], configuration: .init(limits: limits))
        let error = await expectRPCError {
            _ = try await bigClient.unary(
                TestMethods.echo, request: RawMessage([UInt8](repeating: 1, count: 4 * 1024 * 1024 + 1)),
                responseType: RawMessage.self)
        }
        XCTAssertEqual(error?.code, .resourceExhausted)
        await bigClient.close()
        // The connection and server stay usable.
        let response = try await echo("after")
        XCTAssertEqual(response.message.text, "after")
    }

    func testOversizedRequestIsRejectedByClientBeforeSending() async throws {
        let error = await expectRPCError {
            _ = try await self.client.unary(
                TestMethods.echo, request: RawMessage([UInt8](repeating: 1, count: 4 * 1024 * 1024 + 1)),
                responseType: RawMessage.self)
        }
        XCTAssertEqual(error?.code, .resourceExhausted)
    }

    func testDeadlineExceededIsAnsweredAndHandlerCancelled() async throws {
        let error = await expectRPCError {
            _ = try await self.client.unary(
                TestMethods.sleep, request: RawMessage("10000"), responseType: RawMessage.self,
                timeout: .milliseconds(100))
        }
        XCTAssertEqual(error?.code, .deadlineExceeded)
        // The handler sees cancellation; wait for it in a bounded loop.
        for _ in 0..<200 where probe.cancelled.withLock({ $0 }) == 0 {
            try await Task.sleep(for: .milliseconds(10))
        }
        XCTAssertEqual(probe.cancelled.withLock { $0 }, 1)
        XCTAssertEqual(probe.completed.withLock { $0 }, 0)
    }

    func testServerEnforcesDeadlineItself() async throws {
        // A raw call with grpc-timeout but no client-side timer: the server must answer.
        let error = await expectRPCError {
            _ = try await self.client.unary(
                TestMethods.sleep, request: RawMessage("10000"), responseType: RawMessage.self,
                metadata: [:], timeout: .milliseconds(50))
        }
        XCTAssertEqual(error?.code, .deadlineExceeded)
    }

    func testHandlerSeesDeadline() async throws {
        let withDeadline = try await client.unary(
            TestMethods.metadata, request: RawMessage(""), responseType: RawMessage.self, timeout: .seconds(5))
        XCTAssertEqual(withDeadline.message.text, "deadline")
        let without = try await client.unary(
            TestMethods.metadata, request: RawMessage(""), responseType: RawMessage.self)
        XCTAssertEqual(without.message.text, "none")
    }

    func testMetadataBothWaysIncludingBinary() async throws {
        var metadata = Metadata()
        metadata.addString("value-1", forKey: "x-ascii")
        metadata.addString("value-2", forKey: "x-ascii")
        let binary: [UInt8] = [0, 1, 2, 0xFF, 0xFE, 10, 13]
        metadata.addBinary(binary, forKey: "x-trace-bin")
        let response = try await client.unary(
            TestMethods.metadata, request: RawMessage(""), responseType: RawMessage.self, metadata: metadata)
        XCTAssertEqual(response.metadata[stringValues: "x-ascii"], ["value-1", "value-2"])
        XCTAssertEqual(response.metadata[binaryValues: "x-trace-bin"], [binary])
        XCTAssertEqual(response.trailingMetadata[stringValues: "x-ascii"], ["value-1", "value-2"])
        XCTAssertEqual(response.trailingMetadata[binaryValues: "x-trace-bin"], [binary])
    }

    func testHundredConcurrentCallsShareOneConnection() async throws {
        let client = self.client!
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<100 {
                group.addTask {
                    let response = try await client.unary(
                        TestMethods.echo, request: RawMessage("call-\(index)"), responseType: RawMessage.self)
                    XCTAssertEqual(response.message.text, "call-\(index)")
                }
            }
            try await group.waitForAll()
        }
        let connections = await server.connectionCount()
        XCTAssertEqual(connections, 1)
    }

    /// Cancellation resets the one stream (RST_STREAM), not the connection:
    /// the handler is cancelled while the multiplexed connection carries on.
    func testClientTaskCancellationCancelsServerHandlerAndKeepsTheConnection() async throws {
        let client = self.client!
        _ = try await echo("warm up")
        let task = Task {
            try await client.unary(TestMethods.sleep, request: RawMessage("10000"), responseType: RawMessage.self)
        }
        for _ in 0..<200 where probe.started.withLock({ $0 }) == 0 {
            try await Task.sleep(for: .milliseconds(10))
        }
        task.cancel()
        let error = await expectRPCError { _ = try await task.value }
        XCTAssertEqual(error?.code, .cancelled)
        for _ in 0..<200 where probe.cancelled.withLock({ $0 }) == 0 {
            try await Task.sleep(for: .milliseconds(10))
        }
        XCTAssertEqual(probe.cancelled.withLock { $0 }, 1)
        let after = try await echo("after")
        XCTAssertEqual(after.message.text, "after")
        let connections = await server.connectionCount()
        XCTAssertEqual(connections, 1, "the same connection served every call")
    }

    func testConnectionFailureIsUnavailable() async throws {
        // Find a free port by binding and shutting down a server.
        let (temporary, freePort) = try startTestServer()
        await temporary.shutdown(gracePeriod: .zero)
        let lonely = try makeTestClient(ports: [freePort])
        let error = await expectRPCError {
            _ = try await lonely.unary(TestMethods.echo, request: RawMessage("x"), responseType: RawMessage.self)
        }
        XCTAssertEqual(error?.code, .unavailable)
        await lonely.close()
    }
}
