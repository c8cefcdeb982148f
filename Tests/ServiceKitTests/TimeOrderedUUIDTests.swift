import Foundation
import ServiceKit
import ServiceKitDatabase
import TestSupport
import XCTest

/// `TimeOrderedUUID` makes RFC 9562 version 7 UUIDs: the given time in the
/// first 48 bits, version 7, variant 10, random bits after; later times
/// give greater ids.
final class TimeOrderedUUIDTests: XCTestCase {
    func testTheIdCarriesItsTimeVersionAndVariant() {
        for milliseconds: Int64 in [0, 1, 1_764_547_200_123, 0xFFFF_FFFF_FFFF] {
            let id = TimeOrderedUUID.make(milliseconds: milliseconds)
            XCTAssertEqual(VersionSevenUUID.milliseconds(id.uuidString), milliseconds, id.uuidString)
        }
        let id = TimeOrderedUUID.make(milliseconds: 0x0123_4567_89AB).uuidString.lowercased()
        XCTAssertTrue(id.hasPrefix("01234567-89ab-7"), id)
    }

    func testIdsOfLaterMillisecondsSortAfterAndIdsAreRandomWithinOne() {
        let base: Int64 = 1_764_547_200_000
        let ids = (0..<200).map { TimeOrderedUUID.make(milliseconds: base + Int64($0)).uuidString.lowercased() }
        XCTAssertEqual(ids, ids.sorted())
        let sameMillisecond = (0..<1000).map { _ in TimeOrderedUUID.make(milliseconds: base) }
        XCTAssertEqual(Set(sameMillisecond).count, 1000, "74 random bits tell ids of one millisecond apart")
    }

    /// The random bits come from the buffer given: ids of one millisecond
    /// made across its refills differ, and carry its words after the time.
    func testTheRandomBitsComeFromTheBufferGiven() {
        let buffer = RandomWordBuffer(capacity: 3)
        let ids = (0..<500).map { _ in TimeOrderedUUID.make(milliseconds: 42, random: buffer) }
        XCTAssertEqual(Set(ids).count, 500)
        for id in ids {
            XCTAssertEqual(VersionSevenUUID.milliseconds(id.uuidString), 42, id.uuidString)
        }
    }

    func testTheDefaultIsNow() {
        let before = Int64(Date().timeIntervalSince1970 * 1000)
        let id = TimeOrderedUUID.make()
        let after = Int64(Date().timeIntervalSince1970 * 1000)
        guard let milliseconds = VersionSevenUUID.milliseconds(id.uuidString) else { return XCTFail(id.uuidString) }
        XCTAssertTrue((before...after).contains(milliseconds))
    }
}
