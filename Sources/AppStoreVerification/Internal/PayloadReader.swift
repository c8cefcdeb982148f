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
        guard AppStoreTimestamp.payloadRange.contains(milliseconds) else {
            throw .invalidPayload(reason: "\(key) is outside 1970...9999")
        }
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

    /// Parses JSON number text as an exact Int64: a fraction or exponent is
    /// allowed when the value is still a whole number (`1.0`, `15e2`),
    /// decided on the decimal digits themselves, never through a Double
    /// (which would read `0.99999999999999999999` as 1).
    static func exactInteger(_ text: String) -> Int64? {
        var bytes = Substring(text).utf8[...]
        let negative = bytes.first == UInt8(ascii: "-")
        if negative { bytes = bytes.dropFirst() }
        var digits: [UInt8] = []
        var pointAt: Int?
        var exponent = 0
        while let byte = bytes.popFirst() {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                guard digits.count < exactIntegerDigitsMax else { return nil }
                digits.append(byte)
            case UInt8(ascii: ".") where pointAt == nil && !digits.isEmpty:
                pointAt = digits.count
            case UInt8(ascii: "e"), UInt8(ascii: "E"):
                guard !digits.isEmpty, let parsed = exactExponent(bytes) else { return nil }
                exponent = parsed
                bytes = bytes[bytes.endIndex...]
            default:
                return nil
            }
        }
        guard !digits.isEmpty else { return nil }
        // The value is digits × 10^(exponent - digits after the point).
        let scale = exponent - (digits.count - (pointAt ?? digits.count))
        var whole = digits
        if scale < 0 {
            let fractionCount = min(-scale, whole.count)
            guard whole.suffix(fractionCount).allSatisfy({ $0 == UInt8(ascii: "0") }) else { return nil }
            whole.removeLast(fractionCount)
        } else if scale > 0 {
            guard whole.contains(where: { $0 != UInt8(ascii: "0") }) else { return 0 }
            guard scale <= 19 else { return nil }
            whole.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: scale))
        }
        let magnitude = whole.drop { $0 == UInt8(ascii: "0") }
        guard magnitude.count <= 19 else { return nil }
        var value: Int64 = 0
        for digit in magnitude {
            // Accumulated negatively, so Int64.min is reachable.
            let (shifted, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (next, overflowB) = shifted.subtractingReportingOverflow(Int64(digit - UInt8(ascii: "0")))
            guard !overflowA, !overflowB else { return nil }
            value = next
        }
        if negative { return value }
        return value == Int64.min ? nil : -value
    }

    /// The most digits `exactInteger` reads (a JSON number's mantissa).
    private static let exactIntegerDigitsMax = 64

    /// An exponent's text (`+12`, `-3`, `7`), or nil when it is not one or
    /// its magnitude passes 999 (no Int64 needs more than 19 either way,
    /// beyond a mantissa's `exactIntegerDigitsMax` digits).
    private static func exactExponent(_ text: Substring.UTF8View.SubSequence) -> Int? {
        var rest = text
        var sign = 1
        if rest.first == UInt8(ascii: "+") || rest.first == UInt8(ascii: "-") {
            sign = rest.first == UInt8(ascii: "-") ? -1 : 1
            rest = rest.dropFirst()
        }
        guard !rest.isEmpty, rest.count <= 3,
            rest.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { return nil }
        return sign * rest.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    }
}
