import RPCCore

/// A protobuf message whose Swift shape is a plain `Codable` struct.
///
/// The wire format follows the message's generated protobuf-c descriptor
/// (found by `protobufName`, once per type): encoding writes the wire bytes
/// straight from the struct, decoding lets protobuf-c parse them and reads
/// the struct straight out of the C message. Swift property names map to
/// proto field names by camelCase -> snake_case, so adding a field is one
/// line in the `.proto` file and one property here; nothing else grows with
/// the number of fields. `ContractsTests` checks every Swift type against its
/// descriptor, field by field, and the encoder against protobuf-c's own.
public protocol ProtobufMessage: Codable, RPCMessage {
    /// The fully qualified protobuf name, e.g. `points.v1.GrantRequest`.
    static var protobufName: String { get }
    /// A value with every field at its protobuf default.
    init()
}

extension ProtobufMessage {
    /// Parses protobuf wire bytes.
    public init(serializedBytes bytes: [UInt8]) throws {
        self = try CMessageCodec.decode(Self.self, from: bytes)
    }

    /// Serialises to protobuf wire bytes.
    public func serializedBytes() throws -> [UInt8] {
        try CMessageCodec.encode(self)
    }
}
