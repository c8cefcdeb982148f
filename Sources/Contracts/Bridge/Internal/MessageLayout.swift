import CContracts
import CProtobufC

/// A field's protobuf type, read once from its protoc-c descriptor.
enum FieldKind: Equatable {
    case int32, sint32, sfixed32, int64, sint64, sfixed64
    case uint32, fixed32, uint64, fixed64
    case float, double, bool, string, bytes, enumeration, message

    init?(_ type: ProtobufCType) {
        switch type {
        case PROTOBUF_C_TYPE_INT32: self = .int32
        case PROTOBUF_C_TYPE_SINT32: self = .sint32
        case PROTOBUF_C_TYPE_SFIXED32: self = .sfixed32
        case PROTOBUF_C_TYPE_INT64: self = .int64
        case PROTOBUF_C_TYPE_SINT64: self = .sint64
        case PROTOBUF_C_TYPE_SFIXED64: self = .sfixed64
        case PROTOBUF_C_TYPE_UINT32: self = .uint32
        case PROTOBUF_C_TYPE_FIXED32: self = .fixed32
        case PROTOBUF_C_TYPE_UINT64: self = .uint64
        case PROTOBUF_C_TYPE_FIXED64: self = .fixed64
        case PROTOBUF_C_TYPE_FLOAT: self = .float
        case PROTOBUF_C_TYPE_DOUBLE: self = .double
        case PROTOBUF_C_TYPE_BOOL: self = .bool
        case PROTOBUF_C_TYPE_STRING: self = .string
        case PROTOBUF_C_TYPE_BYTES: self = .bytes
        case PROTOBUF_C_TYPE_ENUM: self = .enumeration
        case PROTOBUF_C_TYPE_MESSAGE: self = .message
        default: return nil
        }
    }

    /// The wire type of one value (packed repeated fields use 2 around them).
    var wireType: UInt8 {
        switch self {
        case .fixed64, .sfixed64, .double: 1
        case .string, .bytes, .message: 2
        case .fixed32, .sfixed32, .float: 5
        default: 0
        }
    }

    /// Bytes one value takes in protobuf-c's C struct (and in its arrays).
    var slotSize: Int {
        switch self {
        case .int64, .sint64, .sfixed64, .uint64, .fixed64, .double: 8
        case .string, .message: MemoryLayout<UnsafeRawPointer?>.size
        case .bytes: MemoryLayout<ProtobufCBinaryData>.size
        default: 4  // 32-bit kinds, float, bool (protobuf_c_boolean is int), enum
        }
    }

    /// Integer kinds read and written through `FixedWidthInteger`.
    var isInteger: Bool {
        switch self {
        case .float, .double, .bool, .string, .bytes, .message: false
        default: true
        }
    }
}

/// How protobuf-c decides whether a singular field is on the wire.
enum FieldPresence: Equatable {
    /// proto3 implicit presence: written unless zero, empty or absent.
    case implicit
    /// `optional`: a `has_` flag (int) at the quantifier offset.
    case flag
    /// A oneof member: the case's field number at the quantifier offset.
    case oneof
}

/// One field of a message, everything the codec needs precomputed: names,
/// number, kind, C offsets and the encoded tag. Immutable once the tables
/// are built, so sharing across threads is safe.
final class FieldLayout: @unchecked Sendable {
    let protoName: String
    /// The Swift property's name (camelCase of `protoName`).
    let swiftName: String
    let number: UInt32
    let kind: FieldKind
    let isRepeated: Bool
    let isPacked: Bool
    let presence: FieldPresence
    /// Byte offset of the value (or of the array pointer) in the C struct.
    let offset: Int
    /// Byte offset of the element count, `has_` flag or oneof case.
    let quantifierOffset: Int
    /// The tag as written before each value (or before a packed run).
    let tag: UInt64
    /// The nested message's layout; set once while the tables are built.
    fileprivate(set) var messageLayout: MessageLayout?
    fileprivate let messageDescriptor: UnsafeRawPointer?

    fileprivate init(_ field: ProtobufCFieldDescriptor, kind: FieldKind) {
        protoName = String(cString: field.name)
        swiftName = FieldName.swiftName(forProtoName: protoName)
        number = field.id
        self.kind = kind
        isRepeated = field.label == PROTOBUF_C_LABEL_REPEATED
        isPacked = isRepeated && field.flags & UInt32(PROTOBUF_C_FIELD_FLAG_PACKED.rawValue) != 0
        if field.flags & UInt32(PROTOBUF_C_FIELD_FLAG_ONEOF.rawValue) != 0 {
            presence = .oneof
        } else if field.label == PROTOBUF_C_LABEL_OPTIONAL || field.label == PROTOBUF_C_LABEL_REQUIRED {
            presence = .flag
        } else {
            presence = .implicit
        }
        offset = Int(field.offset)
        quantifierOffset = Int(field.quantifier_offset)
        tag = UInt64(field.id) << 3 | UInt64(isPacked ? 2 : kind.wireType)
        messageDescriptor = kind == .message ? field.descriptor : nil
    }

    /// Whether protobuf-c's pack writes this field when set to its default:
    /// `optional` and oneof members always, proto3 implicit fields never.
    var writesDefault: Bool { presence != .implicit }

    /// Whether the field counts as present in an unpacked C message.
    func isPresent(in message: UnsafeRawPointer) -> Bool {
        switch presence {
        case .oneof:
            return message.load(fromByteOffset: quantifierOffset, as: UInt32.self) == number
        case .flag where kind != .string && kind != .message:
            return message.load(fromByteOffset: quantifierOffset, as: Int32.self) != 0
        case .flag, .implicit:
            guard kind == .string || kind == .message else { return true }
            return message.load(fromByteOffset: offset, as: UnsafeRawPointer?.self) != nil
        }
    }
}

/// A message's fields in descriptor order (ascending field number, the
/// order protobuf-c packs them in), with a name index for lookups that miss
/// the expected next field.
final class MessageLayout: @unchecked Sendable {
    let descriptor: UnsafePointer<ProtobufCMessageDescriptor>
    let fullName: String
    let fields: [FieldLayout]
    private let indexBySwiftName: [String: Int]

    fileprivate init(_ descriptor: UnsafePointer<ProtobufCMessageDescriptor>) {
        self.descriptor = descriptor
        fullName = String(cString: descriptor.pointee.name)
        var fields: [FieldLayout] = []
        for index in 0..<Int(descriptor.pointee.n_fields) {
            let field = descriptor.pointee.fields[index]
            // A kind this codec cannot carry (none in Protos/) stays out of
            // the table, so a Swift property for it is a schema mismatch.
            guard let kind = FieldKind(field.type) else { continue }
            fields.append(FieldLayout(field, kind: kind))
        }
        self.fields = fields
        indexBySwiftName = Dictionary(
            fields.enumerated().map { ($0.element.swiftName, $0.offset) }, uniquingKeysWith: { first, _ in first })
    }

    /// The field a Swift coding key names. `hint` is the index the caller
    /// expects (the one after the previous field): synthesized `Codable`
    /// visits properties in declaration order, which is field-number order,
    /// so the common case is one string comparison and no hashing.
    @inline(__always)
    func index(of swiftName: String, hint: Int) -> Int? {
        if hint < fields.count, fields[hint].swiftName == swiftName { return hint }
        return indexBySwiftName[swiftName]
    }
}

/// Every message's layout, computed once per process from the generated
/// descriptors and then only read.
enum MessageLayouts {
    private struct Tables: @unchecked Sendable {
        var byDescriptor: [UnsafeRawPointer: MessageLayout] = [:]
        var byName: [String: MessageLayout] = [:]
        var byType: [ObjectIdentifier: MessageLayout] = [:]
    }

    private static let tables: Tables = {
        var tables = Tables()
        for index in 0..<ccontracts_message_count() {
            guard let descriptor = ccontracts_message_at(index) else { continue }
            let layout = MessageLayout(descriptor)
            tables.byDescriptor[UnsafeRawPointer(descriptor)] = layout
            tables.byName[layout.fullName] = layout
        }
        for layout in tables.byDescriptor.values {
            for field in layout.fields {
                if let nested = field.messageDescriptor { field.messageLayout = tables.byDescriptor[nested] }
            }
        }
        for type in AllMessages.types {
            if let layout = tables.byName[type.protobufName] { tables.byType[ObjectIdentifier(type)] = layout }
        }
        return tables
    }()

    /// The layout of a Swift message type: a lookup by type identity, or
    /// by name for a type outside `AllMessages`.
    static func layout<Message: ProtobufMessage>(for type: Message.Type) throws -> MessageLayout {
        if let layout = tables.byType[ObjectIdentifier(type)] ?? tables.byName[Message.protobufName] { return layout }
        throw ProtobufError(.schemaMismatch, "no generated descriptor for \(Message.protobufName)")
    }
}
