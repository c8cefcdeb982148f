import RPCCore

/// A protobuf message whose Swift shape is a plain `Codable` struct.
///
/// The wire format is produced and parsed by protobuf-c, driven by the
/// message's generated C descriptor (found by `protobufName`). Swift property
/// names map to proto field names by camelCase -> snake_case, so adding a
/// field is one line in the `.proto` file and one property here; nothing else
/// grows with the number of fields. `ContractsTests` checks every Swift type
/// against its descriptor, field by field.
public protocol ProtobufMessage: Codable, RPCMessage {
    /// The fully qualified protobuf name, e.g. `points.v1.GrantRequest`.
    static var protobufName: String { get }
    /// A value with every field at its protobuf default.
    init()
}

extension ProtobufMessage {
    /// Parses protobuf wire bytes.
    public init(serializedBytes bytes: [UInt8]) throws {
        let descriptor = try MessageDescriptor.named(Self.protobufName)
        let tree = try CMessageCodec.decode(bytes, descriptor: descriptor)
        self = try ProtoValueDecoder.decode(Self.self, from: tree)
    }

    /// Serialises to protobuf wire bytes.
    public func serializedBytes() throws -> [UInt8] {
        let descriptor = try MessageDescriptor.named(Self.protobufName)
        let fields = try ProtoValueEncoder.encode(self)
        return try CMessageCodec.encode(fields, descriptor: descriptor)
    }
}
