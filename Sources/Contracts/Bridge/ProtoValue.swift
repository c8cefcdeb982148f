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
        var result = ""
        result.reserveCapacity(name.utf8.count + 4)
        for character in name {
            if character.isUppercase {
                result.append("_")
                result.append(contentsOf: character.lowercased())
            } else {
                result.append(character)
            }
        }
        return result
    }
}
