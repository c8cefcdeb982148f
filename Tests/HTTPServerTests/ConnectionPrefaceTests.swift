import XCTest
@testable import HTTPServer

final class ConnectionPrefaceTests: XCTestCase {
    func testFullPrefaceIsHTTP2EvenWithFramesAfterIt() {
        XCTAssertEqual(ConnectionPreface.classify(ConnectionPreface.http2ClientPreface), .http2)
        XCTAssertEqual(ConnectionPreface.classify(ConnectionPreface.http2ClientPreface + [0, 0, 0, 4]), .http2)
    }

    func testEveryProperPrefixIsUndecided() {
        for length in 0..<ConnectionPreface.http2ClientPreface.count {
            XCTAssertEqual(
                ConnectionPreface.classify(ConnectionPreface.http2ClientPreface.prefix(length)), .undecided, "\(length)"
            )
        }
    }

    func testHTTP1RequestsDivergeAtOnce() {
        XCTAssertEqual(ConnectionPreface.classify(Array("G".utf8)), .http1)
        XCTAssertEqual(ConnectionPreface.classify(Array("POST / HTTP/1.1\r\n".utf8)), .http1)
        // Diverging after a matching prefix ("PRI * HTTP/1.1") is HTTP/1 too.
        XCTAssertEqual(ConnectionPreface.classify(Array("PRI * HTTP/1.1\r\n".utf8)), .http1)
    }
}
