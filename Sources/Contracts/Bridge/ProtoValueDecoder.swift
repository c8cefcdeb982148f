/// Turns `ProtoFields` read from protobuf-c back into a `Codable` message:
/// the Swift half of decoding. Absent message fields decode as `nil`.
enum ProtoValueDecoder {
    static func decode<Message: Decodable>(_ type: Message.Type, from fields: ProtoFields) throws -> Message {
        try decodeValue(type, from: .message(fields))
    }

    static func decodeValue<Value: Decodable>(_ type: Value.Type, from value: ProtoValue) throws -> Value {
        if Value.self == [UInt8].self {
            guard case .bytes(let bytes) = value else { throw mismatch(Value.self, value) }
            return bytes as! Value
        }
        return try Value(from: ValueDecoder(value: value))
    }

    static func mismatch(_ type: Any.Type, _ value: ProtoValue) -> ProtobufError {
        ProtobufError(.schemaMismatch, "cannot decode \(type) from \(value.kindName)")
    }
}

extension ProtoValue {
    var kindName: String {
        switch self {
        case .int: "int"
        case .uint: "uint"
        case .double: "double"
        case .bool: "bool"
        case .string: "string"
        case .bytes: "bytes"
        case .message: "message"
        case .list: "list"
        }
    }
}

/// Scalar conversions shared by all containers; integers must fit exactly.
private enum Scalar {
    static func integer<T: FixedWidthInteger>(_ value: ProtoValue, as type: T.Type) throws -> T {
        switch value {
        case .int(let v): if let r = T(exactly: v) { return r }
        case .uint(let v): if let r = T(exactly: v) { return r }
        default: break
        }
        throw ProtoValueDecoder.mismatch(T.self, value)
    }

    static func decode<T: Decodable>(_ type: T.Type, _ value: ProtoValue) throws -> T {
        switch type {
        case is String.Type:
            guard case .string(let s) = value else { throw ProtoValueDecoder.mismatch(T.self, value) }
            return s as! T
        case is Bool.Type:
            guard case .bool(let b) = value else { throw ProtoValueDecoder.mismatch(T.self, value) }
            return b as! T
        case is Double.Type:
            guard case .double(let d) = value else { throw ProtoValueDecoder.mismatch(T.self, value) }
            return d as! T
        case is Float.Type:
            guard case .double(let d) = value else { throw ProtoValueDecoder.mismatch(T.self, value) }
            return Float(d) as! T
        case is Int32.Type: return try integer(value, as: Int32.self) as! T
        case is Int64.Type: return try integer(value, as: Int64.self) as! T
        case is Int.Type: return try integer(value, as: Int.self) as! T
        case is UInt32.Type: return try integer(value, as: UInt32.self) as! T
        case is UInt64.Type: return try integer(value, as: UInt64.self) as! T
        default: return try ProtoValueDecoder.decodeValue(T.self, from: value)
        }
    }
}

private struct ValueDecoder: Decoder {
    let value: ProtoValue
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] = [:]

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .message(let fields) = value else { throw ProtoValueDecoder.mismatch(Key.self, value) }
        return KeyedDecodingContainer(KeyedFields<Key>(fields: fields))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .list(let items) = value else { throw ProtoValueDecoder.mismatch([Any].self, value) }
        return ListFields(items: items)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleField(value: value)
    }
}

private struct KeyedFields<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let fields: ProtoFields
    var codingPath: [any CodingKey] = []
    var allKeys: [Key] { [] }

    private func field(_ key: Key) throws -> ProtoValue {
        guard let value = fields[FieldName.protoName(forSwiftName: key.stringValue)] else {
            throw ProtobufError(.schemaMismatch, "no proto field for \(key.stringValue)")
        }
        return value
    }

    func contains(_ key: Key) -> Bool { fields[FieldName.protoName(forSwiftName: key.stringValue)] != nil }
    func decodeNil(forKey key: Key) throws -> Bool { !contains(key) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try Scalar.decode(type, try field(key)) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try ValueDecoder(value: try field(key)).container(keyedBy: type)
    }
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try ValueDecoder(value: try field(key)).unkeyedContainer()
    }
    func superDecoder() throws -> any Decoder { throw ProtobufError(.schemaMismatch, "superDecoder unsupported") }
    func superDecoder(forKey key: Key) throws -> any Decoder { throw ProtobufError(.schemaMismatch, "superDecoder unsupported") }
}

private struct ListFields: UnkeyedDecodingContainer {
    let items: [ProtoValue]
    var codingPath: [any CodingKey] = []
    var currentIndex = 0
    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    mutating func decodeNil() throws -> Bool { false }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        guard !isAtEnd else { throw ProtobufError(.schemaMismatch, "read past the end of a repeated field") }
        defer { currentIndex += 1 }
        return try Scalar.decode(type, items[currentIndex])
    }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        throw ProtobufError(.schemaMismatch, "nested containers unsupported")
    }
    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw ProtobufError(.schemaMismatch, "nested containers unsupported")
    }
    mutating func superDecoder() throws -> any Decoder { throw ProtobufError(.schemaMismatch, "superDecoder unsupported") }
}

private struct SingleField: SingleValueDecodingContainer {
    let value: ProtoValue
    var codingPath: [any CodingKey] = []
    func decodeNil() -> Bool { false }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try Scalar.decode(type, value) }
}
