/// A parsed JSON document. Objects keep their members in document order and
/// never hold a key twice (the strict parser rejects duplicates).
public enum JSONValue: Sendable, Equatable {
    case object(JSONObject)
    case array([JSONValue])
    case string(String)
    case number(JSONNumber)
    case bool(Bool)
    case null

    /// The JSON type's name, for error messages ("object", "string", ...).
    public var typeName: String {
        switch self {
        case .object: return "object"
        case .array: return "array"
        case .string: return "string"
        case .number: return "number"
        case .bool: return "boolean"
        case .null: return "null"
        }
    }

    /// The member named `key` when this is an object; nil otherwise.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let object) = self else { return nil }
        return object[key]
    }

    /// A number value from an integer.
    public static func integer(_ value: Int64) -> JSONValue {
        .number(JSONNumber(integer: value))
    }
}
