import CryptoPrimitives
import XCTest

/// RFC 7468 reading and writing, and the typed errors for everything else.
final class PEMBlockTests: XCTestCase {
    private let der = Array(0..<100).map(UInt8.init)

    func testWritesSixtyFourColumnLinesAndReadsThemBack() throws {
        let text = PEMBlock(label: "CERTIFICATE", der: der).text
        let lines = text.split(separator: "\n")
        XCTAssertEqual(lines.first, "-----BEGIN CERTIFICATE-----")
        XCTAssertEqual(lines.last, "-----END CERTIFICATE-----")
        XCTAssertEqual(lines[1].count, 64)
        XCTAssertTrue(lines.dropFirst().dropLast().allSatisfy { $0.count <= 64 })
        XCTAssertEqual(try PEMBlock.blocks(in: text), [PEMBlock(label: "CERTIFICATE", der: der)])
    }

    func testSeveralBlocksCRLFAndExplanatoryText() throws {
        let first = PEMBlock(label: "CERTIFICATE", der: [1, 2, 3])
        let second = PEMBlock(label: "EC PRIVATE KEY", der: [4, 5])
        let text =
            "Subject: test\n" + first.text + "between blocks\n"
            + second.text.replacingOccurrences(of: "\n", with: "\r\n")
        XCTAssertEqual(try PEMBlock.blocks(in: text), [first, second])
        XCTAssertEqual(try PEMBlock.single(labelled: "EC PRIVATE KEY", in: Array(text.utf8)), second)
        XCTAssertThrowsError(try PEMBlock.single(labelled: "PUBLIC KEY", in: Array(text.utf8))) {
            XCTAssertEqual(
                $0 as? PEMError, .missingLabel(expected: "PUBLIC KEY", found: ["CERTIFICATE", "EC PRIVATE KEY"]))
        }
    }

    func testTypedErrors() {
        let cases: [(String, PEMError)] = [
            ("no pem here", .noBlock),
            ("", .noBlock),
            ("-----BEGIN CERTIFICATE-----\nAQID\n", .unterminated(label: "CERTIFICATE")),
            ("-----BEGIN A-----\nAQID\n-----BEGIN B-----\nAQID\n-----END B-----\n", .unterminated(label: "A")),
            (
                "-----BEGIN CERTIFICATE-----\nAQID\n-----END PUBLIC KEY-----\n",
                .mismatchedEnd(begin: "CERTIFICATE", end: "PUBLIC KEY")
            ),
            ("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n", .emptyBody(label: "CERTIFICATE")),
            (
                "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n",
                .invalidBody(label: "CERTIFICATE", .invalidCharacter(offset: 0))
            ),
            (
                "-----BEGIN CERTIFICATE-----\nAQ\n-----END CERTIFICATE-----\n",
                .invalidBody(label: "CERTIFICATE", .invalidLength(2))
            ),
            (
                "-----BEGIN CERTIFICATE-----\nAQ ID\n-----END CERTIFICATE-----\n",
                .invalidBody(label: "CERTIFICATE", .invalidCharacter(offset: 2))
            ),
            // Not boundary lines: a label with five dashes inside, or a leading dash.
            ("-----BEGIN A-----B-----\nAQID\n-----END A-----B-----\n", .noBlock),
            ("-----BEGIN -A-----\nAQID\n-----END -A-----\n", .noBlock),
            (
                "-----BEGIN A-----\nAQID\n-----END A-----B-----\n-----END A-----\n",
                .invalidBody(label: "A", .invalidCharacter(offset: 4))
            ),
        ]
        for (text, expected) in cases {
            XCTAssertThrowsError(try PEMBlock.blocks(in: text), text) {
                XCTAssertEqual($0 as? PEMError, expected, text)
            }
        }
        XCTAssertThrowsError(try PEMBlock.blocks(in: [0xFF, 0xFE])) { XCTAssertEqual($0 as? PEMError, .notText) }
        XCTAssertThrowsError(try PEMBlock.blocks(in: PEMBlock(label: "X", der: der).text, bytesMax: 32)) {
            XCTAssertEqual($0 as? PEMError, .tooLarge(bytesMax: 32))
        }
    }

    func testDescriptionsShowNoBytes() {
        let block = PEMBlock(label: "PRIVATE KEY", der: [0xDE, 0xAD, 0xBE, 0xEF])
        var dumped = ""
        dump(block, to: &dumped)
        for text in [String(describing: block), String(reflecting: block), dumped] {
            XCTAssertFalse(text.contains("222"), text)  // 0xDE
            XCTAssertFalse(text.contains("3q2+7w"), text)
        }
        let error = PEMError.invalidBody(label: "PRIVATE KEY", .invalidCharacter(offset: 3))
        XCTAssertEqual(
            "\(error)", "the PRIVATE KEY block is not base64: a character outside the base64 alphabet at offset 3")
    }
}
