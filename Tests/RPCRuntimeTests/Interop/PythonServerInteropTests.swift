import Contracts
import Foundation
import RPCCore
import RPCRuntime
import XCTest

/// The Swift client against a stock grpcio server (Tests/interop/python_echo_server.py).
final class PythonServerInteropTests: XCTestCase {
    private var child: AnnouncingProcess!
    private var client: RPCClient!

    override func setUp() async throws {
        let python = repositoryRoot + "/.venv/bin/python"
        guard FileManager.default.isExecutableFile(atPath: python) else {
            // Deliberately a failure, not a skip: interop must not pass silently.
            throw RPCError(
                code: .failedPrecondition,
                message: "Python venv missing at \(python): run scripts/install-deps.sh first")
        }
        child = AnnouncingProcess(
            executable: python, arguments: [repositoryRoot + "/Tests/interop/python_echo_server.py"])
        let line = try await child.start()
        guard line.hasPrefix("listening on "), let port = line.split(separator: ":").last.flatMap({ Int($0) }) else {
            child.stop()
            XCTFail("python echo server did not start: \(line)")
            throw RPCError(code: .unavailable, message: "python server did not start")
        }
        client = try makeTestClient(ports: [port])
    }

    override func tearDown() async throws {
        await client?.close()
        child?.stop()
    }

    private func call(_ request: EchoRequest, metadata: Metadata = [:], timeout: Duration? = .seconds(10)) async throws
        -> ClientResponse<EchoResponse>
    {
        try await Self.call(client, request, metadata: metadata, timeout: timeout)
    }

    private static func call(
        _ client: RPCClient, _ request: EchoRequest, metadata: Metadata = [:], timeout: Duration? = .seconds(10)
    ) async throws -> ClientResponse<EchoResponse> {
        let method = MethodDescriptor(service: "testing.v1.Echo", method: "Unary")
        let raw = try await client.unaryRaw(
            method, request: try request.serializedBytes(), metadata: metadata, timeout: timeout)
        return ClientResponse(
            message: try EchoResponse(serializedBytes: raw.message), metadata: raw.metadata,
            trailingMetadata: raw.trailingMetadata)
    }

    func testUnarySuccess() async throws {
        var request = EchoRequest()
        request.message = "hello python"
        request.payload = [0, 1, 255]
        let response = try await call(request)
        XCTAssertEqual(response.message.message, "hello python")
        XCTAssertEqual(response.message.payload, [0, 1, 255])
        // The deadline travelled as grpc-timeout.
        XCTAssertGreaterThan(response.message.deadlineRemainingMs, 0)
        XCTAssertLessThanOrEqual(response.message.deadlineRemainingMs, 10_000)
    }

    func testEveryErrorCode() async throws {
        for code in RPCError.Code.all where code != .ok {
            var request = EchoRequest()
            request.failWithCode = Int32(code.rawValue)
            request.failWithMessage = "boom ü % \(code)"
            let error = await expectRPCError { _ = try await self.call(request) }
            XCTAssertEqual(error?.code, code)
            XCTAssertEqual(error?.message, "boom ü % \(code)")
        }
    }

    func testDeadlineExceeded() async throws {
        var request = EchoRequest()
        request.delayMs = 5000
        let error = await expectRPCError { _ = try await self.call(request, timeout: .milliseconds(200)) }
        XCTAssertEqual(error?.code, .deadlineExceeded)
    }

    func testMetadataAsciiAndBinaryBothWays() async throws {
        var request = EchoRequest()
        request.echoMetadataKeys = ["x-ascii", "x-blob-bin"]
        var metadata = Metadata()
        metadata.addString("plain value", forKey: "x-ascii")
        metadata.addBinary([0, 255, 10, 13, 42], forKey: "x-blob-bin")
        let response = try await call(request, metadata: metadata)
        XCTAssertEqual(response.metadata[stringValues: "x-ascii"], ["plain value"])
        XCTAssertEqual(response.metadata[binaryValues: "x-blob-bin"], [[0, 255, 10, 13, 42]])
        XCTAssertEqual(response.trailingMetadata[stringValues: "x-ascii"], ["plain value"])
        XCTAssertEqual(response.trailingMetadata[binaryValues: "x-blob-bin"], [[0, 255, 10, 13, 42]])
        XCTAssertEqual(response.message.metadata.map(\.key), ["x-ascii", "x-blob-bin"])
        XCTAssertEqual(response.message.metadata.last?.value, "0,255,10,13,42")
    }

    func testErrorCarriesTrailingMetadata() async throws {
        var request = EchoRequest()
        request.failWithCode = Int32(RPCError.Code.aborted.rawValue)
        request.echoMetadataKeys = ["x-reason"]
        var metadata = Metadata()
        metadata.addString("conflict", forKey: "x-reason")
        let error = await expectRPCError { _ = try await self.call(request, metadata: metadata) }
        XCTAssertEqual(error?.code, .aborted)
        XCTAssertEqual(error?.metadata[stringValues: "x-reason"], ["conflict"])
    }

    func testHundredConcurrentCallsOnOneConnection() async throws {
        let client = self.client!
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<100 {
                group.addTask {
                    var request = EchoRequest()
                    request.message = "call-\(index)"
                    request.delayMs = 20
                    let response = try await Self.call(client, request, timeout: .seconds(30))
                    XCTAssertEqual(response.message.message, "call-\(index)")
                }
            }
            try await group.waitForAll()
        }
    }
}
