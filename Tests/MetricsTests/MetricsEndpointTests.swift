import Metrics
import XCTest

final class MetricsEndpointTests: XCTestCase {
    private func endpoint() throws -> (MetricsEndpoint, Counter) {
        let registry = MetricsRegistry()
        let counter = try registry.makeCounter(name: "scrapes_total", help: "Scrapes.")
        return (MetricsEndpoint(registry: registry), counter)
    }

    func testGetAnswersTheExpositionWithItsContentType() throws {
        let (endpoint, counter) = try endpoint()
        counter.increment()
        let response = try XCTUnwrap(endpoint.respond(method: "GET", target: "/metrics"))
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.headers, [.init("Content-Type", "text/plain; version=0.0.4; charset=utf-8")])
        let body = String(decoding: response.body, as: UTF8.self)
        XCTAssertTrue(
            body.hasSuffix("# HELP scrapes_total Scrapes.\n# TYPE scrapes_total counter\nscrapes_total 1\n"), body)
        counter.increment()
        XCTAssertTrue(
            String(decoding: try XCTUnwrap(endpoint.respond(method: "GET", target: "/metrics?x=1")).body, as: UTF8.self)
                .hasSuffix("scrapes_total 2\n"))
    }

    /// HEAD gets GET's body, which the HTTP server measures for
    /// Content-Length and leaves out (an empty body had advertised 0).
    func testHeadAnswersGetsHeadersAndBodyForItsLength() throws {
        let (endpoint, _) = try endpoint()
        let response = try XCTUnwrap(endpoint.respond(method: "HEAD", target: "/metrics"))
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.headers, [.init("Content-Type", MetricsEndpoint.contentType)])
        XCTAssertEqual(response.body, try XCTUnwrap(endpoint.respond(method: "GET", target: "/metrics")).body)
    }

    func testOtherMethodsAre405WithAllow() throws {
        let (endpoint, _) = try endpoint()
        for method in ["POST", "PUT", "DELETE", "get", "OPTIONS"] {
            let response = try XCTUnwrap(endpoint.respond(method: method, target: "/metrics"), method)
            XCTAssertEqual(response.status, 405, method)
            XCTAssertTrue(response.headers.contains(.init("Allow", "GET, HEAD")), method)
        }
    }

    func testOtherPathsAreNotOurs() throws {
        let (endpoint, _) = try endpoint()
        for target in [
            "/", "/metrics/", "/metricsx", "/Metrics", "/api/v1/metrics", "metrics", "", "?/metrics", "/metrics#x",
        ] {
            XCTAssertNil(endpoint.respond(method: "GET", target: target), target)
        }
    }
}
