@testable import Contracts
import XCTest

/// Every Swift message type must match its generated protobuf-c descriptor
/// field for field, so a field added to a .proto but not to Swift (or with
/// the wrong type) fails here.
final class SchemaTests: XCTestCase {
    func testEveryDescriptorHasASwiftTypeAndViceVersa() {
        let descriptorNames = Set(MessageDescriptor.all.map(\.fullName))
        let swiftNames = Set(AllMessages.types.map { $0.protobufName })
        XCTAssertEqual(descriptorNames.subtracting(swiftNames), [], "descriptors without a Swift type")
        XCTAssertEqual(swiftNames.subtracting(descriptorNames), [], "Swift types without a descriptor")
        XCTAssertEqual(swiftNames.count, AllMessages.types.count, "a protobuf name is used twice")
    }

    func testEverySwiftPropertyMatchesADescriptorFieldOfTheSameKind() throws {
        for type in AllMessages.types {
            let descriptor = try MessageDescriptor.named(type.protobufName)
            let fieldsByName = Dictionary(uniqueKeysWithValues: descriptor.fields.map { ($0.name, $0) })
            let instance = type.init()
            let properties = Mirror(reflecting: instance).children.compactMap(\.label)
            let protoNames = properties.map(FieldName.protoName(forSwiftName:))
            XCTAssertEqual(
                Set(protoNames), Set(fieldsByName.keys),
                "\(type.protobufName): Swift properties and proto fields differ")

            // The codec checks each property's Swift type against its
            // field's kind (and repeated against singular) in both
            // directions; a default value visits every non-optional property.
            XCTAssertNoThrow(
                try instance.serializedBytes(), "\(type.protobufName) has a property of the wrong Swift type")
            XCTAssertNoThrow(
                try type.init(serializedBytes: []), "\(type.protobufName) has a property of the wrong Swift type")
            for child in Mirror(reflecting: instance).children {
                guard let label = child.label, let field = fieldsByName[FieldName.protoName(forSwiftName: label)] else {
                    continue
                }
                let isArray = Mirror(reflecting: child.value).displayStyle == .collection
                XCTAssertEqual(
                    isArray, field.isRepeated || field.valueKind == "bytes",
                    "\(type.protobufName).\(label): arrays are for repeated fields and bytes")
            }
            // Optional message fields encode nothing when nil: check their Swift type names.
            for child in Mirror(reflecting: instance).children {
                guard let label = child.label, let field = fieldsByName[FieldName.protoName(forSwiftName: label)],
                    field.isMessage, !field.isRepeated, let messageName = field.messageName
                else { continue }
                let swiftTypeName = String(describing: Swift.type(of: child.value))
                let expected = try XCTUnwrap(AllMessages.types.first { $0.protobufName == messageName })
                XCTAssertEqual(swiftTypeName, "Optional<\(expected)>", "\(type.protobufName).\(label)")
            }
        }
    }

    func testFieldNamesConvertFromCamelCase() {
        XCTAssertEqual(FieldName.protoName(forSwiftName: "appStoreProductId"), "app_store_product_id")
        XCTAssertEqual(FieldName.protoName(forSwiftName: "service"), "service")
        XCTAssertEqual(FieldName.protoName(forSwiftName: "createdAtUnixMs"), "created_at_unix_ms")
        XCTAssertEqual(FieldName.swiftName(forProtoName: "app_store_product_id"), "appStoreProductId")
        XCTAssertEqual(FieldName.swiftName(forProtoName: "service"), "service")
        for descriptor in MessageDescriptor.all {
            for field in descriptor.fields {
                XCTAssertEqual(
                    FieldName.protoName(forSwiftName: FieldName.swiftName(forProtoName: field.name)), field.name,
                    "\(descriptor.fullName).\(field.name) has no camelCase Swift name that maps back")
            }
        }
    }

    /// A property whose Swift type does not fit its field's kind is a
    /// schema mismatch in both directions, not silently converted.
    func testASwiftTypeOfTheWrongKindIsASchemaMismatch() {
        struct UserIdAsNumber: ProtobufMessage, Equatable {
            static let protobufName = "points.v1.GetBalanceRequest"
            var userId: Int64 = 0
        }
        struct UserIdAsList: ProtobufMessage, Equatable {
            static let protobufName = "points.v1.GetBalanceRequest"
            var userId: [String] = ["a"]
        }
        struct KeysAsOneString: ProtobufMessage, Equatable {
            static let protobufName = "testing.v1.EchoRequest"
            var echoMetadataKeys = "a"
        }
        XCTAssertThrowsError(try UserIdAsNumber(userId: 1).serializedBytes()) { error in
            XCTAssertEqual((error as? ProtobufError)?.kind, .schemaMismatch)
        }
        XCTAssertThrowsError(try UserIdAsNumber(serializedBytes: [0x0A, 0x01, 0x78])) { error in
            XCTAssertEqual((error as? ProtobufError)?.kind, .schemaMismatch)
        }
        XCTAssertThrowsError(try UserIdAsList().serializedBytes()) { error in
            XCTAssertEqual((error as? ProtobufError)?.kind, .schemaMismatch)
        }
        XCTAssertThrowsError(try KeysAsOneString().serializedBytes()) { error in
            XCTAssertEqual((error as? ProtobufError)?.kind, .schemaMismatch)
        }
    }
}

final class ServiceSchemaTests: XCTestCase {
    /// Every unary method of Protos/ has a Swift `UnaryMethod` with the same
    /// path and message types, and vice versa (Health/Watch streams and is
    /// deliberately not served).
    func testSwiftMethodsMatchTheGeneratedServiceDescriptors() {
        let generated = Set(ServiceDescriptors.allMethodSignatures.filter { $0.path != "/grpc.health.v1.Health/Watch" })
        let swift = Set(AllMethods.signatures)
        XCTAssertEqual(generated.subtracting(swift), [], "proto methods without a Swift UnaryMethod")
        XCTAssertEqual(swift.subtracting(generated), [], "Swift methods not in Protos/")
        XCTAssertEqual(swift.count, AllMethods.signatures.count, "a method is listed twice")
    }
}
