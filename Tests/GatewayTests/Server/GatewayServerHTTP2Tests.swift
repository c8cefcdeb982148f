import Contracts
import Foundation
import XCTest
@testable import Gateway

/// h2c (prior knowledge) on the shared port, driven by curl, and graceful
/// shutdown.
final class GatewayServerHTTP2Tests: XCTestCase {
    private static let curlPath = "/usr/bin/curl"

    /// Runs curl (bounded by --max-time) on a dedicated thread; returns stdout.
    private func curl(_ arguments: [String]) async throws -> String {
        guard FileManager.default.isExecutableFile(atPath: Self.curlPath) else {
            throw XCTSkip("curl is not installed")
        }
        return try await onDedicatedThread {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Self.curlPath)
            process.arguments = ["--silent", "--show-error", "--max-time", "10", "--http2-prior-knowledge"] + arguments
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
    }

    /// Runs nghttp (bounded by --timeout) on a dedicated thread; returns stdout.
    private func nghttp(_ arguments: [String]) async throws -> String {
        let path = "/usr/bin/nghttp"
        guard FileManager.default.isExecutableFile(atPath: path) else { throw XCTSkip("nghttp is not installed") }
        return try await onDedicatedThread {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: path)
            process.arguments = ["--timeout=10", "--verbose"] + arguments
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
    }

    /// POSTs the file at `bodyPath` with nghttp and returns the response
    /// statuses it printed. nghttp, unlike curl 7.88, keeps a complete
    /// response that arrives while it is still uploading and is followed by
    /// RST_STREAM(NO_ERROR) (RFC 9113 §8.1); curl then fails with exit 92
    /// before reading the response, and prints status 000.
    private func nghttpPostStatuses(_ url: String, bodyPath: String, bearer: String?) async throws -> [String] {
        Self.statuses(try await nghttpPost(url, bodyPath: bodyPath, bearer: bearer, keepBody: false))
    }

    /// nghttp's verbose output of the POST, with the response body when `keepBody`.
    private func nghttpPost(_ url: String, bodyPath: String, bearer: String?, keepBody: Bool) async throws -> String {
        var arguments = ["--header=content-type: application/json", "--data=\(bodyPath)"]
        if !keepBody { arguments.append("--null-out") }
        if let bearer { arguments.append("--header=authorization: Bearer \(bearer)") }
        return try await nghttp(arguments + [url])
    }

    private static func statuses(_ output: String) -> [String] {
        output.split(separator: "\n").filter { $0.contains(":status:") }.map { String($0.suffix(3)) }
    }

    func testConcurrentStreamsOnOneH2CConnection() async throws {
        let harness = try await GatewayHarness.start()
        let url = "http://127.0.0.1:\(harness.port)"
        // nghttp sends all three requests at once on one connection (curl
        // 7.88 cannot reuse a prior-knowledge connection: curl/curl#10634).
        let output = try await nghttp(["\(url)/healthz", "\(url)/nope", "\(url)/healthz?again"])
        XCTAssertEqual(output.components(separatedBy: "] Connected").count - 1, 1, output)
        let statuses = output.split(separator: "\n").filter { $0.contains(":status:") }.map { String($0.suffix(3)) }
        XCTAssertEqual(statuses.sorted(), ["200", "200", "404"], output)
        XCTAssertEqual(harness.logs.allLines.filter { $0.contains(#""protocol":"HTTP/2""#) }.count, 3)
        await harness.stop()
    }

    func testVerifyOverH2CReachesTheBackendWithTheTokensUser() async throws {
        let harness = try await GatewayHarness.start()
        let output = try await curl([
            "--header", "Authorization: Bearer \(GatewayHarness.token())", "--header", "Content-Type: application/json",
            "--header", "X-Request-Id: h2-request", "--data-binary", GatewayHarness.verifyBody(),
            "--dump-header", "-", "http://127.0.0.1:\(harness.port)/api/v1/payments/apple/transactions/verify",
        ])
        XCTAssertTrue(output.hasPrefix("HTTP/2 200"), output)
        XCTAssertTrue(output.contains("x-request-id: h2-request"), output)
        XCTAssertTrue(output.contains(#""status":"granted""#), output)
        XCTAssertEqual(harness.doubles.last(VerifyTransactionRequest.self)?.userId, BackendDoubles.ownerUserId)
        XCTAssertEqual(harness.doubles.recorded.last?.requestId, "h2-request")
        await harness.stop()
    }

    func testOversizedH2BodyIs413AndUnauthenticatedIs401() async throws {
        let harness = try await GatewayHarness.start()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("gateway-h2-body-\(UUID().uuidString)")
        try Data(repeating: UInt8(ascii: "a"), count: GatewayLimits.requestBodyBytesMax + 1).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let url = "http://127.0.0.1:\(harness.port)/api/v1/payments/apple/transactions/verify"
        // Answered before the body is all sent, and still the problem HTTP/1.1 gives.
        let large = try await nghttpPost(url, bodyPath: file.path, bearer: GatewayHarness.token(), keepBody: true)
        XCTAssertEqual(Self.statuses(large), ["413"], large)
        XCTAssertTrue(large.contains("content-type: application/problem+json"), large)
        XCTAssertTrue(large.contains(#""code":"PAYLOAD_TOO_LARGE""#), large)
        // The 401 comes from the head; the small body curl declared may
        // still come (before, the stream was reset after the answer, and
        // curl 7.88 reported error 92 when its upload had not finished by
        // then, on a busy machine: curl/curl#22984).
        let anonymous = try await curl([
            "--header", "Content-Type: application/json", "--data-binary", GatewayHarness.verifyBody(),
            "--output", "/dev/null", "--write-out", "%{http_code}", url,
        ])
        XCTAssertEqual(anonymous, "401")
        XCTAssertEqual(harness.doubles.recordedMethods, [])
        await harness.stop()
    }

    /// Over HTTP/2 too, the receipt route alone takes a body past 64 KiB
    /// (its limit comes from `:path`), and still refuses one past its own.
    func testReceiptBodyLimitOverH2C() async throws {
        let harness = try await GatewayHarness.start()
        let url = "http://127.0.0.1:\(harness.port)/api/v1/payments/apple/receipts"
        func post(decodedBytes: Int) async throws -> [String] {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent(
                "gateway-h2-receipt-\(UUID().uuidString)")
            let receipt = Data(repeating: 0x5A, count: decodedBytes).base64EncodedString()
            try Data(#"{"receiptData":"\#(receipt)"}"#.utf8).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            return try await nghttpPostStatuses(url, bodyPath: file.path, bearer: GatewayHarness.token())
        }
        let large = try await post(decodedBytes: 400 * 1024)
        XCTAssertEqual(large, ["200"])
        XCTAssertEqual(
            harness.doubles.last(VerifyReceiptRequest.self)?.receiptData.utf8.count, (400 * 1024 + 2) / 3 * 4)
        let tooLarge = try await post(decodedBytes: 600 * 1024)
        XCTAssertEqual(tooLarge, ["413"])
        XCTAssertEqual(harness.doubles.recordedMethods, ["VerifyReceipt"])
        await harness.stop()
    }

    func testShutdownFinishesTheRequestInFlightAndStopsAccepting() async throws {
        let harness = try await GatewayHarness.start()
        harness.doubles.setDelay(milliseconds: 500)
        let port = harness.port
        let bearer = GatewayHarness.bearer
        async let inFlight = onDedicatedThread { () -> (RawResponse, Bool) in
            let client = try RawHTTPClient(port: port)
            try client.send(GatewayHarness.requestText("GET", "/api/v1/points/balance", headers: [bearer]))
            return (try client.readResponse(), try client.waitForClose())
        }
        // Shut down once the request reached the backend.
        for _ in 0..<100 where harness.doubles.recordedMethods.isEmpty {
            try await Task.sleep(for: .milliseconds(20))
        }
        XCTAssertEqual(harness.doubles.recordedMethods, ["GetBalance"])
        await harness.server.shutdown(gracePeriod: .seconds(5))
        let (response, closed) = try await inFlight
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.header("Connection"), "close")
        XCTAssertTrue(closed)
        XCTAssertThrowsError(try RawHTTPClient(port: port), "no longer accepting")
        await harness.stop()
    }
}
