/// The intermediate, C-free form of a message between Swift's `Codable` and
/// protobuf-c: field values keyed by proto field name.
enum ProtoValue: Equatable {
    case int(Int64)
    case uint(UInt64)
    case double(Double)
    case bool(Bool)
    case string(String)
    case bytes([UInt8])
    case message(ProtoFields)
    case list([ProtoValue])
}

/// A message's fields keyed by proto field name (snake_case).
typealias ProtoFields = [String: ProtoValue]

/// Swift property names (camelCase) to proto field names (snake_case).
enum FieldName {
    static func protoName(forSwiftName name: String) -> String {
        // Byte-wise: Swift property names of messages are ASCII, and this
        // runs for every field of every message encoded or decoded.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(name.utf8.count + 4)
        for byte in name.utf8 {
            if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") {
                bytes.append(UInt8(ascii: "_"))
                bytes.append(byte + 32)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
