import CryptoPrimitives
import XCTest

/// RFC 4231 section 4 test cases for HMAC-SHA-256.
final class HMACSHA256KeyTests: XCTestCase {
    private func code(key: [UInt8], data: [UInt8]) -> String {
        Hex.text(HMACSHA256Key(secret: key).authenticationCode(for: data))
    }

    func testRFC4231Vectors() {
        XCTAssertEqual(
            code(key: [UInt8](repeating: 0x0b, count: 20), data: Array("Hi There".utf8)),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        XCTAssertEqual(
            code(key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8)),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        XCTAssertEqual(
            code(key: [UInt8](repeating: 0xaa, count: 20), data: [UInt8](repeating: 0xdd, count: 50)),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe")
        XCTAssertEqual(
            code(key: Array(1...25), data: [UInt8](repeating: 0xcd, count: 50)),
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b")
        // Test case 5 is specified truncated to 128 bits.
        XCTAssertTrue(
            code(key: [UInt8](repeating: 0x0c, count: 20), data: Array("Test With Truncation".utf8))
                .hasPrefix("a3b6167473100ee06e0c796c2955552b"))
        XCTAssertEqual(
            code(
                key: [UInt8](repeating: 0xaa, count: 131),
                data: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
        let longData =
            "This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm."
        XCTAssertEqual(
            code(key: [UInt8](repeating: 0xaa, count: 131), data: Array(longData.utf8)),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2")
    }

    func testVerificationAcceptsOnlyTheExactCode() {
        let key = HMACSHA256Key(secret: Array("Jefe".utf8))
        let message = Array("what do ya want for nothing?".utf8)
        let good = key.authenticationCode(for: message)
        XCTAssertTrue(key.isValidAuthenticationCode(good, for: message))
        XCTAssertFalse(key.isValidAuthenticationCode(good, for: message + [0]))
        for index in [0, 15, 31] {
            var bad = good
            bad[index] ^= 0x80
            XCTAssertFalse(key.isValidAuthenticationCode(bad, for: message), "byte \(index)")
        }
        XCTAssertFalse(key.isValidAuthenticationCode(good.dropLast(), for: message))
        XCTAssertFalse(key.isValidAuthenticationCode(good + [0], for: message))
        XCTAssertFalse(key.isValidAuthenticationCode([], for: message))
        XCTAssertFalse(HMACSHA256Key(secret: Array("Jeff".utf8)).isValidAuthenticationCode(good, for: message))
    }

    func testEmptyKeyAndMessageWork() {
        // HMAC-SHA256 with an empty key over an empty message (well-known value).
        XCTAssertEqual(code(key: [], data: []), "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }

    func testConstantTimeEquality() {
        XCTAssertTrue(ConstantTime.equals([1, 2, 3], [1, 2, 3]))
        XCTAssertFalse(ConstantTime.equals([1, 2, 3], [1, 2, 4]))
        XCTAssertFalse(ConstantTime.equals([1, 2, 3], [1, 2]))
        XCTAssertTrue(ConstantTime.equals([UInt8](), []))
    }

    func testSecretNeverAppearsInDescriptions() {
        let key = HMACSHA256Key(secret: Array("correct horse battery staple".utf8))
        var dumped = ""
        dump(key, to: &dumped)
        for text in [String(describing: key), String(reflecting: key), dumped] {
            XCTAssertFalse(text.contains("horse"), text)
            XCTAssertFalse(text.contains("99"), text)  // 'c' = 99: no byte values either
        }
    }
}
