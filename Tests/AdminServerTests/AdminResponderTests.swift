import AdminServer
import HTTPServer
import Metrics
import Synchronization
import XCTest

final class AdminResponderTests: XCTestCase {
    private func responder(ready: Bool = true) throws -> (AdminResponder, Counter) {
        let registry = MetricsRegistry()
        let counter = try registry.makeCounter(name: "test_events_total", help: "Events.", labelNames: ["kind"])
        let responder = AdminResponder(registry: registry) {
            AdminReadiness(isReady: ready, detail: "database=\(ready ? "up" : "down")")
        }
        return (responder, counter)
    }

    func testMetricsRendersTheRegistryInTextFormat004() throws {
        let (responder, counter) = try responder()
        counter.labels("a").increment(by: 3)
        let answer = responder.answer(method: "GET", target: "/metrics")
        XCTAssertEqual(answer.status, 200)
        XCTAssertEqual(answer.headers.first("Content-Type"), MetricsEndpoint.contentType)
        let text = String(decoding: answer.body, as: UTF8.self)
        XCTAssertTrue(text.contains("# TYPE test_events_total counter\n"), text)
        XCTAssertTrue(text.contains("test_events_total{kind=\"a\"} 3\n"), text)
    }

    func testLivenessIsAlways200EvenWhenNotReady() throws {
        let (responder, _) = try responder(ready: false)
        XCTAssertEqual(responder.answer(method: "GET", target: "/livez").status, 200)
        let readiness = responder.answer(method: "GET", target: "/readyz")
        XCTAssertEqual(readiness.status, 503)
        XCTAssertEqual(String(decoding: readiness.body, as: UTF8.self), "not ready database=down\n")
    }

    func testReadinessFollowsTheClosureEachTime() {
        let ready = Mutex(false)
        let responder = AdminResponder(registry: MetricsRegistry()) {
            AdminReadiness(isReady: ready.withLock { $0 }, detail: "")
        }
        XCTAssertEqual(responder.answer(method: "GET", target: "/readyz").status, 503)
        ready.withLock { $0 = true }
        XCTAssertEqual(responder.answer(method: "GET", target: "/readyz?verbose=1").status, 200)
    }

    func testOtherPathsAre404AndOtherMethods405() throws {
        let (responder, _) = try responder()
        XCTAssertEqual(responder.answer(method: "GET", target: "/").status, 404)
        XCTAssertEqual(responder.answer(method: "GET", target: "/metrics/").status, 404)
        XCTAssertEqual(responder.answer(method: "GET", target: "/api/v1/points/balance").status, 404)
        let post = responder.answer(method: "POST", target: "/livez")
        XCTAssertEqual(post.status, 405)
        XCTAssertEqual(post.headers.first("Allow"), "GET, HEAD")
        XCTAssertEqual(responder.answer(method: "DELETE", target: "/metrics").status, 405)
    }

    /// HEAD carries GET's body: the HTTP server sends its length and leaves
    /// the body out (an empty body had advertised Content-Length: 0).
    func testHeadCarriesGetsBodyForItsLength() throws {
        let (responder, _) = try responder()
        let head = responder.answer(method: "HEAD", target: "/readyz")
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.body, responder.answer(method: "GET", target: "/readyz").body)
        XCTAssertFalse(head.body.isEmpty)
    }
}
