import Foundation
import UUIDText
import XCTest

/// The UUID text codec against Foundation's, and its refusals.
final class UUIDTextTests: XCTestCase {
    func testAgreesWithFoundationBothWays() {
        var samples = (0..<2_000).map { _ in UUID() }
        samples.append(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
        samples.append(UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)))
        for uuid in samples {
            let text = UUIDText.lowercased(uuid)
            XCTAssertEqual(text, uuid.uuidString.lowercased())
            XCTAssertEqual(UUIDText.parse(text), uuid)
            XCTAssertEqual(UUIDText.parse(uuid.uuidString), uuid, "upper case too")
            XCTAssertEqual(UUIDText.parse(Substring("{" + text + "}").dropFirst().dropLast()), uuid, "a substring")
        }
    }

    func testMixedCaseIsTheSameUUID() {
        XCTAssertEqual(
            UUIDText.parse("7C4C7A82-2f6f-4E70-b57a-8B0A7F2E9B72"),
            UUID(uuidString: "7c4c7a82-2f6f-4e70-b57a-8b0a7f2e9b72"))
    }

    func testRefusesEveryOtherSpelling() {
        let good = "7c4c7a82-2f6f-4e70-b57a-8b0a7f2e9b72"
        for bad in [
            "", "7c4c7a822f6f4e70b57a8b0a7f2e9b72", "{\(good)}", "urn:uuid:\(good)", " \(good)", "\(good) ", "\(good)0",
            String(good.dropLast()), "7c4c7a82-2f6f-4e70-b57a-8b0a7f2e9b7g", "7c4c7a82+2f6f-4e70-b57a-8b0a7f2e9b72",
            "7c4c7a822-f6f-4e70-b57a-8b0a7f2e9b72", "7c4c7a82-2f6f-4e70-b57a-8b0a7f2e9b7\u{0}",
            "7c4c7a82-2f6f-4e70-b57a-8b0a7f2e9bé",
            String(repeating: "-", count: 36), String(repeating: "0", count: 36),
        ] {
            XCTAssertNil(UUIDText.parse(bad), bad)
        }
    }

    func testABridgedStringParses() {
        let bridged = NSString(string: "7c4c7a82-2f6f-4e70-b57a-8b0a7f2e9b72") as String
        XCTAssertEqual(UUIDText.parse(bridged), UUID(uuidString: "7c4c7a82-2f6f-4e70-b57a-8b0a7f2e9b72"))
    }

    func testWritesTheLowerCaseTextAtAnOffset() {
        let id = UUID()
        var buffer = [UInt8](repeating: UInt8(ascii: "#"), count: UUIDText.byteCount + 4)
        buffer.withUnsafeMutableBufferPointer { UUIDText.writeLowercased(id, into: $0, at: 2) }
        XCTAssertEqual(String(decoding: buffer, as: UTF8.self), "##" + id.uuidString.lowercased() + "##")
    }
}
