import HTTPServer
import ServiceKit
import XCTest
@testable import Gateway

final class RequestIDTests: XCTestCase {
    private func headers(_ values: [String]) -> HTTPHeaders {
        var headers = HTTPHeaders()
        for value in values { headers.add(name: "x-request-id", value: value) }
        return headers
    }

    func testSaneClientIdsAreKept() {
        XCTAssertEqual(RequestID.accepted(from: headers(["abc-123_x.y:z"])), "abc-123_x.y:z")
        XCTAssertEqual(
            RequestID.accepted(from: headers([String(repeating: "a", count: 128)])), String(repeating: "a", count: 128))
    }

    func testUnsafeOrAmbiguousIdsAreReplaced() {
        XCTAssertNil(RequestID.accepted(from: headers([])))
        XCTAssertNil(RequestID.accepted(from: headers([""])))
        XCTAssertNil(RequestID.accepted(from: headers(["a b"])))
        XCTAssertNil(RequestID.accepted(from: headers(["a\"b"])))
        XCTAssertNil(RequestID.accepted(from: headers(["é"])))
        XCTAssertNil(RequestID.accepted(from: headers([String(repeating: "a", count: 129)])))
        XCTAssertNil(RequestID.accepted(from: headers(["one", "two"])))
        let generated = RequestID.resolve(headers(["a b"]))
        XCTAssertEqual(generated.count, 32)
        XCTAssertTrue(generated.allSatisfy { $0.isHexDigit && !$0.isUppercase })
        XCTAssertNotEqual(RequestID.generate(), RequestID.generate())
    }

    func testIdsFromOneBufferAreHexAndDistinct() {
        let buffer = RandomWordBuffer(capacity: 3)
        let ids = (0..<100).map { _ in RequestID.generate(from: buffer) }
        XCTAssertEqual(Set(ids).count, 100)
        for id in ids {
            XCTAssertEqual(id.utf8.count, 32)
            XCTAssertTrue(id.allSatisfy { $0.isHexDigit && !$0.isUppercase }, id)
        }
    }
}
