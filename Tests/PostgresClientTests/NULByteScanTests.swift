import Foundation
@testable import PostgresClient
import XCTest

/// The NUL check every statement's parameters pass before libpq sees them.
final class NULByteScanTests: XCTestCase {
    func testFindsANULAnywhereAndNothingElse() {
        XCTAssertFalse(NULByteScan.containsNUL(""))
        XCTAssertFalse(NULByteScan.containsNUL("eyJhbGciOiJFUzI1NiJ9.e30.c2ln"))
        XCTAssertFalse(NULByteScan.containsNUL("crédits ✓ 🍏"))
        XCTAssertFalse(NULByteScan.containsNUL(String(repeating: "x", count: 100_000)))
        XCTAssertTrue(NULByteScan.containsNUL("\u{0}"))
        XCTAssertTrue(NULByteScan.containsNUL("\u{0}abc"))
        XCTAssertTrue(NULByteScan.containsNUL("a\u{0}b"))
        XCTAssertTrue(NULByteScan.containsNUL("abc\u{0}"))
        XCTAssertTrue(NULByteScan.containsNUL(String(repeating: "y", count: 70_000) + "\u{0}"))
        // A small string (stored inline) and a substring's copy take the same path.
        XCTAssertTrue(NULByteScan.containsNUL(String("-a\u{0}b-".dropFirst().dropLast())))
    }

    func testABridgedStringIsScannedToo() {
        // An NSString-backed String may have no contiguous UTF-8: the walk covers it.
        let bridged = NSString(string: "bridged\u{0}text") as String
        XCTAssertTrue(NULByteScan.containsNUL(bridged))
        XCTAssertFalse(NULByteScan.containsNUL(NSString(string: "bridged text") as String))
    }
}
