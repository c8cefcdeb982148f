/// Turns a `Codable` message into `ProtoFields`: the Swift half of encoding.
/// Keys become proto field names; `[UInt8]` becomes `bytes`; nested
/// messages, lists and `ProtobufEnum`s are handled structurally.
enum ProtoValueEncoder {
    static func encode<Message: Encodable>(_ message: Message) throws -> ProtoFields {
        let value = try encodeValue(message, depth: 0)
        guard case .message(let fields) = value else {
            throw ProtobufError(.schemaMismatch, "\(Message.self) does not encode as a keyed message")
        }
        return fields
    }

    static func encodeValue<Value: Encodable>(_ value: Value, depth: Int) throws -> ProtoValue {
        // An exact type check: a dynamic cast would also accept an empty [String].
        if Value.self == [UInt8].self, let bytes = value as? [UInt8] { return .bytes(bytes) }
        guard depth < ProtobufLimits.nestingDepthMax else {
            throw ProtobufError(.tooDeep, "message nests deeper than \(ProtobufLimits.nestingDepthMax)")
        }
        let encoder = ValueEncoder(depth: depth)
        try value.encode(to: encoder)
        guard let result = encoder.storage.value else {
            throw ProtobufError(.schemaMismatch, "\(Value.self) encoded nothing")
        }
        return result
    }
}

/// Where a nested container writes its result back to.
private final class ValueStorage {
    var value: ProtoValue?
}

private final class ValueEncoder: Encoder {
    let depth: Int
    let storage = ValueStorage()
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] = [:]

    init(depth: Int) { self.depth = depth }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if storage.value == nil { storage.value = .message([:]) }
        return KeyedEncodingContainer(KeyedFieldsContainer<Key>(storage: storage, depth: depth))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if storage.value == nil { storage.value = .list([]) }
        return ListContainer(storage: storage, depth: depth)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleContainer(storage: storage, depth: depth)
    }
}

/// Scalar conversion shared by all containers.
private func scalar<Value: Encodable>(_ value: Value, depth: Int) throws -> ProtoValue {
    switch value {
    case let v as String: return .string(v)
    case let v as Bool: return .bool(v)
    case let v as Int32: return .int(Int64(v))
    case let v as Int64: return .int(v)
    case let v as Int: return .int(Int64(v))
    case let v as UInt32: return .uint(UInt64(v))
    case let v as UInt64: return .uint(v)
    case let v as Double: return .double(v)
    case let v as Float: return .double(Double(v))
    default: return try ProtoValueEncoder.encodeValue(value, depth: depth + 1)
    }
}

private struct KeyedFieldsContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let storage: ValueStorage
    let depth: Int
    var codingPath: [any CodingKey] = []

    private func set(_ value: ProtoValue, _ key: Key) {
        guard case .message(var fields) = storage.value else { return }
        fields[FieldName.protoName(forSwiftName: key.stringValue)] = value
        storage.value = .message(fields)
    }

    mutating func encodeNil(forKey key: Key) throws {}
    mutating func encode(_ value: Bool, forKey key: Key) throws { set(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { set(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { set(.double(value), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { set(.double(Double(value)), key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { set(.int(value), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { set(.uint(UInt64(value)), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { set(.uint(value), key) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { set(try scalar(value, depth: depth), key) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        preconditionFailure("protobuf messages do not use nested containers")
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        preconditionFailure("protobuf messages do not use nested containers")
    }
    mutating func superEncoder() -> any Encoder { preconditionFailure("protobuf messages do not use superEncoder") }
    mutating func superEncoder(forKey key: Key) -> any Encoder { preconditionFailure("protobuf messages do not use superEncoder") }
}

private struct ListContainer: UnkeyedEncodingContainer {
    let storage: ValueStorage
    let depth: Int
    var codingPath: [any CodingKey] = []
    var count: Int {
        if case .list(let items) = storage.value { return items.count }
        return 0
    }

    private func append(_ value: ProtoValue) {
        guard case .list(var items) = storage.value else { return }
        items.append(value)
        storage.value = .list(items)
    }

    mutating func encodeNil() throws { throw ProtobufError(.schemaMismatch, "repeated fields cannot hold nil") }
    mutating func encode(_ value: Bool) throws { append(.bool(value)) }
    mutating func encode(_ value: String) throws { append(.string(value)) }
    mutating func encode(_ value: Double) throws { append(.double(value)) }
    mutating func encode(_ value: Int32) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: Int64) throws { append(.int(value)) }
    mutating func encode<T: Encodable>(_ value: T) throws { append(try scalar(value, depth: depth)) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        preconditionFailure("protobuf messages do not use nested containers")
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        preconditionFailure("protobuf messages do not use nested containers")
    }
    mutating func superEncoder() -> any Encoder { preconditionFailure("protobuf messages do not use superEncoder") }
}

private struct SingleContainer: SingleValueEncodingContainer {
    let storage: ValueStorage
    let depth: Int
    var codingPath: [any CodingKey] = []

    mutating func encodeNil() throws { throw ProtobufError(.schemaMismatch, "protobuf values cannot be nil") }
    mutating func encode(_ value: Bool) throws { storage.value = .bool(value) }
    mutating func encode(_ value: String) throws { storage.value = .string(value) }
    mutating func encode(_ value: Double) throws { storage.value = .double(value) }
    mutating func encode(_ value: Int32) throws { storage.value = .int(Int64(value)) }
    mutating func encode(_ value: Int64) throws { storage.value = .int(value) }
    mutating func encode<T: Encodable>(_ value: T) throws { storage.value = try scalar(value, depth: depth) }
}
