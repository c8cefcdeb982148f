import StrictJSON

/// Why a request body was refused, naming the field at fault. Structural
/// faults answer 400, rule violations on well-formed values 422, an
/// oversized body 413 and a non-JSON media type 415.
public struct ValidationError: Error, Sendable, Equatable {
    /// What is wrong, stable for tests and logs.
    public enum Reason: Sendable, Equatable {
        case bodyTooLarge
        /// The body is not declared as `application/json` (415).
        case unsupportedMediaType
        case malformedJSON(JSONParseError.Kind)
        case notAnObject
        case missingField
        case unknownField
        case wrongType(expected: String)
        case tooLong(maximumBytes: Int)
        case invalidFormat(rule: String)
    }

    /// The JSON member name, or nil for whole-body faults.
    public let field: String?
    public let reason: Reason

    public init(field: String?, reason: Reason) {
        self.field = field
        self.reason = reason
    }

    /// The problem answered for this error; the detail never echoes values.
    public var problem: Problem {
        switch reason {
        case .bodyTooLarge:
            return Problem(
                .payloadTooLarge, detail: "The request body exceeds \(GatewayLimits.requestBodyBytesMax) bytes.")
        case .unsupportedMediaType:
            return Problem(.unsupportedMediaType, detail: "Send Content-Type: application/json (UTF-8).")
        case .malformedJSON(let kind):
            return Problem(.validationFailedMalformed, detail: "The body is not valid JSON (\(kind)).")
        case .notAnObject:
            return Problem(.validationFailedMalformed, detail: "The body must be a JSON object.")
        case .missingField:
            return Problem(.validationFailedMalformed, detail: "A required field is missing.", field: field)
        case .unknownField:
            return Problem(.validationFailedMalformed, detail: "The field is not part of this request.", field: field)
        case .wrongType(let expected):
            return Problem(.validationFailedMalformed, detail: "The field must be a \(expected).", field: field)
        case .tooLong(let maximumBytes):
            return Problem(
                .validationFailedUnprocessable, detail: "The field exceeds \(maximumBytes) bytes.", field: field)
        case .invalidFormat(let rule):
            return Problem(.validationFailedUnprocessable, detail: "The field must match \(rule).", field: field)
        }
    }
}
