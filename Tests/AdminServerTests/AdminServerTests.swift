import AdminServer
import Foundation
import Metrics
import RPCRuntime
import Synchronization
import TestSupport
import XCTest

/// A real admin listener on 127.0.0.1:0, asked by curl (HTTP/1.1 and h2c).
final class AdminServerTests: XCTestCase {
    private func curl(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let path = NSTemporaryDirectory() + "admin-curl-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let status = try await offPool {
            try Command.run(
                ["/usr/bin/curl", "--silent", "--show-error", "--max-time", "10"] + arguments, outputPath: path)
        }
        return (status, (try? String(contentsOfFile: path, encoding: .utf8)) ?? "")
    }

    func testServesMetricsLivenessAndReadinessOverHTTP1AndH2C() async throws {
        let registry = MetricsRegistry()
        let counter = try registry.makeCounter(name: "test_scrapes_total", help: "Things counted.")
        let ready = Mutex(false)
        let server = try AdminServer(listen: HostAndPort(host: "127.0.0.1", port: 0), registry: registry) {
            AdminReadiness(isReady: ready.withLock { $0 }, detail: "database=\(ready.withLock { $0 } ? "up" : "down")")
        }
        let port = try await server.start()
        XCTAssertGreaterThan(port, 0)
        counter.labels().increment(by: 2)

        let metrics = try await curl(["http://127.0.0.1:\(port)/metrics"])
        XCTAssertEqual(metrics.status, 0, metrics.output)
        XCTAssertTrue(metrics.output.contains("test_scrapes_total 2\n"), metrics.output)

        let h2c = try await curl([
            "--http2-prior-knowledge", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(port)/livez",
        ])
        XCTAssertEqual(h2c.output, "200")
        let notReady = try await curl(["-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(port)/readyz"])
        XCTAssertEqual(notReady.output, "503")
        ready.withLock { $0 = true }
        let isReady = try await curl(["-w", " %{http_code}", "http://127.0.0.1:\(port)/readyz"])
        XCTAssertEqual(isReady.output, "ready database=up\n 200")
        let missing = try await curl([
            "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(port)/api/v1/points/balance",
        ])
        XCTAssertEqual(missing.output, "404")
        await server.shutdown()
        let afterShutdown = try await curl(["http://127.0.0.1:\(port)/livez"])
        XCTAssertNotEqual(afterShutdown.status, 0, "nothing listens after shutdown")
    }

    /// HEAD is answered with GET's Content-Length and no body (RFC 9110
    /// 9.3.2), over HTTP/1.1 and h2c; it had advertised 0.
    func testHeadAdvertisesTheLengthGetSends() async throws {
        let registry = MetricsRegistry()
        _ = try registry.makeCounter(name: "test_scrapes_total", help: "Things counted.").labels()
        let server = try AdminServer(listen: HostAndPort(host: "127.0.0.1", port: 0), registry: registry) {
            AdminReadiness(isReady: true, detail: "database=up")
        }
        let port = try await server.start()
        for path in ["/metrics", "/readyz", "/livez"] {
            let get = try await curl(["-o", "/dev/null", "-w", "%{size_download}", "http://127.0.0.1:\(port)\(path)"])
            XCTAssertEqual(get.status, 0, get.output)
            let getLength = try XCTUnwrap(Int(get.output))
            XCTAssertGreaterThan(getLength, 0, path)
            for protocolArguments in [["--http1.1"], ["--http2-prior-knowledge"]] {
                let head = try await curl(protocolArguments + ["--head", "http://127.0.0.1:\(port)\(path)"])
                XCTAssertEqual(head.status, 0, head.output)
                let length = head.output.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .map { $0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces) }
                XCTAssertEqual(length, String(getLength), "\(path) \(protocolArguments): \(head.output)")
            }
        }
        await server.shutdown()
    }
}
