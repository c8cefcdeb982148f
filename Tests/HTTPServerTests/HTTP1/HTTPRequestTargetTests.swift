import HTTPServer
import XCTest

/// `HTTPRequest.path` and `.query`: split at the first "?" only.
final class HTTPRequestTargetTests: XCTestCase {
    private func request(_ target: String) -> HTTPRequest {
        HTTPRequest(method: "GET", target: target, version: .http1_1, headers: HTTPHeaders(), body: [], keepAlive: true)
    }

    func testPathAndQuerySplitAtTheFirstQuestionMark() {
        let cases: [(target: String, path: String, query: String?)] = [
            ("/a/b", "/a/b", nil),
            ("/a/b?", "/a/b", ""),
            ("/a?x=1", "/a", "x=1"),
            ("/a?x=1?y=2", "/a", "x=1?y=2"),
            ("?only", "", "only"),
            ("/é?ü", "/é", "ü"),
        ]
        for (target, path, query) in cases {
            XCTAssertEqual(request(target).path, Substring(path), target)
            XCTAssertEqual(request(target).query.map(String.init), query, target)
        }
    }
}
