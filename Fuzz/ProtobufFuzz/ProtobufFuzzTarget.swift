// libFuzzer entry point over Contracts' protobuf codec: wire bytes through
// protobuf-c's unpacker and the bridge (CMessageCodec, MessageDecoder) into
// each Swift message type, and back out through the Swift encoder
// (WireWriter). Not a SwiftPM target: scripts/fuzz.sh
// compiles it with Sources/Contracts and Fuzz/Support into one module named
// Contracts, against RPCCore built as a library, the generated
// protoc-c sources (instrumented) and Debian's libprotobuf-c (not
// instrumented), with `-sanitize=fuzzer,address`.
//
// Input: byte 0 picks the message type (AllMessages.types, request types
// first in the seeds); the rest is wire bytes. Oracles:
//   - decoding never crashes or leaks (ASan/LSan watch protobuf-c's
//     allocations and every free the bridge makes);
//   - round trip: a decoded value re-encodes to bytes that decode to an
//     equal value, and re-encoding that gives the same bytes;
//   - byte-exact: those bytes are what protobuf-c itself packs for them;
//   - fidelity: every singular top-level string field decodes to exactly
//     the bytes of its last occurrence on the wire (read by an independent
//     wire scanner here), so nothing is truncated or altered silently.
import CProtobufC

/// One field occurrence on the wire.
struct WireField {
    let number: UInt64
    let wireType: UInt8
    let payload: ArraySlice<UInt8>
}

/// An independent, minimal protobuf wire scanner (top level only); nil
/// when the bytes are not well-formed wire format.
func scanWire(_ bytes: ArraySlice<UInt8>) -> [WireField]? {
    var index = bytes.startIndex
    func varint() -> UInt64? {
        var value: UInt64 = 0
        for shift in stride(from: 0, to: 70, by: 7) {
            guard index < bytes.endIndex else { return nil }
            let byte = bytes[index]
            index += 1
            if shift == 63 && byte > 1 { return nil }
            value |= UInt64(byte & 0x7F) << UInt64(shift)
            if byte & 0x80 == 0 { return value }
        }
        return nil
    }
    var fields: [WireField] = []
    while index < bytes.endIndex {
        guard let key = varint(), key >> 3 != 0 else { return nil }
        let wireType = UInt8(key & 7)
        let start = index
        switch wireType {
        case 0: guard varint() != nil else { return nil }
        case 1: guard bytes.endIndex - index >= 8 else { return nil }; index += 8
        case 5: guard bytes.endIndex - index >= 4 else { return nil }; index += 4
        case 2:
            guard let length = varint(), length <= UInt64(bytes.endIndex - index) else { return nil }
            fields.append(WireField(number: key >> 3, wireType: 2, payload: bytes[index..<(index + Int(length))]))
            index += Int(length)
            continue
        default: return nil  // groups and reserved wire types
        }
        fields.append(WireField(number: key >> 3, wireType: wireType, payload: bytes[start..<index]))
    }
    return fields
}

/// The singular, non-oneof string fields of a message: (number, name).
func singularStringFields(_ descriptor: MessageDescriptor) -> [(UInt32, String)] {
    var result: [(UInt32, String)] = []
    for index in 0..<Int(descriptor.pointer.pointee.n_fields) {
        let field = descriptor.pointer.pointee.fields[index]
        guard field.type == PROTOBUF_C_TYPE_STRING, field.label != PROTOBUF_C_LABEL_REPEATED,
            field.flags & UInt32(PROTOBUF_C_FIELD_FLAG_ONEOF.rawValue) == 0
        else { continue }
        result.append((field.id, String(cString: field.name)))
    }
    return result
}

func checkFidelity<Message: ProtobufMessage>(
    _ type: Message.Type, _ wire: ArraySlice<UInt8>, descriptor: MessageDescriptor
) {
    guard let scanned = scanWire(wire), let value = try? Message(serializedBytes: Array(wire)) else { return }
    let properties = Dictionary(
        Mirror(reflecting: value).children.compactMap { child in child.label.map { ($0, child.value) } },
        uniquingKeysWith: { first, _ in first })
    for (number, name) in singularStringFields(descriptor) {
        guard let last = scanned.last(where: { $0.number == UInt64(number) }), last.wireType == 2 else { continue }
        guard let decoded = properties[FieldName.swiftName(forProtoName: name)] as? String else {
            return require(false, "\(name) decoded to something other than a string")
        }
        require(
            decoded.utf8.elementsEqual(last.payload),
            "\(descriptor.fullName).\(name) is not the bytes on the wire (\(last.payload.count) bytes, decoded \(decoded.utf8.count))"
        )
    }
}

func equalValues<T: Equatable>(_ lhs: T, _ rhs: Any) -> Bool { lhs == (rhs as? T) }

func checkRoundTrip<Message: ProtobufMessage>(_ type: Message.Type, _ wire: ArraySlice<UInt8>) {
    guard let value = try? Message(serializedBytes: Array(wire)) else { return }
    let encoded: [UInt8]
    do {
        encoded = try value.serializedBytes()
    } catch {
        return require(false, "a decoded \(Message.protobufName) does not encode: \(error)")
    }
    guard let again = try? Message(serializedBytes: encoded) else {
        return require(false, "a re-encoded \(Message.protobufName) does not decode")
    }
    if let equatable = value as? any Equatable {
        require(equalValues(equatable, again), "\(Message.protobufName) changed in a round trip")
    }
    require((try? again.serializedBytes()) == encoded, "\(Message.protobufName) encoding is not a fixed point")
    if let descriptor = try? MessageDescriptor.named(Message.protobufName) {
        require(
            CMessageCodec.protobufCRepack(encoded, descriptor: descriptor) == encoded,
            "\(Message.protobufName) encodes differently from protobuf-c's pack")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func protobufFuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let type = AllMessages.types[Int(input[0]) % AllMessages.types.count]
    let wire = input[1...]
    checkRoundTrip(type, wire)
    if let descriptor = try? MessageDescriptor.named(type.protobufName) {
        checkFidelity(type, wire, descriptor: descriptor)
    }
    return 0
}
