import TestSupport
import XCTest
@testable import Gateway

final class Base64URLTests: XCTestCase {
    func testRoundTripAllLengths() {
        var generator = SeededRandom(seed: 7)
        for length in 0..<70 {
            let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            let text = Base64URL.encode(bytes)
            XCTAssertFalse(text.contains("="))
            XCTAssertEqual(Base64URL.decode(Array(text.utf8)), bytes)
        }
    }

    func testKnownVectorsAndStrictness() {
        XCTAssertEqual(Base64URL.encode(Array("foobar".utf8)), "Zm9vYmFy")
        XCTAssertEqual(Base64URL.encode([0xFB, 0xFF]), "-_8")
        XCTAssertNil(Base64URL.decode(Array("Zm9vYmFy=".utf8)))
        XCTAssertNil(Base64URL.decode(Array("Zm9v+mFy".utf8)))
        XCTAssertNil(Base64URL.decode(Array("Z".utf8)))
        XCTAssertNil(Base64URL.decode(Array("-_9".utf8)), "non-canonical trailing bits")
        XCTAssertNil(Base64URL.decode(Array("Zm 9v".utf8)))
    }
}
