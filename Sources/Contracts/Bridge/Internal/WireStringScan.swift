import CProtobufC

/// protobuf-c hands string fields over as C strings, so a NUL inside one
/// would silently cut it short on decoding (encoding already refuses NUL).
/// This scan reads the wire as protobuf-c will, guided by the same
/// descriptors, and names the first string field (nested messages
/// included) whose bytes contain NUL. Malformed wire is left to protobuf-c,
/// which refuses it.
enum WireStringScan {
    static func firstStringWithNUL(
        _ bytes: ArraySlice<UInt8>,
        descriptor: UnsafePointer<ProtobufCMessageDescriptor>,
        depth: Int = 0
    ) -> String? {
        guard depth < ProtobufLimits.nestingDepthMax else { return nil }
        var index = bytes.startIndex
        while index < bytes.endIndex {
            guard let key = readVarint(bytes, &index) else { return nil }
            switch key & 7 {
            case 0: guard readVarint(bytes, &index) != nil else { return nil }
            case 1: index += 8
            case 5: index += 4
            case 2:
                guard let length = readVarint(bytes, &index), length <= UInt64(bytes.endIndex - index) else {
                    return nil
                }
                let payload = bytes[index..<(index + Int(length))]
                index += Int(length)
                guard key >> 3 <= UInt64(UInt32.max),
                    let field = protobuf_c_message_descriptor_get_field(descriptor, UInt32(key >> 3))
                else { continue }
                if field.pointee.type == PROTOBUF_C_TYPE_STRING, payload.contains(0) {
                    return String(cString: field.pointee.name)
                }
                if field.pointee.type == PROTOBUF_C_TYPE_MESSAGE {
                    let nested = field.pointee.descriptor.assumingMemoryBound(to: ProtobufCMessageDescriptor.self)
                    if let name = firstStringWithNUL(payload, descriptor: nested, depth: depth + 1) { return name }
                }
            default:
                return nil
            }
        }
        return nil
    }

    /// A base-128 varint of at most 10 bytes; nil when cut short or longer.
    private static func readVarint(_ bytes: ArraySlice<UInt8>, _ index: inout Int) -> UInt64? {
        var value: UInt64 = 0
        for shift in stride(from: UInt64(0), to: 70, by: 7) {
            guard index < bytes.endIndex else { return nil }
            let byte = bytes[index]
            index += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
        }
        return nil
    }
}
