import CryptoPrimitives
import XCTest

/// RFC 4648 vectors and the strictness that gives each byte string one text.
final class StrictBase64Tests: XCTestCase {
    func testRFC4648Vectors() throws {
        let vectors = [
            ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy"),
        ]
        for (plain, encoded) in vectors {
            XCTAssertEqual(StrictBase64.encodeStandard(Array(plain.utf8)), encoded)
            XCTAssertEqual(try StrictBase64.decodeStandard(encoded), Array(plain.utf8))
            let unpadded = encoded.replacingOccurrences(of: "=", with: "")
            XCTAssertEqual(StrictBase64.encodeURL(Array(plain.utf8)), unpadded)
            XCTAssertEqual(try StrictBase64.decodeURL(unpadded), Array(plain.utf8))
        }
        XCTAssertEqual(StrictBase64.encodeURL([0xFB, 0xFF]), "-_8")
        XCTAssertEqual(StrictBase64.encodeStandard([0xFB, 0xFF]), "+/8=")
    }

    func testRoundTripAllLengthsAndByteValues() throws {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for length in 0..<70 {
            let bytes = (0..<length).map { _ -> UInt8 in
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return UInt8(truncatingIfNeeded: state >> 56)
            }
            let url = StrictBase64.encodeURL(bytes)
            XCTAssertFalse(url.contains("="))
            XCTAssertEqual(try StrictBase64.decodeURL(url), bytes)
            XCTAssertEqual(try StrictBase64.decodeStandard(StrictBase64.encodeStandard(bytes)), bytes)
        }
        let all = (0...255).map(UInt8.init)
        XCTAssertEqual(try StrictBase64.decodeURL(StrictBase64.encodeURL(all)), all)
    }

    func testBase64URLStrictness() {
        let cases: [(String, Base64Error)] = [
            ("Zm9vYmFy=", .invalidPadding(offset: 8)),  // padding in base64url
            ("AA==", .invalidPadding(offset: 2)),
            ("Zm9v+mFy", .invalidCharacter(offset: 4)),  // the standard alphabet
            ("Zm9v/mFy", .invalidCharacter(offset: 4)),
            ("Z", .invalidLength(1)),  // 1 mod 4
            ("Zm9vY", .invalidLength(5)),
            ("-_9", .nonCanonical),  // non-zero trailing bits
            ("Zm 9v", .invalidCharacter(offset: 2)),  // whitespace
            ("Zm9v\n", .invalidCharacter(offset: 4)),
            ("Zm9\u{e9}", .invalidCharacter(offset: 3)),  // non-ASCII
        ]
        for (text, expected) in cases {
            XCTAssertThrowsError(try StrictBase64.decodeURL(text), text.debugDescription) { error in
                XCTAssertEqual(error as? Base64Error, expected, text.debugDescription)
            }
        }
    }

    func testStandardBase64Strictness() {
        let cases: [(String, Base64Error)] = [
            ("+/8", .invalidLength(3)),  // missing padding
            ("Zm9vYg", .invalidLength(6)),
            ("+/8=\n", .invalidCharacter(offset: 4)),  // trailing line break
            ("A===", .invalidPadding(offset: 1)),  // three padding characters
            ("====", .invalidPadding(offset: 0)),
            ("Zm=v", .invalidPadding(offset: 2)),  // padding in the middle
            ("-_8=", .invalidCharacter(offset: 0)),  // the URL alphabet
            ("Zm9v YmFy", .invalidCharacter(offset: 4)),
            ("Zm9v\r\nYm==", .invalidCharacter(offset: 4)),
            ("Zh==", .nonCanonical),  // "Zg==" is the only spelling of "f"
            ("Zm9=", .nonCanonical),
        ]
        for (text, expected) in cases {
            XCTAssertThrowsError(try StrictBase64.decodeStandard(text), text.debugDescription) { error in
                XCTAssertEqual(error as? Base64Error, expected, text.debugDescription)
            }
        }
    }

    func testAlphabetCheck() {
        let url = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        for byte in UInt8.min...UInt8.max {
            XCTAssertEqual(StrictBase64.isURLAlphabetByte(byte), url.contains(byte), "\(byte)")
        }
    }

    func testErrorsNameNoInput() {
        let secret = "c2VjcmV0!"
        XCTAssertThrowsError(try StrictBase64.decodeURL(secret)) { error in
            XCTAssertFalse("\(error)".contains("c2Vj"), "\(error)")
        }
    }
}
