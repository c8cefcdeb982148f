import FieldRules
import XCTest

/// Asserts that `body` refuses its input with `code`, naming `field`, and
/// that the error never echoes the value.
func assertRefused(
    _ value: String, field: String, code: FieldRuleError.Code,
    file: StaticString = #filePath, line: UInt = #line,
    _ body: (String) throws -> Any
) {
    do {
        _ = try body(value)
        XCTFail("accepted \(value.debugDescription)", file: file, line: line)
    } catch {
        guard let error = error as? FieldRuleError else {
            return XCTFail("expected a FieldRuleError, got \(error)", file: file, line: line)
        }
        XCTAssertEqual(error.field, field, value.debugDescription, file: file, line: line)
        XCTAssertEqual(error.code, code, value.debugDescription, file: file, line: line)
        if value.utf8.count > 3 {
            XCTAssertFalse(error.description.contains(value), "the error echoes the value", file: file, line: line)
        }
    }
}

/// Inputs no ASCII rule accepts: controls, NUL, spaces, non-ASCII letters
/// and digits, format characters.
let hostileInsertions: [String] = [
    "\u{0}", "\t", "\n", "\r", "\u{7F}", "\u{85}", " ", "\u{A0}", "é", "e\u{301}", "１", "٣", "\u{202E}", "\u{200B}",
    "😀",
]
