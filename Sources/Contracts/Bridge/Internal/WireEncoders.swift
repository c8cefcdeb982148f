// The `Encoder`s a message's synthesized `encode(to:)` talks to. They are
// small structs around the shared `WireWriter` (so passing one as `any
// Encoder` allocates nothing); each call goes to its field by the layout's
// table and is written at once.

/// Encodes one message: its properties are the layout's fields.
struct MessageEncoder: Encoder {
    let writer: WireWriter
    let layout: MessageLayout
    let depth: Int
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(MessageFieldsContainer<Key>(writer: writer, layout: layout, depth: depth))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        RepeatedContainer(
            writer: writer, target: .rejected("\(layout.fullName) is a message, not a list"), depth: depth)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        ScalarContainer(
            writer: writer, target: .rejected("\(layout.fullName) is a message, not a value"), position: .singular)
    }
}

/// Encodes one repeated field's array: each element is written as it comes.
struct RepeatedEncoder: Encoder {
    let writer: WireWriter
    let field: FieldLayout
    let depth: Int
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(
            MessageFieldsContainer<Key>(
                writer: writer, layout: nil, depth: depth, rejection: "repeated field \(field.protoName) needs an array"
            ))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        RepeatedContainer(writer: writer, target: .field(field), depth: depth)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        ScalarContainer(
            writer: writer, target: .rejected("repeated field \(field.protoName) needs an array"), position: .singular)
    }
}

/// Encodes a value that is one scalar in Swift's `Codable` (an enum's raw
/// value, or a standard type reached through a generic call).
struct ScalarEncoder: Encoder {
    let writer: WireWriter
    let field: FieldLayout
    let position: ValuePosition
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(
            MessageFieldsContainer<Key>(
                writer: writer, layout: nil, depth: 0,
                rejection: "field \(field.protoName) (\(field.kind)) is not a message"))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        RepeatedContainer(writer: writer, target: .rejected("field \(field.protoName) is not repeated"), depth: 0)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        ScalarContainer(writer: writer, target: .field(field), position: position)
    }
}

/// A message's properties, each written to its field on arrival. A
/// container with a `rejection` stands for a Swift shape the schema does
/// not have and throws on every write.
struct MessageFieldsContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let writer: WireWriter
    let layout: MessageLayout?
    let depth: Int
    var rejection: String?
    /// The index of the field expected next, and the highest number written.
    private var next = 0
    private var highestNumber: UInt32 = 0
    var codingPath: [any CodingKey] { [] }

    init(writer: WireWriter, layout: MessageLayout?, depth: Int, rejection: String? = nil) {
        self.writer = writer
        self.layout = layout
        self.depth = depth
        self.rejection = rejection
    }

    @inline(__always)
    private mutating func withField(_ key: Key, _ write: (WireWriter, FieldLayout) throws -> Void) throws {
        guard let layout else { throw ProtobufError(.schemaMismatch, rejection ?? "no layout") }
        guard let index = layout.index(of: key.stringValue, hint: next) else {
            throw ProtobufError(.schemaMismatch, "\(layout.fullName) has no field for \(key.stringValue)")
        }
        let field = layout.fields[index]
        if field.number < highestNumber && !writer.recordsFieldOrder { throw FieldOrderRestart() }
        next = index + 1
        highestNumber = max(highestNumber, field.number)
        let start = writer.bytes.count
        try write(writer, field)
        if writer.recordsFieldOrder { writer.recordField(field.number, start: start) }
    }

    mutating func encodeNil(forKey key: Key) throws {}
    mutating func encode(_ value: Bool, forKey key: Key) throws {
        try withField(key) { try $0.writeBool(value, field: $1, position: .singular) }
    }
    mutating func encode(_ value: String, forKey key: Key) throws {
        try withField(key) { try $0.writeString(value, field: $1, position: .singular) }
    }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        try withField(key) { try $0.writeFloatingPoint(value, field: $1, position: .singular) }
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        try withField(key) { try $0.writeFloatingPoint(Double(value), field: $1, position: .singular) }
    }
    mutating func encode(_ value: Int, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try integer(value, key) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let depth = depth
        try withField(key) { try $0.writeValue(value, field: $1, depth: depth) }
    }

    @inline(__always)
    private mutating func integer<T: FixedWidthInteger>(_ value: T, _ key: Key) throws {
        try withField(key) { try $0.writeInteger(value, field: $1, position: .singular) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        KeyedEncodingContainer(
            MessageFieldsContainer<NestedKey>(
                writer: writer, layout: nil, depth: depth, rejection: "protobuf messages do not use nested containers"))
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        RepeatedContainer(
            writer: writer, target: .rejected("protobuf messages do not use nested containers"), depth: depth)
    }
    mutating func superEncoder() -> any Encoder { RejectingEncoder(writer: writer) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { RejectingEncoder(writer: writer) }
}

/// The elements of one repeated field.
struct RepeatedContainer: UnkeyedEncodingContainer {
    let writer: WireWriter
    let target: FieldTarget
    // 32-bit so the container fits an existential's inline buffer.
    private let depth32: Int32
    private var count32: Int32 = 0
    var count: Int { Int(count32) }
    var codingPath: [any CodingKey] { [] }

    init(writer: WireWriter, target: FieldTarget, depth: Int) {
        self.writer = writer
        self.target = target
        depth32 = Int32(clamping: depth)
    }

    private var depth: Int { Int(depth32) }
    private var position: ValuePosition {
        if case .field(let field) = target, field.isPacked { return .packed }
        return .element
    }

    @inline(__always)
    private mutating func withElement(_ write: (WireWriter, FieldLayout) throws -> Void) throws {
        try write(writer, try target.field())
        count32 += 1
    }

    mutating func encodeNil() throws { throw ProtobufError(.schemaMismatch, "repeated fields cannot hold nil") }
    mutating func encode(_ value: Bool) throws {
        let position = position
        try withElement { try $0.writeBool(value, field: $1, position: position) }
    }
    mutating func encode(_ value: String) throws {
        let position = position
        try withElement { try $0.writeString(value, field: $1, position: position) }
    }
    mutating func encode(_ value: Double) throws {
        let position = position
        try withElement { try $0.writeFloatingPoint(value, field: $1, position: position) }
    }
    mutating func encode(_ value: Float) throws {
        let position = position
        try withElement { try $0.writeFloatingPoint(Double(value), field: $1, position: position) }
    }
    mutating func encode(_ value: Int) throws { try integer(value) }
    mutating func encode(_ value: Int8) throws { try integer(value) }
    mutating func encode(_ value: Int16) throws { try integer(value) }
    mutating func encode(_ value: Int32) throws { try integer(value) }
    mutating func encode(_ value: Int64) throws { try integer(value) }
    mutating func encode(_ value: UInt) throws { try integer(value) }
    mutating func encode(_ value: UInt8) throws { try integer(value) }
    mutating func encode(_ value: UInt16) throws { try integer(value) }
    mutating func encode(_ value: UInt32) throws { try integer(value) }
    mutating func encode(_ value: UInt64) throws { try integer(value) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        let (position, depth) = (position, depth)
        try withElement { try $0.writeSingle(value, field: $1, position: position, depth: depth) }
    }

    private mutating func integer<T: FixedWidthInteger>(_ value: T) throws {
        let position = position
        try withElement { try $0.writeInteger(value, field: $1, position: position) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<
        NestedKey
    > {
        KeyedEncodingContainer(
            MessageFieldsContainer<NestedKey>(
                writer: writer, layout: nil, depth: depth, rejection: "protobuf lists do not use nested containers"))
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        RepeatedContainer(writer: writer, target: .rejected("protobuf lists do not nest"), depth: depth)
    }
    mutating func superEncoder() -> any Encoder { RejectingEncoder(writer: writer) }
}

/// One scalar value of a field.
struct ScalarContainer: SingleValueEncodingContainer {
    let writer: WireWriter
    let target: FieldTarget
    let position: ValuePosition
    var codingPath: [any CodingKey] { [] }

    @inline(__always)
    private func withField(_ write: (WireWriter, FieldLayout) throws -> Void) throws {
        try write(writer, try target.field())
    }

    mutating func encodeNil() throws { throw ProtobufError(.schemaMismatch, "protobuf values cannot be nil") }
    mutating func encode(_ value: Bool) throws {
        try withField { try $0.writeBool(value, field: $1, position: position) }
    }
    mutating func encode(_ value: String) throws {
        try withField { try $0.writeString(value, field: $1, position: position) }
    }
    mutating func encode(_ value: Double) throws {
        try withField { try $0.writeFloatingPoint(value, field: $1, position: position) }
    }
    mutating func encode(_ value: Float) throws {
        try withField { try $0.writeFloatingPoint(Double(value), field: $1, position: position) }
    }
    mutating func encode(_ value: Int) throws { try integer(value) }
    mutating func encode(_ value: Int8) throws { try integer(value) }
    mutating func encode(_ value: Int16) throws { try integer(value) }
    mutating func encode(_ value: Int32) throws { try integer(value) }
    mutating func encode(_ value: Int64) throws { try integer(value) }
    mutating func encode(_ value: UInt) throws { try integer(value) }
    mutating func encode(_ value: UInt8) throws { try integer(value) }
    mutating func encode(_ value: UInt16) throws { try integer(value) }
    mutating func encode(_ value: UInt32) throws { try integer(value) }
    mutating func encode(_ value: UInt64) throws { try integer(value) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        // A wrapper around a scalar (e.g. a struct encoding its raw value).
        let position = position
        try withField { writer, field in
            guard field.kind != .message else { throw WireWriter.mismatch(field, T.self) }
            try value.encode(to: ScalarEncoder(writer: writer, field: field, position: position))
        }
    }

    private func integer<T: FixedWidthInteger>(_ value: T) throws {
        try withField { try $0.writeInteger(value, field: $1, position: position) }
    }
}

/// Stands for `superEncoder()`, which protobuf messages do not use: every
/// container it gives out throws.
struct RejectingEncoder: Encoder {
    let writer: WireWriter
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    private static let reason = "protobuf messages do not use superEncoder"

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(
            MessageFieldsContainer<Key>(writer: writer, layout: nil, depth: 0, rejection: Self.reason))
    }
    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        RepeatedContainer(writer: writer, target: .rejected(Self.reason), depth: 0)
    }
    func singleValueContainer() -> any SingleValueEncodingContainer {
        ScalarContainer(writer: writer, target: .rejected(Self.reason), position: .singular)
    }
}

/// What a scalar or list container writes to: a field, or nothing because
/// the Swift shape does not match the schema (every write then throws).
/// One word, so the containers holding it stay small.
enum FieldTarget {
    case field(FieldLayout)
    case rejected(Rejection)

    static func rejected(_ reason: String) -> FieldTarget { .rejected(Rejection(reason)) }

    @inline(__always)
    func field() throws -> FieldLayout {
        switch self {
        case .field(let field): return field
        case .rejected(let rejection): throw ProtobufError(.schemaMismatch, rejection.reason)
        }
    }
}

/// Why a container refuses every write.
final class Rejection {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}
