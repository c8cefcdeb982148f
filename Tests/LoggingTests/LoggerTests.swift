import Foundation
import Logging
import StrictJSON
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
        XCTAssertNotNil(
            timestamp.range(of: #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$"#, options: .regularExpression),
            timestamp)
    }

    /// The fixed keys lead in a fixed order, the rest follow sorted, and a
    /// field cannot overwrite what the line itself says.
    func testFixedKeysLeadAndCannotBeOverwritten() throws {
        let sink = MemorySink()
        let logger = Logger(service: "gateway", sink: sink).with(["zeta": "z", "level": "forged"])
        logger.warning("careful", ["alpha": "a", "msg": "forged", "service": "forged"])
        let line = try XCTUnwrap(sink.allLines.first)
        guard case .object(let object) = try StrictJSONParser().parse(line) else { return XCTFail(line) }
        XCTAssertEqual(object.keys, ["ts", "level", "service", "msg", "alpha", "zeta"])
        XCTAssertEqual(object["level"], .string("warning"))
        XCTAssertEqual(object["service"], .string("gateway"))
        XCTAssertEqual(object["msg"], .string("careful"))
    }

    func testLevelsBelowTheMinimumAreDropped() {
        let sink = MemorySink()
        let logger = Logger(service: "points", minimumLevel: .warning, sink: sink)
        logger.debug("d"); logger.info("i"); logger.notice("n")
        logger.warning("w"); logger.error("e"); logger.critical("c")
        XCTAssertEqual(sink.allLines.count, 3)
        XCTAssertEqual(LogLevel.allNames, ["debug", "info", "notice", "warning", "error", "critical"])
    }
}

private extension LogLevel {
    static var allNames: [String] {
        [LogLevel.debug, .info, .notice, .warning, .error, .critical].map(\.name)
    }
}
