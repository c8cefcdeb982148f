import StrictJSON

/// Reads the members of a JSON object answer, refusing wrong types as
/// `invalidResponse` (naming the member, never quoting signed data).
/// Unknown members are ignored: Apple adds fields over time.
struct ResponseReader {
    private let object: JSONObject
    private let what: String

    init(_ value: JSONValue, what: String) throws(AppStoreServerAPIError) {
        guard case .object(let object) = value else { throw Self.invalid("\(what) is not a JSON object") }
        self.object = object
        self.what = what
    }

    static func invalid(_ detail: String) -> AppStoreServerAPIError {
        AppStoreServerAPIError(kind: .invalidResponse, detail: detail)
    }

    func string(_ key: String) throws(AppStoreServerAPIError) -> String? {
        switch object[key] {
        case nil, .null?: return nil
        case .string(let text)?: return text
        default: throw Self.invalid("\(what).\(key) is not a string")
        }
    }

    func requiredString(_ key: String) throws(AppStoreServerAPIError) -> String {
        guard let text = try string(key), !text.isEmpty else { throw Self.invalid("\(what).\(key) is missing") }
        return text
    }

    func bool(_ key: String) throws(AppStoreServerAPIError) -> Bool? {
        switch object[key] {
        case nil, .null?: return nil
        case .bool(let flag)?: return flag
        default: throw Self.invalid("\(what).\(key) is not a boolean")
        }
    }

    func int64(_ key: String) throws(AppStoreServerAPIError) -> Int64? {
        switch object[key] {
        case nil, .null?: return nil
        case .number(let number)?:
            guard let value = number.int64Value else { throw Self.invalid("\(what).\(key) is not an integer") }
            return value
        default: throw Self.invalid("\(what).\(key) is not a number")
        }
    }

    func array(_ key: String) throws(AppStoreServerAPIError) -> [JSONValue] {
        switch object[key] {
        case nil, .null?: return []
        case .array(let elements)?: return elements
        default: throw Self.invalid("\(what).\(key) is not an array")
        }
    }

    func strings(_ key: String) throws(AppStoreServerAPIError) -> [String] {
        var result: [String] = []
        for element in try array(key) {
            guard case .string(let text) = element else { throw Self.invalid("\(what).\(key) holds a non-string") }
            result.append(text)
        }
        return result
    }
}
