import Glibc
@testable import Logging
import StrictJSON
import XCTest

/// `Logger` writes its line member by member; the text must stay exactly
/// what a `JSONObject` of the same members gives through `JSONWriter`, and
/// `StandardErrorSink` must put the line and its newline on standard error.
final class LoggerLineWriterTests: XCTestCase {
    /// The line as the object-building path wrote it: fixed keys first, the
    /// other fields sorted, a field named like a fixed key dropped.
    private static func objectLine(
        timestamp: String, level: LogLevel, service: String, message: String, fields: [String: String]
    ) -> String {
        var object = JSONObject()
        object.insert("ts", .string(timestamp))
        object.insert("level", .string(level.name))
        object.insert("service", .string(service))
        object.insert("msg", .string(message))
        for key in fields.keys.sorted() { object.insert(key, .string(fields[key]!)) }
        return JSONWriter.string(of: .object(object))
    }

    func testTheWrittenLineIsTheObjectsTextForAnyFields() {
        let texts = [
            "", "plain", "quote \" and \\ backslash", "line\nbreak\r\ttab", "\u{0}\u{1}\u{1F}\u{7F}", "é", "e\u{301}",
            "K",
            "\u{212A}", "日本", "🙂", "ts", "level", "service", "msg", "msg ", "Ts",
        ]
        var generator = SystemRandomNumberGenerator()
        for round in 0..<300 {
            var fields: [String: String] = [:]
            for _ in 0..<Int.random(in: 0...9, using: &generator) {
                fields[
                    texts.randomElement(using: &generator)! + (Bool.random(using: &generator) ? "" : "_\(round % 5)")] =
                    texts.randomElement(using: &generator)!
            }
            let level = [LogLevel.debug, .info, .notice, .warning, .error, .critical].randomElement(using: &generator)!
            let message = texts.randomElement(using: &generator)!
            let written = String(
                decoding: Logger.lineBytes(
                    timestamp: "2026-12-01T21:00:00.000Z", level: level, service: "points",
                    message: message, fields: fields), as: UTF8.self)
            XCTAssertEqual(
                written,
                Self.objectLine(
                    timestamp: "2026-12-01T21:00:00.000Z", level: level, service: "points",
                    message: message, fields: fields), "\(fields)")
        }
    }

    func testStandardErrorSinkWritesTheLineAndItsNewline() throws {
        var ends: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&ends), 0)
        let savedStandardError = dup(2)
        XCTAssertEqual(dup2(ends[1], 2), 2)
        let line = "{\"msg\":\"" + String(repeating: "x", count: 3000) + "\"}"
        StandardErrorSink().write(line: line)
        StandardErrorSink().write(utf8Line: Array("second".utf8))
        XCTAssertEqual(dup2(savedStandardError, 2), 2)
        close(savedStandardError)
        close(ends[1])
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(ends[0], &buffer, buffer.count)
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        close(ends[0])
        XCTAssertEqual(String(decoding: received, as: UTF8.self), line + "\nsecond\n")
    }
}
