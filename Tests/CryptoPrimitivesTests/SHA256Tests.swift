import CryptoPrimitives
import XCTest

/// FIPS 180-4 / NIST CSRC example vectors.
final class SHA256Tests: XCTestCase {
    func testKnownAnswers() {
        XCTAssertEqual(
            Hex.text(SHA256.hash(Array("abc".utf8))), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        )
        XCTAssertEqual(
            Hex.text(SHA256.hash([UInt8]())), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        XCTAssertEqual(
            SHA256.hexDigest(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    func testMillionAs() {
        XCTAssertEqual(
            SHA256.hexDigest([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    func testAnyCollectionHashesAsItsBytes() {
        let bytes = Array("abc".utf8)
        XCTAssertEqual(SHA256.hash("abc".utf8), SHA256.hash(bytes))
        XCTAssertEqual(SHA256.hash(bytes[...]), SHA256.hash(bytes))
        // A collection without contiguous storage.
        XCTAssertEqual(SHA256.hash(bytes.lazy.map { $0 }), SHA256.hash(bytes))
        XCTAssertEqual(SHA256.hash(bytes).count, SHA256.digestBytes)
    }
}
