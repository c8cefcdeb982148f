import Foundation
import ServiceKit
import XCTest

final class LoggerTests: XCTestCase {
    func testLinesAreSingleJSONObjectsWithContextAndEscaping() throws {
        let sink = MemorySink()
        let logger = Logger(service: "points", sink: sink).with(["request_id": "r-1"])
        logger.info("hello \"world\"\nnext", ["n": "1", "ctl": "\u{1}"])
        logger.debug("dropped")
        XCTAssertEqual(sink.allLines.count, 1)
        let line = try XCTUnwrap(sink.allLines.first)
        XCTAssertFalse(line.contains("\n"))
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
        XCTAssertEqual(object["msg"], "hello \"world\"\nnext")
        XCTAssertEqual(object["request_id"], "r-1")
        XCTAssertEqual(object["service"], "points")
        XCTAssertEqual(object["level"], "info")
        XCTAssertEqual(object["ctl"], "\u{1}")
        let timestamp = try XCTUnwrap(object["ts"])
        XCTAssertNotNil(timestamp.range(of: #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$"#, options: .regularExpression), timestamp)
    }
}
