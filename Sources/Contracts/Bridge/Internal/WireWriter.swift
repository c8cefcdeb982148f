import Glibc

/// Thrown inside the first encoding pass when a message's properties arrive
/// out of field-number order; the second pass records field boundaries and
/// sorts them, so the bytes are still the ones protobuf-c would pack.
struct FieldOrderRestart: Error {}

/// Where a value sits, which decides its tag and whether a default is
/// written (protobuf-c's rules for proto3).
enum ValuePosition {
    /// A singular field: tag, value; implicit-presence defaults are skipped.
    case singular
    /// One element of an unpacked repeated field: tag and value, always.
    case element
    /// One element of a packed run: the value only.
    case packed
}

/// The protobuf wire bytes of one message being encoded, written straight
/// from the Swift values with the field tables of `MessageLayouts`: no
/// intermediate tree, no C message, no per-field names built.
final class WireWriter {
    private(set) var bytes: [UInt8] = []
    /// Second pass only: the start of every field written, per open message.
    let recordsFieldOrder: Bool
    private var fieldStarts: [[(number: UInt32, start: Int)]] = []

    init(recordsFieldOrder: Bool) {
        self.recordsFieldOrder = recordsFieldOrder
        bytes.reserveCapacity(64)
    }

    // MARK: Messages

    /// Encodes `value` as the message `layout` describes, at the end of the
    /// bytes (without tag or length).
    func writeMessage<Value: Encodable>(_ value: Value, layout: MessageLayout, depth: Int) throws {
        guard depth < ProtobufLimits.nestingDepthMax else {
            throw ProtobufError(.tooDeep, "message nests deeper than \(ProtobufLimits.nestingDepthMax)")
        }
        let start = bytes.count
        if recordsFieldOrder { fieldStarts.append([]) }
        try value.encode(to: MessageEncoder(writer: self, layout: layout, depth: depth))
        if recordsFieldOrder { sortFields(from: start, fieldStarts.removeLast()) }
    }

    /// Notes where a field began (second pass only).
    func recordField(_ number: UInt32, start: Int) {
        fieldStarts[fieldStarts.count - 1].append((number, start))
    }

    private func sortFields(from start: Int, _ starts: [(number: UInt32, start: Int)]) {
        guard starts.count > 1 else { return }
        var spans: [(number: UInt32, order: Int, range: Range<Int>)] = []
        for (order, field) in starts.enumerated() {
            let end = order + 1 < starts.count ? starts[order + 1].start : bytes.count
            spans.append((field.number, order, field.start..<end))
        }
        spans.sort { ($0.number, $0.order) < ($1.number, $1.order) }
        var sorted: [UInt8] = []
        sorted.reserveCapacity(bytes.count - start)
        for span in spans { sorted.append(contentsOf: bytes[span.range]) }
        bytes.replaceSubrange(start..<bytes.count, with: sorted)
    }

    // MARK: Values of any Encodable type

    /// A value whose Swift type is generic: arrays, nested messages, bytes
    /// and enums (which encode themselves as a single Int32).
    func writeValue<Value: Encodable>(_ value: Value, field: FieldLayout, depth: Int) throws {
        guard field.isRepeated else { return try writeSingle(value, field: field, position: .singular, depth: depth) }
        if Value.self == [String].self, field.kind == .string {
            // A list of strings (ids), written as `RepeatedContainer` would
            // (strings are never packed), without the generic array encoding.
            for element in unsafeBitCast(value, to: [String].self) {
                try writeString(element, field: field, position: .element)
            }
            return
        }
        let start = bytes.count
        try value.encode(to: RepeatedEncoder(writer: self, field: field, depth: depth))
        if field.isPacked && bytes.count > start { insertTagAndLength(field.tag, at: start) }
    }

    func writeSingle<Value: Encodable>(_ value: Value, field: FieldLayout, position: ValuePosition, depth: Int) throws {
        switch field.kind {
        case .bytes:
            // An exact type check: a dynamic cast would also accept an empty [String].
            guard Value.self == [UInt8].self else { throw Self.mismatch(field, Value.self) }
            let data = unsafeBitCast(value, to: [UInt8].self)
            if data.isEmpty && position == .singular && !field.writesDefault { return }
            varint(field.tag)
            varint(UInt64(data.count))
            bytes.append(contentsOf: data)
        case .message:
            guard let layout = field.messageLayout else { throw Self.mismatch(field, Value.self) }
            varint(field.tag)
            let start = bytes.count
            try writeMessage(value, layout: layout, depth: depth + 1)
            insertLength(at: start)
        default:
            try value.encode(to: ScalarEncoder(writer: self, field: field, position: position))
        }
    }

    // MARK: Scalars

    func writeString(_ value: String, field: FieldLayout, position: ValuePosition) throws {
        try Self.check(field, field.kind == .string, position, String.self)
        var value = value
        try value.withUTF8 { utf8 in
            if utf8.isEmpty && position == .singular && !field.writesDefault { return }
            if let base = utf8.baseAddress, memchr(base, 0, utf8.count) != nil {
                throw ProtobufError(.embeddedNUL, "field \(field.protoName) contains NUL")
            }
            if position != .packed { varint(field.tag) }
            varint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    func writeBool(_ value: Bool, field: FieldLayout, position: ValuePosition) throws {
        try Self.check(field, field.kind == .bool, position, Bool.self)
        if !value && position == .singular && !field.writesDefault { return }
        if position != .packed { varint(field.tag) }
        bytes.append(value ? 1 : 0)
    }

    @inline(__always)  // so each Swift integer type gets its own specialized copy
    func writeInteger<T: FixedWidthInteger>(_ value: T, field: FieldLayout, position: ValuePosition) throws {
        try Self.check(field, field.kind.isInteger, position, T.self)
        if value == 0 && position == .singular && !field.writesDefault { return }
        if position != .packed { varint(field.tag) }
        switch field.kind {
        case .int32, .enumeration:
            // Negative int32 values are sign-extended to ten bytes.
            varint(UInt64(bitPattern: Int64(try exactly(value, Int32.self, field))))
        case .sint32:
            let v = try exactly(value, Int32.self, field)
            varint(UInt64(UInt32(bitPattern: (v << 1) ^ (v >> 31))))
        case .sfixed32: fixed32(UInt32(bitPattern: try exactly(value, Int32.self, field)))
        case .int64: varint(UInt64(bitPattern: try exactly(value, Int64.self, field)))
        case .sint64:
            let v = try exactly(value, Int64.self, field)
            varint(UInt64(bitPattern: (v << 1) ^ (v >> 63)))
        case .sfixed64: fixed64(UInt64(bitPattern: try exactly(value, Int64.self, field)))
        case .uint32: varint(UInt64(try exactly(value, UInt32.self, field)))
        case .fixed32: fixed32(try exactly(value, UInt32.self, field))
        case .uint64: varint(try exactly(value, UInt64.self, field))
        default: fixed64(try exactly(value, UInt64.self, field))  // .fixed64
        }
    }

    func writeFloatingPoint(_ value: Double, field: FieldLayout, position: ValuePosition) throws {
        try Self.check(field, field.kind == .double || field.kind == .float, position, Double.self)
        if value == 0 && position == .singular && !field.writesDefault { return }
        if position != .packed { varint(field.tag) }
        if field.kind == .double {
            fixed64(value.bitPattern)
        } else {
            fixed32(Float(value).bitPattern)
        }
    }

    @inline(__always)
    private func exactly<T: FixedWidthInteger, R: FixedWidthInteger>(_ value: T, _ type: R.Type, _ field: FieldLayout)
        throws -> R
    {
        guard let result = R(exactly: value) else {
            throw ProtobufError(.schemaMismatch, "field \(field.protoName) cannot hold \(value)")
        }
        return result
    }

    /// The Swift type must fit the field's kind, and a singular value go to
    /// a singular field (elements to a repeated one).
    @inline(__always)
    private static func check(_ field: FieldLayout, _ kindFits: Bool, _ position: ValuePosition, _ type: Any.Type)
        throws
    {
        guard kindFits, field.isRepeated == (position != .singular) else { throw mismatch(field, type) }
    }

    static func mismatch(_ field: FieldLayout, _ type: Any.Type) -> ProtobufError {
        ProtobufError(.schemaMismatch, "field \(field.protoName) (\(field.kind)) cannot hold \(type)")
    }

    // MARK: Wire primitives

    @inline(__always)
    private func varint(_ value: UInt64) {
        if value < 0x80 {
            bytes.append(UInt8(value))
            return
        }
        var value = value
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 10) { buffer in
            var count = 0
            while value >= 0x80 {
                buffer[count] = UInt8(truncatingIfNeeded: value) | 0x80
                value >>= 7
                count += 1
            }
            buffer[count] = UInt8(value)
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[..<(count + 1)]))
        }
    }

    private func fixed32(_ value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    private func fixed64(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Puts the length of everything after `start` in front of it.
    private func insertLength(at start: Int) {
        let length = bytes.count - start
        if length < 0x80 {
            bytes.insert(UInt8(length), at: start)
        } else {
            bytes.insert(contentsOf: Self.varintBytes(UInt64(length)), at: start)
        }
    }

    private func insertTagAndLength(_ tag: UInt64, at start: Int) {
        insertLength(at: start)
        bytes.insert(contentsOf: Self.varintBytes(tag), at: start)
    }

    private static func varintBytes(_ value: UInt64) -> [UInt8] {
        var result: [UInt8] = []
        var value = value
        while value >= 0x80 {
            result.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        result.append(UInt8(value))
        return result
    }
}
