import Foundation
import StrictJSON

/// Typed, strict access to the members of a JSON object. Absent and `null`
/// members read as nil; a member of the wrong JSON type (e.g. a number sent
/// as a string) is an `invalidPayload` failure, never silently coerced.
struct PayloadReader {
    private let members: [String: JSONValue]

    init(_ value: JSONValue, context: String) throws(VerificationFailure) {
        guard case .object(let object) = value else {
            throw .invalidPayload(reason: "\(context) is not a JSON object")
        }
        var members: [String: JSONValue] = [:]
        members.reserveCapacity(object.count)
        for member in object.members { members[member.key] = member.value }
        self.members = members
    }

    private func present(_ key: String) -> JSONValue? {
        guard let value = members[key], value != .null else { return nil }
        return value
    }

    func string(_ key: String) throws(VerificationFailure) -> String? {
        guard let value = present(key) else { return nil }
        guard case .string(let text) = value else { throw .invalidPayload(reason: "\(key) is not a string") }
        return text
    }

    func bool(_ key: String) throws(VerificationFailure) -> Bool? {
        guard let value = present(key) else { return nil }
        guard case .bool(let flag) = value else { throw .invalidPayload(reason: "\(key) is not a boolean") }
        return flag
    }

    /// An exact integer. Integral-valued fractions (`1698148900000.0`) are
    /// accepted because Apple's servers sometimes emit them; other fractions,
    /// values beyond 2^53 written as fractions, and strings are refused.
    func int64(_ key: String) throws(VerificationFailure) -> Int64? {
        guard let value = present(key) else { return nil }
        guard case .number(let number) = value else { throw .invalidPayload(reason: "\(key) is not a number") }
        guard let number = Self.exactInteger(number.text) else {
            throw .invalidPayload(reason: "\(key) is not an integer")
        }
        return number
    }

    func int32(_ key: String) throws(VerificationFailure) -> Int32? {
        guard let number = try int64(key) else { return nil }
        guard let narrowed = Int32(exactly: number) else { throw .invalidPayload(reason: "\(key) out of range") }
        return narrowed
    }

    func timestamp(_ key: String) throws(VerificationFailure) -> AppStoreTimestamp? {
        guard let milliseconds = try int64(key) else { return nil }
        return AppStoreTimestamp(millisecondsSince1970: milliseconds)
    }

    func uuid(_ key: String) throws(VerificationFailure) -> UUID? {
        guard let text = try string(key), !text.isEmpty else { return nil }
        guard let uuid = UUID(uuidString: text) else { throw .invalidPayload(reason: "\(key) is not a UUID") }
        return uuid
    }

    func object(_ key: String) throws(VerificationFailure) -> PayloadReader? {
        guard let value = present(key) else { return nil }
        return try PayloadReader(value, context: key)
    }

    func rawValue<T: RawRepresentable>(_ key: String, as type: T.Type) throws(VerificationFailure) -> T?
    where T.RawValue == String {
        guard let text = try string(key) else { return nil }
        return T(rawValue: text)
    }

    func intRawValue<T: RawRepresentable>(_ key: String, as type: T.Type) throws(VerificationFailure) -> T?
    where T.RawValue == Int32 {
        guard let number = try int32(key) else { return nil }
        return T(rawValue: number)
    }

    func stringArray(_ key: String) throws(VerificationFailure) -> [String]? {
        guard let value = present(key) else { return nil }
        guard case .array(let elements) = value else { throw .invalidPayload(reason: "\(key) is not an array") }
        var result: [String] = []
        for element in elements {
            guard case .string(let text) = element else { throw .invalidPayload(reason: "\(key) holds a non-string") }
            result.append(text)
        }
        return result
    }

    func require<T>(_ value: T?, _ key: String) throws(VerificationFailure) -> T {
        guard let value else { throw .invalidPayload(reason: "missing \(key)") }
        return value
    }

    /// Parses JSON number text as an exact Int64.
    static func exactInteger(_ text: String) -> Int64? {
        if !text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) {
            return Int64(text)
        }
        guard let double = Double(text), double.isFinite, double.rounded(.towardZero) == double,
              abs(double) <= 9_007_199_254_740_992 else { return nil }
        return Int64(double)
    }
}
