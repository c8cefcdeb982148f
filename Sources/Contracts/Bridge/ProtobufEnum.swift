/// A protobuf enum as an open set of values: unknown numbers received from a
/// newer peer are kept, never rejected (proto3 semantics).
public protocol ProtobufEnum: RawRepresentable, Codable, Hashable, Sendable where RawValue == Int32 {
    init(rawValue: Int32)
}

extension ProtobufEnum {
    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(Int32.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
