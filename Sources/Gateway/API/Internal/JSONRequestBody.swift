import StrictJSON

/// Strict decoding of a JSON request body into an object whose members are
/// read one by one; whatever is left unread is an unknown field.
struct JSONRequestBody {
    private let object: JSONObject
    private var readKeys: Set<String> = []

    /// Parses `body` (at most the route's body limit) as one JSON object.
    init(_ body: [UInt8], bytesMax: Int = GatewayLimits.requestBodyBytesMax) throws(ValidationError) {
        if body.count > bytesMax { throw ValidationError(field: nil, reason: .bodyTooLarge) }
        let value: JSONValue
        do {
            value = try StrictJSONParser(
                documentBytesMax: bytesMax, depthMax: GatewayLimits.jsonDepthMax
            ).parse(body)
        } catch {
            throw ValidationError(field: nil, reason: .malformedJSON(error.kind))
        }
        guard case .object(let object) = value else { throw ValidationError(field: nil, reason: .notAnObject) }
        self.object = object
    }

    /// Fails on the first member (in document order) outside `allowed`,
    /// named by `GatewayLimits.echoedFieldName` (the problem's `field`).
    /// Keys are compared byte for byte, as the parser compares them: never
    /// through String's Unicode equivalence, which normalizes the client's
    /// text first.
    func rejectUnknownFields(allowed: Set<String>) throws(ValidationError) {
        if let unknown = object.keys.first(where: { key in !allowed.contains { $0.utf8.elementsEqual(key.utf8) } }) {
            throw ValidationError(field: GatewayLimits.echoedFieldName(unknown), reason: .unknownField)
        }
    }

    /// A required string member.
    func requiredString(_ name: String) throws(ValidationError) -> String {
        guard let value = object[name] else { throw ValidationError(field: name, reason: .missingField) }
        guard case .string(let text) = value else {
            throw ValidationError(field: name, reason: .wrongType(expected: "string"))
        }
        return text
    }

    /// A required boolean member.
    func requiredBool(_ name: String) throws(ValidationError) -> Bool {
        guard let value = object[name] else { throw ValidationError(field: name, reason: .missingField) }
        guard case .bool(let flag) = value else {
            throw ValidationError(field: name, reason: .wrongType(expected: "boolean"))
        }
        return flag
    }

    /// An optional string member; absent and null both mean nil.
    func optionalString(_ name: String) throws(ValidationError) -> String? {
        guard let value = object[name] else { return nil }
        switch value {
        case .null: return nil
        case .string(let text): return text
        default: throw ValidationError(field: name, reason: .wrongType(expected: "string"))
        }
    }
}
