import CProtobufC
import Glibc

// The `Decoder`s a message's synthesized `init(from:)` reads from: each
// property is read straight out of the message protobuf-c unpacked, at the
// offsets of the layout's table. No intermediate tree, no names built.
// Every pointer here borrows from that unpacked message, which
// `CMessageCodec.decode` frees after the Swift value is built.

/// Reads one unpacked C message.
struct MessageDecoder: Decoder {
    let message: UnsafeRawPointer
    let layout: MessageLayout
    let depth: Int
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(MessageFieldsReader<Key>(message: message, layout: layout, depth: depth))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw ProtobufError(.schemaMismatch, "\(layout.fullName) is a message, not a list")
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw ProtobufError(.schemaMismatch, "\(layout.fullName) is a message, not a value")
    }
}

/// A message's properties. A class because the expected-next-field hint
/// changes while the (non-mutating) decoding methods run.
final class MessageFieldsReader<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let message: UnsafeRawPointer
    let layout: MessageLayout
    let depth: Int
    private var next = 0
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] {
        layout.fields.filter { $0.isPresent(in: message) }.compactMap { Key(stringValue: $0.swiftName) }
    }

    init(message: UnsafeRawPointer, layout: MessageLayout, depth: Int) {
        self.message = message
        self.layout = layout
        self.depth = depth
    }

    @inline(__always)
    private func field(_ key: Key) throws -> FieldLayout {
        guard let index = layout.index(of: key.stringValue, hint: next) else {
            throw ProtobufError(.schemaMismatch, "\(layout.fullName) has no field for \(key.stringValue)")
        }
        next = index + 1
        return layout.fields[index]
    }

    @inline(__always)
    private func singular(_ key: Key) throws -> (FieldLayout, UnsafeRawPointer) {
        let field = try field(key)
        guard !field.isRepeated else { throw ProtobufError(.schemaMismatch, "field \(field.protoName) is repeated") }
        return (field, message + field.offset)
    }

    func contains(_ key: Key) -> Bool {
        guard let index = layout.index(of: key.stringValue, hint: next) else { return false }
        return layout.fields[index].isPresent(in: message)
    }

    func decodeNil(forKey key: Key) throws -> Bool { !contains(key) }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        let (field, slot) = try singular(key)
        return try CSlot.bool(field, slot)
    }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        let (field, slot) = try singular(key)
        return try CSlot.string(field, slot)
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        let (field, slot) = try singular(key)
        return try CSlot.floatingPoint(field, slot)
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        let (field, slot) = try singular(key)
        return Float(try CSlot.floatingPoint(field, slot))
    }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(key) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let field = try field(key)
        guard field.isRepeated else { return try CSlot.value(T.self, field, message + field.offset, depth: depth) }
        let count = message.load(fromByteOffset: field.quantifierOffset, as: Int.self)
        let array = message.load(fromByteOffset: field.offset, as: UnsafeRawPointer?.self)
        if T.self == [String].self, field.kind == .string {
            // The common list of strings (ids), read element by element as
            // `RepeatedReader` would, without the generic array decoding.
            var strings: [String] = []
            strings.reserveCapacity(count)
            if count > 0, let array {
                for index in 0..<count { strings.append(try CSlot.string(field, array + index * field.kind.slotSize)) }
            }
            return unsafeBitCast(strings, to: T.self)
        }
        return try T(from: RepeatedDecoder(field: field, array: count > 0 ? array : nil, count: count, depth: depth))
    }

    @inline(__always)
    private func integer<T: FixedWidthInteger>(_ key: Key) throws -> T {
        let (field, slot) = try singular(key)
        return try CSlot.integer(T.self, field, slot)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        throw ProtobufError(.schemaMismatch, "protobuf messages do not use nested containers")
    }
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw ProtobufError(.schemaMismatch, "protobuf messages do not use nested containers")
    }
    func superDecoder() throws -> any Decoder { throw ProtobufError(.schemaMismatch, "superDecoder unsupported") }
    func superDecoder(forKey key: Key) throws -> any Decoder {
        throw ProtobufError(.schemaMismatch, "superDecoder unsupported")
    }
}

/// Reads one repeated field's C array as a Swift array.
struct RepeatedDecoder: Decoder {
    let field: FieldLayout
    let array: UnsafeRawPointer?
    let count: Int
    let depth: Int
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        throw ProtobufError(.schemaMismatch, "repeated field \(field.protoName) needs an array")
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        RepeatedReader(field: field, array: array, count: count, depth: depth)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw ProtobufError(.schemaMismatch, "repeated field \(field.protoName) needs an array")
    }
}

private struct RepeatedReader: UnkeyedDecodingContainer {
    let field: FieldLayout
    let array: UnsafeRawPointer?
    let total: Int
    let depth: Int
    var currentIndex = 0
    var codingPath: [any CodingKey] { [] }
    var count: Int? { total }
    var isAtEnd: Bool { currentIndex >= total }

    init(field: FieldLayout, array: UnsafeRawPointer?, count: Int, depth: Int) {
        self.field = field
        self.array = array
        self.total = count
        self.depth = depth
    }

    private mutating func nextSlot() throws -> UnsafeRawPointer {
        guard !isAtEnd, let array else {
            throw ProtobufError(.schemaMismatch, "read past the end of \(field.protoName)")
        }
        defer { currentIndex += 1 }
        return array + currentIndex * field.kind.slotSize
    }

    mutating func decodeNil() throws -> Bool { false }
    mutating func decode(_ type: Bool.Type) throws -> Bool { try CSlot.bool(field, try nextSlot()) }
    mutating func decode(_ type: String.Type) throws -> String { try CSlot.string(field, try nextSlot()) }
    mutating func decode(_ type: Double.Type) throws -> Double { try CSlot.floatingPoint(field, try nextSlot()) }
    mutating func decode(_ type: Float.Type) throws -> Float { Float(try CSlot.floatingPoint(field, try nextSlot())) }
    mutating func decode(_ type: Int.Type) throws -> Int { try CSlot.integer(Int.self, field, try nextSlot()) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try CSlot.integer(Int32.self, field, try nextSlot()) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try CSlot.integer(Int64.self, field, try nextSlot()) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try CSlot.integer(UInt32.self, field, try nextSlot()) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try CSlot.integer(UInt64.self, field, try nextSlot()) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try CSlot.value(T.self, field, try nextSlot(), depth: depth)
    }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<
        NestedKey
    > {
        throw ProtobufError(.schemaMismatch, "nested containers unsupported")
    }
    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw ProtobufError(.schemaMismatch, "nested containers unsupported")
    }
    mutating func superDecoder() throws -> any Decoder {
        throw ProtobufError(.schemaMismatch, "superDecoder unsupported")
    }
}

/// Reads a value that is one scalar in Swift's `Codable` (an enum's raw
/// value, or a standard type reached through a generic call).
struct ScalarDecoder: Decoder {
    let field: FieldLayout
    let slot: UnsafeRawPointer
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        throw ProtobufError(.schemaMismatch, "field \(field.protoName) (\(field.kind)) is not a message")
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw ProtobufError(.schemaMismatch, "field \(field.protoName) is not repeated")
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { ScalarReader(field: field, slot: slot) }
}

private struct ScalarReader: SingleValueDecodingContainer {
    let field: FieldLayout
    let slot: UnsafeRawPointer
    var codingPath: [any CodingKey] { [] }

    func decodeNil() -> Bool { false }
    func decode(_ type: Bool.Type) throws -> Bool { try CSlot.bool(field, slot) }
    func decode(_ type: String.Type) throws -> String { try CSlot.string(field, slot) }
    func decode(_ type: Double.Type) throws -> Double { try CSlot.floatingPoint(field, slot) }
    func decode(_ type: Float.Type) throws -> Float { Float(try CSlot.floatingPoint(field, slot)) }
    func decode(_ type: Int.Type) throws -> Int { try CSlot.integer(Int.self, field, slot) }
    func decode(_ type: Int8.Type) throws -> Int8 { try CSlot.integer(Int8.self, field, slot) }
    func decode(_ type: Int16.Type) throws -> Int16 { try CSlot.integer(Int16.self, field, slot) }
    func decode(_ type: Int32.Type) throws -> Int32 { try CSlot.integer(Int32.self, field, slot) }
    func decode(_ type: Int64.Type) throws -> Int64 { try CSlot.integer(Int64.self, field, slot) }
    func decode(_ type: UInt.Type) throws -> UInt { try CSlot.integer(UInt.self, field, slot) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try CSlot.integer(UInt8.self, field, slot) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try CSlot.integer(UInt16.self, field, slot) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try CSlot.integer(UInt32.self, field, slot) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try CSlot.integer(UInt64.self, field, slot) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        guard field.kind != .message else {
            throw ProtobufError(.schemaMismatch, "field \(field.protoName) cannot be read as \(T.self)")
        }
        return try T(from: ScalarDecoder(field: field, slot: slot))
    }
}

/// Reads one value of a field out of its C slot (in the message, or in a
/// repeated field's array), checking that the Swift type fits the kind.
enum CSlot {
    static func value<T: Decodable>(_ type: T.Type, _ field: FieldLayout, _ slot: UnsafeRawPointer, depth: Int) throws
        -> T
    {
        switch field.kind {
        case .bytes:
            // An exact type check: a dynamic cast would also accept [String].
            guard T.self == [UInt8].self else { throw mismatch(field, T.self) }
            let data = slot.load(as: ProtobufCBinaryData.self)
            let bytes =
                data.len > 0 && data.data != nil ? Array(UnsafeBufferPointer(start: data.data, count: data.len)) : []
            return unsafeBitCast(bytes, to: T.self)
        case .message:
            guard let layout = field.messageLayout, let message = slot.load(as: UnsafeRawPointer?.self) else {
                throw ProtobufError(
                    .schemaMismatch, "message field \(field.protoName) is absent and \(T.self) is not optional")
            }
            guard depth + 1 < ProtobufLimits.nestingDepthMax else {
                throw ProtobufError(.tooDeep, "message nests deeper than \(ProtobufLimits.nestingDepthMax)")
            }
            return try T(from: MessageDecoder(message: message, layout: layout, depth: depth + 1))
        default:
            return try T(from: ScalarDecoder(field: field, slot: slot))
        }
    }

    static func string(_ field: FieldLayout, _ slot: UnsafeRawPointer) throws -> String {
        guard field.kind == .string else { throw mismatch(field, String.self) }
        guard let pointer = slot.load(as: UnsafePointer<CChar>?.self) else { return "" }
        let bytes = UnsafeRawBufferPointer(start: pointer, count: strlen(pointer))
        guard let string = String(validating: bytes, as: UTF8.self) else {
            throw ProtobufError(.invalidUTF8, "field \(field.protoName) is not UTF-8")
        }
        return string
    }

    static func bool(_ field: FieldLayout, _ slot: UnsafeRawPointer) throws -> Bool {
        guard field.kind == .bool else { throw mismatch(field, Bool.self) }
        return slot.load(as: Int32.self) != 0
    }

    static func floatingPoint(_ field: FieldLayout, _ slot: UnsafeRawPointer) throws -> Double {
        switch field.kind {
        case .double: return slot.load(as: Double.self)
        case .float: return Double(slot.load(as: Float.self))
        default: throw mismatch(field, Double.self)
        }
    }

    @inline(__always)  // so each Swift integer type gets its own specialized copy
    static func integer<T: FixedWidthInteger>(_ type: T.Type, _ field: FieldLayout, _ slot: UnsafeRawPointer) throws
        -> T
    {
        let result: T?
        switch field.kind {
        case .int32, .sint32, .sfixed32, .enumeration: result = T(exactly: slot.load(as: Int32.self))
        case .int64, .sint64, .sfixed64: result = T(exactly: slot.load(as: Int64.self))
        case .uint32, .fixed32: result = T(exactly: slot.load(as: UInt32.self))
        case .uint64, .fixed64: result = T(exactly: slot.load(as: UInt64.self))
        default: throw mismatch(field, T.self)
        }
        guard let result else {
            throw ProtobufError(.schemaMismatch, "field \(field.protoName) does not fit \(T.self)")
        }
        return result
    }

    static func mismatch(_ field: FieldLayout, _ type: Any.Type) -> ProtobufError {
        ProtobufError(.schemaMismatch, "field \(field.protoName) (\(field.kind)) cannot be read as \(type)")
    }
}
