import ServiceKit
import XCTest

/// `RandomWordBuffer` hands out each word of the kernel's random bytes once.
final class RandomWordBufferTests: XCTestCase {
    /// Every word is handed out once, across refills, and the words are not
    /// constant (a buffer never filled would hand out zeros).
    func testWordsAreFreshAcrossRefills() {
        let buffer = RandomWordBuffer(capacity: 4)
        let words = (0..<64).map { _ in buffer.next() }
        XCTAssertEqual(Set(words).count, 64)
        XCTAssertFalse(words.contains(0))
    }
}
