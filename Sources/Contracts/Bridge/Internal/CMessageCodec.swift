import CProtobufC

/// Both directions of the bridge. Encoding writes wire bytes straight from
/// the Swift value (`WireWriter`), in the order and with the presence rules
/// of protobuf-c's pack. Decoding lets protobuf-c unpack and validate the
/// wire, reads the Swift value straight out of the C message
/// (`MessageDecoder`), and frees that message here with
/// `protobuf_c_message_free_unpacked`: its only owner.
enum CMessageCodec {
    static func encode<Message: ProtobufMessage>(_ message: Message) throws -> [UInt8] {
        let layout = try MessageLayouts.layout(for: Message.self)
        do {
            return try encode(message, layout: layout, recordsFieldOrder: false)
        } catch is FieldOrderRestart {
            return try encode(message, layout: layout, recordsFieldOrder: true)
        }
    }

    private static func encode<Message: Encodable>(_ message: Message, layout: MessageLayout, recordsFieldOrder: Bool)
        throws -> [UInt8]
    {
        let writer = WireWriter(recordsFieldOrder: recordsFieldOrder)
        try writer.writeMessage(message, layout: layout, depth: 0)
        return writer.bytes
    }

    static func decode<Message: ProtobufMessage>(_ type: Message.Type, from bytes: [UInt8]) throws -> Message {
        let layout = try MessageLayouts.layout(for: Message.self)
        let unpacked = bytes.withUnsafeBufferPointer { buffer in
            protobuf_c_message_unpack(layout.descriptor, nil, buffer.count, buffer.baseAddress)
        }
        guard let message = unpacked else {
            throw ProtobufError(.malformedWire, "bytes are not a valid \(layout.fullName)")
        }
        defer { protobuf_c_message_free_unpacked(message, nil) }
        // C strings end at the first NUL: refuse rather than truncate (no
        // zero byte at all, the common case, needs no scan).
        if bytes.contains(0), let name = WireStringScan.firstStringWithNUL(bytes[...], descriptor: layout.descriptor) {
            throw ProtobufError(.embeddedNUL, "field \(name) contains NUL")
        }
        return try Message(from: MessageDecoder(message: UnsafeRawPointer(message), layout: layout, depth: 0))
    }

    /// protobuf-c's own encoding of `bytes` (unpacked, then packed again):
    /// the reference the Swift encoder must equal byte for byte, for tests
    /// and the fuzzer. Nil when protobuf-c refuses the bytes.
    static func protobufCRepack(_ bytes: [UInt8], descriptor: MessageDescriptor) -> [UInt8]? {
        let unpacked = bytes.withUnsafeBufferPointer { buffer in
            protobuf_c_message_unpack(descriptor.pointer, nil, buffer.count, buffer.baseAddress)
        }
        guard let message = unpacked else { return nil }
        defer { protobuf_c_message_free_unpacked(message, nil) }
        let size = protobuf_c_message_get_packed_size(message)
        return [UInt8](unsafeUninitializedCapacity: max(size, 1)) { buffer, count in
            count = protobuf_c_message_pack(message, buffer.baseAddress)
        }
    }
}
