import CProtobufC
import Glibc

/// The only place that touches protobuf-c messages: builds a C message from
/// `ProtoFields` and packs it, or unpacks wire bytes and reads the C message
/// back into `ProtoFields`. Every C message built or unpacked here is freed
/// here with `protobuf_c_message_free_unpacked` (the system allocator owns
/// all of its memory, ours included).
enum CMessageCodec {
    // MARK: Encoding

    static func encode(_ fields: ProtoFields, descriptor: MessageDescriptor) throws -> [UInt8] {
        let message = try build(fields, descriptor: descriptor.pointer, depth: 0)
        defer { protobuf_c_message_free_unpacked(message, nil) }
        let size = protobuf_c_message_get_packed_size(message)
        var output = [UInt8](repeating: 0, count: max(size, 1))
        let written = output.withUnsafeMutableBufferPointer { protobuf_c_message_pack(message, $0.baseAddress) }
        precondition(written == size, "protobuf-c packed \(written) bytes, expected \(size)")
        output.removeLast(output.count - size)
        return output
    }

    private static func build(
        _ fields: ProtoFields,
        descriptor: UnsafePointer<ProtobufCMessageDescriptor>,
        depth: Int
    ) throws -> UnsafeMutablePointer<ProtobufCMessage> {
        guard depth < ProtobufLimits.nestingDepthMax else {
            throw ProtobufError(.tooDeep, "message nests deeper than \(ProtobufLimits.nestingDepthMax)")
        }
        guard let raw = calloc(1, descriptor.pointee.sizeof_message) else {
            preconditionFailure("out of memory allocating a protobuf message")
        }
        let message = raw.assumingMemoryBound(to: ProtobufCMessage.self)
        descriptor.pointee.message_init(message)
        do {
            for (name, value) in fields {
                guard let field = protobuf_c_message_descriptor_get_field_by_name(descriptor, name) else {
                    throw ProtobufError(.schemaMismatch, "\(String(cString: descriptor.pointee.name)) has no field \(name)")
                }
                try write(value, field: field, into: raw, depth: depth)
            }
        } catch {
            protobuf_c_message_free_unpacked(message, nil)
            throw error
        }
        return message
    }

    private static func write(
        _ value: ProtoValue,
        field: UnsafePointer<ProtobufCFieldDescriptor>,
        into message: UnsafeMutableRawPointer,
        depth: Int
    ) throws {
        let slot = message + Int(field.pointee.offset)
        let quantifier = message + Int(field.pointee.quantifier_offset)
        if field.pointee.label == PROTOBUF_C_LABEL_REPEATED {
            guard case .list(let items) = value else { throw mismatch(field, value) }
            guard !items.isEmpty else { return }
            let elementSize = self.elementSize(field.pointee.type)
            guard let array = calloc(items.count, elementSize) else {
                preconditionFailure("out of memory allocating a repeated field")
            }
            // Publish the array first so a failure below frees what was written.
            slot.storeBytes(of: array, as: UnsafeMutableRawPointer?.self)
            for (index, item) in items.enumerated() {
                try writeScalar(item, field: field, at: array + index * elementSize, depth: depth)
                quantifier.storeBytes(of: index + 1, as: Int.self)
            }
            return
        }
        try writeScalar(value, field: field, at: slot, depth: depth)
        if field.pointee.flags & UInt32(PROTOBUF_C_FIELD_FLAG_ONEOF.rawValue) != 0 {
            quantifier.storeBytes(of: field.pointee.id, as: UInt32.self)
        } else if field.pointee.label == PROTOBUF_C_LABEL_OPTIONAL,
                  field.pointee.type != PROTOBUF_C_TYPE_STRING, field.pointee.type != PROTOBUF_C_TYPE_MESSAGE {
            quantifier.storeBytes(of: 1, as: Int32.self)
        }
    }

    private static func elementSize(_ type: ProtobufCType) -> Int {
        switch type {
        case PROTOBUF_C_TYPE_INT64, PROTOBUF_C_TYPE_SINT64, PROTOBUF_C_TYPE_SFIXED64,
             PROTOBUF_C_TYPE_UINT64, PROTOBUF_C_TYPE_FIXED64, PROTOBUF_C_TYPE_DOUBLE:
            return 8
        case PROTOBUF_C_TYPE_STRING, PROTOBUF_C_TYPE_MESSAGE:
            return MemoryLayout<UnsafeMutableRawPointer?>.size
        case PROTOBUF_C_TYPE_BYTES:
            return MemoryLayout<ProtobufCBinaryData>.size
        default:
            return 4  // int32 kinds, float, bool (protobuf_c_boolean is int), enum
        }
    }

    private static func writeScalar(
        _ value: ProtoValue,
        field: UnsafePointer<ProtobufCFieldDescriptor>,
        at slot: UnsafeMutableRawPointer,
        depth: Int
    ) throws {
        switch field.pointee.type {
        case PROTOBUF_C_TYPE_INT32, PROTOBUF_C_TYPE_SINT32, PROTOBUF_C_TYPE_SFIXED32, PROTOBUF_C_TYPE_ENUM:
            slot.storeBytes(of: try integer(value, Int32.self, field), as: Int32.self)
        case PROTOBUF_C_TYPE_INT64, PROTOBUF_C_TYPE_SINT64, PROTOBUF_C_TYPE_SFIXED64:
            slot.storeBytes(of: try integer(value, Int64.self, field), as: Int64.self)
        case PROTOBUF_C_TYPE_UINT32, PROTOBUF_C_TYPE_FIXED32:
            slot.storeBytes(of: try integer(value, UInt32.self, field), as: UInt32.self)
        case PROTOBUF_C_TYPE_UINT64, PROTOBUF_C_TYPE_FIXED64:
            slot.storeBytes(of: try integer(value, UInt64.self, field), as: UInt64.self)
        case PROTOBUF_C_TYPE_FLOAT:
            guard case .double(let d) = value else { throw mismatch(field, value) }
            slot.storeBytes(of: Float(d), as: Float.self)
        case PROTOBUF_C_TYPE_DOUBLE:
            guard case .double(let d) = value else { throw mismatch(field, value) }
            slot.storeBytes(of: d, as: Double.self)
        case PROTOBUF_C_TYPE_BOOL:
            guard case .bool(let b) = value else { throw mismatch(field, value) }
            slot.storeBytes(of: b ? 1 : 0, as: Int32.self)
        case PROTOBUF_C_TYPE_STRING:
            guard case .string(let s) = value else { throw mismatch(field, value) }
            slot.storeBytes(of: try cString(s, field), as: UnsafeMutablePointer<CChar>.self)
        case PROTOBUF_C_TYPE_BYTES:
            guard case .bytes(let b) = value else { throw mismatch(field, value) }
            slot.storeBytes(of: binaryData(b), as: ProtobufCBinaryData.self)
        case PROTOBUF_C_TYPE_MESSAGE:
            guard case .message(let sub) = value else { throw mismatch(field, value) }
            let subDescriptor = field.pointee.descriptor.assumingMemoryBound(to: ProtobufCMessageDescriptor.self)
            let built = try build(sub, descriptor: subDescriptor, depth: depth + 1)
            slot.storeBytes(of: built, as: UnsafeMutablePointer<ProtobufCMessage>.self)
        default:
            throw ProtobufError(.schemaMismatch, "unsupported field type for \(String(cString: field.pointee.name))")
        }
    }

    private static func integer<T: FixedWidthInteger>(
        _ value: ProtoValue, _ type: T.Type, _ field: UnsafePointer<ProtobufCFieldDescriptor>
    ) throws -> T {
        switch value {
        case .int(let v): if let r = T(exactly: v) { return r }
        case .uint(let v): if let r = T(exactly: v) { return r }
        default: break
        }
        throw mismatch(field, value)
    }

    private static func cString(_ string: String, _ field: UnsafePointer<ProtobufCFieldDescriptor>) throws -> UnsafeMutablePointer<CChar> {
        var utf8 = Array(string.utf8)
        if utf8.contains(0) {
            throw ProtobufError(.embeddedNUL, "field \(String(cString: field.pointee.name)) contains NUL")
        }
        utf8.append(0)
        guard let memory = malloc(utf8.count) else { preconditionFailure("out of memory allocating a string") }
        utf8.withUnsafeBytes { memory.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        return memory.assumingMemoryBound(to: CChar.self)
    }

    private static func binaryData(_ bytes: [UInt8]) -> ProtobufCBinaryData {
        guard !bytes.isEmpty else { return ProtobufCBinaryData(len: 0, data: nil) }
        guard let memory = malloc(bytes.count) else { preconditionFailure("out of memory allocating bytes") }
        bytes.withUnsafeBytes { memory.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        return ProtobufCBinaryData(len: bytes.count, data: memory.assumingMemoryBound(to: UInt8.self))
    }

    private static func mismatch(_ field: UnsafePointer<ProtobufCFieldDescriptor>, _ value: ProtoValue) -> ProtobufError {
        ProtobufError(.schemaMismatch, "field \(String(cString: field.pointee.name)) cannot hold \(value.kindName)")
    }

    // MARK: Decoding

    static func decode(_ bytes: [UInt8], descriptor: MessageDescriptor) throws -> ProtoFields {
        let unpacked = bytes.withUnsafeBufferPointer { buffer in
            protobuf_c_message_unpack(descriptor.pointer, nil, buffer.count, buffer.baseAddress)
        }
        guard let message = unpacked else {
            throw ProtobufError(.malformedWire, "bytes are not a valid \(descriptor.fullName)")
        }
        defer { protobuf_c_message_free_unpacked(message, nil) }
        // C strings end at the first NUL: refuse rather than truncate (no
        // zero byte at all, the common case, needs no scan).
        if bytes.contains(0), let name = WireStringScan.firstStringWithNUL(bytes[...], descriptor: descriptor.pointer) {
            throw ProtobufError(.embeddedNUL, "field \(name) contains NUL")
        }
        return try read(UnsafeRawPointer(message), descriptor: descriptor.pointer, depth: 0)
    }

    private static func read(
        _ message: UnsafeRawPointer,
        descriptor: UnsafePointer<ProtobufCMessageDescriptor>,
        depth: Int
    ) throws -> ProtoFields {
        guard depth < ProtobufLimits.nestingDepthMax else {
            throw ProtobufError(.tooDeep, "message nests deeper than \(ProtobufLimits.nestingDepthMax)")
        }
        var fields = ProtoFields(minimumCapacity: Int(descriptor.pointee.n_fields))
        for index in 0..<Int(descriptor.pointee.n_fields) {
            let field = descriptor.pointee.fields + index
            let slot = message + Int(field.pointee.offset)
            let quantifier = message + Int(field.pointee.quantifier_offset)
            let name = String(cString: field.pointee.name)
            if field.pointee.label == PROTOBUF_C_LABEL_REPEATED {
                let count = quantifier.load(as: Int.self)
                var items: [ProtoValue] = []
                items.reserveCapacity(count)
                if count > 0, let array = slot.load(as: UnsafeRawPointer?.self) {
                    let size = elementSize(field.pointee.type)
                    for item in 0..<count {
                        if let value = try readScalar(field: field, at: array + item * size, depth: depth) {
                            items.append(value)
                        }
                    }
                }
                fields[name] = .list(items)
            } else if field.pointee.flags & UInt32(PROTOBUF_C_FIELD_FLAG_ONEOF.rawValue) != 0,
                      quantifier.load(as: UInt32.self) != field.pointee.id {
                continue  // another member of the oneof is set
            } else if let value = try readScalar(field: field, at: slot, depth: depth) {
                fields[name] = value
            }
        }
        return fields
    }

    private static func readScalar(
        field: UnsafePointer<ProtobufCFieldDescriptor>,
        at slot: UnsafeRawPointer,
        depth: Int
    ) throws -> ProtoValue? {
        switch field.pointee.type {
        case PROTOBUF_C_TYPE_INT32, PROTOBUF_C_TYPE_SINT32, PROTOBUF_C_TYPE_SFIXED32, PROTOBUF_C_TYPE_ENUM:
            return .int(Int64(slot.load(as: Int32.self)))
        case PROTOBUF_C_TYPE_INT64, PROTOBUF_C_TYPE_SINT64, PROTOBUF_C_TYPE_SFIXED64:
            return .int(slot.load(as: Int64.self))
        case PROTOBUF_C_TYPE_UINT32, PROTOBUF_C_TYPE_FIXED32:
            return .uint(UInt64(slot.load(as: UInt32.self)))
        case PROTOBUF_C_TYPE_UINT64, PROTOBUF_C_TYPE_FIXED64:
            return .uint(slot.load(as: UInt64.self))
        case PROTOBUF_C_TYPE_FLOAT:
            return .double(Double(slot.load(as: Float.self)))
        case PROTOBUF_C_TYPE_DOUBLE:
            return .double(slot.load(as: Double.self))
        case PROTOBUF_C_TYPE_BOOL:
            return .bool(slot.load(as: Int32.self) != 0)
        case PROTOBUF_C_TYPE_STRING:
            guard let pointer = slot.load(as: UnsafePointer<CChar>?.self) else { return .string("") }
            let length = strlen(pointer)
            let bytes = UnsafeRawBufferPointer(start: pointer, count: length)
            guard let string = String(validating: bytes, as: UTF8.self) else {
                throw ProtobufError(.invalidUTF8, "field \(String(cString: field.pointee.name)) is not UTF-8")
            }
            return .string(string)
        case PROTOBUF_C_TYPE_BYTES:
            let data = slot.load(as: ProtobufCBinaryData.self)
            guard data.len > 0, let base = data.data else { return .bytes([]) }
            return .bytes(Array(UnsafeBufferPointer(start: base, count: data.len)))
        case PROTOBUF_C_TYPE_MESSAGE:
            guard let sub = slot.load(as: UnsafeRawPointer?.self) else { return nil }
            let subDescriptor = field.pointee.descriptor.assumingMemoryBound(to: ProtobufCMessageDescriptor.self)
            return .message(try read(sub, descriptor: subDescriptor, depth: depth + 1))
        default:
            throw ProtobufError(.schemaMismatch, "unsupported field type for \(String(cString: field.pointee.name))")
        }
    }
}
