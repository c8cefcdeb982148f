@testable import Contracts
import XCTest

/// Round trips through protobuf-c and byte-exact checks against the protobuf
/// wire format as any other implementation writes it.
final class WireFormatTests: XCTestCase {
    func testKnownEncodingOfAStringField() throws {
        var request = GetBalanceRequest()
        request.userId = "abc"
        XCTAssertEqual(try request.serializedBytes(), [0x0A, 0x03, 0x61, 0x62, 0x63])
        XCTAssertEqual(try GetBalanceRequest(serializedBytes: [0x0A, 0x03, 0x61, 0x62, 0x63]).userId, "abc")
    }

    func testDefaultsEncodeToNothingAndDecodeFromNothing() throws {
        XCTAssertEqual(try GrantResponse().serializedBytes(), [])
        XCTAssertEqual(try GrantResponse(serializedBytes: []), GrantResponse())
    }

    func testNestedRepeatedAndOptionalMessagesRoundTrip() throws {
        var request = GrantRequest()
        request.eventId = "payment.apple_iap:2000000847061981"
        request.userId = "7c4c7a82-2f6f-4e70-b57a-8b0a7f2e9b72"
        request.productCode = "starter_pack"
        var source = PurchaseSource()
        source.transactionId = "2000000847061981"
        source.environment = "Sandbox"
        request.source = source
        let decoded = try GrantRequest(serializedBytes: try request.serializedBytes())
        XCTAssertEqual(decoded, request)

        var list = ListPackagesResponse()
        for index in 0..<4 {
            var package = Package()
            package.productCode = "p\(index)"
            package.credits = Int64(index * 100)
            package.kind = index == 0 ? .starter : .regular
            list.packages.append(package)
        }
        list.starterPackPurchased = true
        XCTAssertEqual(try ListPackagesResponse(serializedBytes: try list.serializedBytes()), list)
    }

    func testAbsentOptionalMessageDecodesAsNil() throws {
        let decoded = try GetTransactionResponse(serializedBytes: [])
        XCTAssertNil(decoded.transaction)
    }

    func testBytesRepeatedStringsAndExtremeIntegersRoundTrip() throws {
        var request = EchoRequest()
        request.payload = Array(0...255).map(UInt8.init)
        request.echoMetadataKeys = ["x-a", "", "x-ü"]
        request.delayMs = Int64.min
        request.failWithCode = Int32.max
        request.message = "多字节 ✓"
        XCTAssertEqual(try EchoRequest(serializedBytes: try request.serializedBytes()), request)
    }

    func testUnknownEnumValuesAreKept() throws {
        // field 8 (status), varint 42: a value this build does not know.
        let decoded = try Transaction(serializedBytes: [0x40, 42])
        XCTAssertEqual(decoded.status.rawValue, 42)
        XCTAssertEqual(try decoded.serializedBytes(), [0x40, 42])
    }

    func testUnknownFieldsAreSkipped() throws {
        // field 99 (varint) then field 1 "x".
        let decoded = try GetBalanceRequest(serializedBytes: [0x98, 0x06, 0x01, 0x0A, 0x01, 0x78])
        XCTAssertEqual(decoded.userId, "x")
    }

    func testMalformedWireIsATypedError() {
        for bytes: [UInt8] in [
            [0x0A, 0x05, 0x61], [0x0A], [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], [0x0B],
        ] {
            XCTAssertThrowsError(try GetBalanceRequest(serializedBytes: bytes)) { error in
                XCTAssertEqual((error as? ProtobufError)?.kind, .malformedWire, "\(bytes)")
            }
        }
    }

    /// Lists of strings take a direct path both ways: the same wire bytes
    /// (one tag and length per element, in order, empty ones included) and
    /// the same typed errors as any other string field.
    func testRepeatedStringsRoundTripElementByElement() throws {
        for ids in [[], [""], ["a"], ["a", "", "\u{00e9}t\u{00e9}"], (0..<64).map { "user-\($0)" }] {
            var request = GetBalancesRequest()
            request.userIds = ids
            let bytes = try request.serializedBytes()
            var expected: [UInt8] = []
            for id in ids { expected += [0x0A, UInt8(id.utf8.count)] + Array(id.utf8) }
            XCTAssertEqual(bytes, expected, "\(ids)")
            XCTAssertEqual(try GetBalancesRequest(serializedBytes: bytes).userIds, ids)
        }
        XCTAssertThrowsError(try GetBalancesRequest(serializedBytes: [0x0A, 0x01, 0x61, 0x0A, 0x02, 0xC3, 0x28])) {
            error in
            XCTAssertEqual((error as? ProtobufError)?.kind, .invalidUTF8)
        }
        var request = GetBalancesRequest()
        request.userIds = ["a", "b\u{0}c"]
        XCTAssertThrowsError(try request.serializedBytes()) { error in
            XCTAssertEqual((error as? ProtobufError)?.kind, .embeddedNUL)
        }
    }

    func testInvalidUTF8InAStringFieldIsATypedError() {
        XCTAssertThrowsError(try GetBalanceRequest(serializedBytes: [0x0A, 0x02, 0xC3, 0x28])) { error in
            XCTAssertEqual((error as? ProtobufError)?.kind, .invalidUTF8)
        }
    }

    func testEmbeddedNULIsRefusedOnEncode() {
        var request = GetBalanceRequest()
        request.userId = "a\u{0}b"
        XCTAssertThrowsError(try request.serializedBytes()) { error in
            XCTAssertEqual((error as? ProtobufError)?.kind, .embeddedNUL)
        }
    }

    /// Found by Fuzz/ProtobufFuzz (string fidelity): protobuf-c keeps the
    /// NUL, but its strings are C strings, so "a\0b" decoded as "a".
    func testEmbeddedNULIsRefusedOnDecode() {
        // GetBalanceRequest.user_id = "a\0b".
        XCTAssertThrowsError(try GetBalanceRequest(serializedBytes: [0x0A, 0x03, 0x61, 0x00, 0x62])) { error in
            XCTAssertEqual((error as? ProtobufError)?.kind, .embeddedNUL)
        }
        // In a nested message: GrantRequest.source (6) .platform (2) = "\0".
        XCTAssertThrowsError(try GrantRequest(serializedBytes: [0x32, 0x03, 0x12, 0x01, 0x00])) { error in
            XCTAssertEqual((error as? ProtobufError)?.kind, .embeddedNUL)
        }
        // Zero bytes elsewhere (an empty string, a zero varint, bytes fields) are fine.
        XCTAssertEqual(try GetBalanceRequest(serializedBytes: [0x0A, 0x00, 0x0A, 0x01, 0x78]).userId, "x")
        XCTAssertEqual(try EchoRequest(serializedBytes: [0x12, 0x02, 0x00, 0x00, 0x18, 0x00]).payload, [0, 0])
    }

    func testWrongWireTypeForAFieldIsRejected() {
        // field 2 (balance, int64) sent as a length-delimited string.
        XCTAssertThrowsError(try GetBalanceResponse(serializedBytes: [0x12, 0x01, 0x61]))
    }

    /// Every field of every message set (nested messages, repeated fields,
    /// negative integers, long strings): the Swift encoder's bytes are the
    /// ones protobuf-c packs, and they decode back to the same value.
    func testEveryMessageEncodesExactlyAsProtobufCPacksIt() throws {
        for type in AllMessages.types {
            let descriptor = try MessageDescriptor.named(type.protobufName)
            let wire = SampleWire.message(descriptor, depth: 0)
            let decoded = try type.init(serializedBytes: wire)
            let encoded = try decoded.serializedBytes()
            XCTAssertEqual(encoded.isEmpty, descriptor.fields.isEmpty, type.protobufName)
            XCTAssertEqual(encoded, CMessageCodec.protobufCRepack(wire, descriptor: descriptor), type.protobufName)
            XCTAssertEqual(encoded, CMessageCodec.protobufCRepack(encoded, descriptor: descriptor), type.protobufName)
            XCTAssertEqual(try type.init(serializedBytes: encoded).serializedBytes(), encoded, type.protobufName)
        }
    }

    /// Properties declared out of field-number order still encode in
    /// field-number order, as protobuf-c packs them.
    func testPropertiesOutOfFieldOrderEncodeInFieldOrder() throws {
        struct ValueFirstEntry: ProtobufMessage, Equatable {
            static let protobufName = "testing.v1.MetadataEntry"
            var value = ""
            var key = ""
        }
        let entry = ValueFirstEntry(value: "v", key: "k")
        XCTAssertEqual(try entry.serializedBytes(), try MetadataEntry(key: "k", value: "v").serializedBytes())
        XCTAssertEqual(try ValueFirstEntry(serializedBytes: try entry.serializedBytes()), entry)

        struct MetadataFirstResponse: ProtobufMessage, Equatable {
            static let protobufName = "testing.v1.EchoResponse"
            var metadata: [MetadataEntry] = []
            var deadlineRemainingMs: Int64 = 0
            var payload: [UInt8] = []
            var message = ""
        }
        var response = EchoResponse()
        response.message = "m"
        response.payload = [1, 2]
        response.deadlineRemainingMs = 300
        response.metadata = [MetadataEntry(key: "a", value: "b"), MetadataEntry(key: "c", value: "")]
        let reordered = MetadataFirstResponse(
            metadata: response.metadata, deadlineRemainingMs: 300, payload: [1, 2], message: "m")
        XCTAssertEqual(try reordered.serializedBytes(), try response.serializedBytes())
    }

    func testLongNestedMessagesAndStringsUseMultiByteLengths() throws {
        var request = GrantRequest()
        request.eventId = String(repeating: "e", count: 300)
        var source = PurchaseSource()
        source.transactionId = String(repeating: "t", count: 200)
        request.source = source
        let bytes = try request.serializedBytes()
        let descriptor = try MessageDescriptor.named(GrantRequest.protobufName)
        XCTAssertEqual(bytes, CMessageCodec.protobufCRepack(bytes, descriptor: descriptor))
        XCTAssertEqual(try GrantRequest(serializedBytes: bytes), request)
    }
}

/// Wire bytes with every field of a message set to a non-default value,
/// written by hand from the descriptor (independently of the codec).
private enum SampleWire {
    static func message(_ descriptor: MessageDescriptor, depth: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        for field in descriptor.fields {
            let occurrences = field.isRepeated ? 2 : 1
            for occurrence in 0..<occurrences {
                switch field.valueKind {
                case "int":
                    // Negative: ten bytes for int32, int64 and enums alike.
                    key(field.number, 0, &bytes)
                    varint(UInt64(bitPattern: Int64(-5 - Int64(field.number))), &bytes)
                case "uint":
                    key(field.number, 0, &bytes)
                    varint(UInt64(field.number) * 1000, &bytes)
                case "bool":
                    key(field.number, 0, &bytes)
                    bytes.append(1)
                case "string", "bytes":
                    let text = Array(
                        "\(field.name) #\(occurrence) ✓ \(String(repeating: "x", count: Int(field.number) * 7))".utf8)
                    key(field.number, 2, &bytes)
                    varint(UInt64(text.count), &bytes)
                    bytes += text
                case "message":
                    guard depth < 3, let name = field.messageName, let nested = try? MessageDescriptor.named(name)
                    else { continue }
                    let inner = message(nested, depth: depth + 1)
                    key(field.number, 2, &bytes)
                    varint(UInt64(inner.count), &bytes)
                    bytes += inner
                default:
                    continue  // doubles and floats: none in Protos/
                }
            }
        }
        return bytes
    }

    private static func key(_ number: UInt32, _ wireType: UInt64, _ bytes: inout [UInt8]) {
        varint(UInt64(number) << 3 | wireType, &bytes)
    }

    private static func varint(_ value: UInt64, _ bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }
}
