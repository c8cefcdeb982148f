/// The `code` member of a gateway problem (RFC 9457), one case per code the
/// gateway can answer (docs/openapi.yaml), plus `unrecognized` so a code the
/// gateway adds later still decodes. An unrecognized code is handled as
/// "keep the transaction, retry later": never a reason to finish it.
///
/// VALIDATION_FAILED is one code for two statuses (400 malformed, 422 field
/// rules); the status stays on `GatewayProblem`.
public enum ProblemCode: Sendable, Hashable, CustomStringConvertible {
    case paymentProductNotFound
    case paymentProductMismatch
    case paymentTransactionInvalid
    case paymentTransactionRevoked
    case paymentTransactionConflict
    case paymentStarterPackIneligible
    /// A Sandbox/TestFlight (or other non-production) purchase this deployment does not credit.
    case paymentEnvironmentNotAllowed
    case paymentAppleUnavailable
    case paymentGrantFailed
    /// The StoreKit 1 receipt route's: the receipt does not read (this
    /// library submits StoreKit 2 transactions; known so it never retries).
    case paymentReceiptInvalid
    /// The StoreKit 1 receipt route is off in this deployment (not retryable).
    case paymentReceiptsUnavailable
    case unauthenticated
    case validationFailed
    case notFound
    case methodNotAllowed
    case unsupportedMediaType
    case payloadTooLarge
    case rateLimited
    case serviceUnavailable
    case internalError
    case requestTimeout
    case uriTooLong
    case headerFieldsTooLarge
    case expectationFailed
    case notImplemented
    case httpVersionNotSupported
    /// A code this version of the library does not know (kept verbatim).
    case unrecognized(String)

    /// Every code this library knows, in the order of docs/openapi.yaml.
    public static let allKnown: [ProblemCode] = [
        .paymentProductNotFound, .paymentProductMismatch, .paymentTransactionInvalid, .paymentTransactionRevoked,
        .paymentTransactionConflict, .paymentStarterPackIneligible, .paymentEnvironmentNotAllowed,
        .paymentAppleUnavailable, .paymentGrantFailed, .paymentReceiptInvalid, .paymentReceiptsUnavailable,
        .unauthenticated, .validationFailed, .notFound,
        .methodNotAllowed, .unsupportedMediaType, .payloadTooLarge, .rateLimited, .serviceUnavailable,
        .internalError, .requestTimeout, .uriTooLong, .headerFieldsTooLarge, .expectationFailed, .notImplemented,
        .httpVersionNotSupported,
    ]

    private static let byWireCode: [String: ProblemCode] = Dictionary(
        uniqueKeysWithValues: allKnown.map { ($0.wireCode, $0) })

    /// The code for a wire text; unknown texts become `unrecognized`.
    public init(wireCode: String) {
        self = Self.byWireCode[wireCode] ?? .unrecognized(wireCode)
    }

    /// The text the gateway sends in `code`.
    public var wireCode: String {
        switch self {
        case .paymentProductNotFound: "PAYMENT_PRODUCT_NOT_FOUND"
        case .paymentProductMismatch: "PAYMENT_PRODUCT_MISMATCH"
        case .paymentTransactionInvalid: "PAYMENT_TRANSACTION_INVALID"
        case .paymentTransactionRevoked: "PAYMENT_TRANSACTION_REVOKED"
        case .paymentTransactionConflict: "PAYMENT_TRANSACTION_CONFLICT"
        case .paymentStarterPackIneligible: "PAYMENT_STARTER_PACK_INELIGIBLE"
        case .paymentEnvironmentNotAllowed: "PAYMENT_ENVIRONMENT_NOT_ALLOWED"
        case .paymentAppleUnavailable: "PAYMENT_APPLE_UNAVAILABLE"
        case .paymentGrantFailed: "PAYMENT_GRANT_FAILED"
        case .paymentReceiptInvalid: "PAYMENT_RECEIPT_INVALID"
        case .paymentReceiptsUnavailable: "PAYMENT_RECEIPTS_UNAVAILABLE"
        case .unauthenticated: "UNAUTHENTICATED"
        case .validationFailed: "VALIDATION_FAILED"
        case .notFound: "NOT_FOUND"
        case .methodNotAllowed: "METHOD_NOT_ALLOWED"
        case .unsupportedMediaType: "UNSUPPORTED_MEDIA_TYPE"
        case .payloadTooLarge: "PAYLOAD_TOO_LARGE"
        case .rateLimited: "RATE_LIMITED"
        case .serviceUnavailable: "SERVICE_UNAVAILABLE"
        case .internalError: "INTERNAL"
        case .requestTimeout: "REQUEST_TIMEOUT"
        case .uriTooLong: "URI_TOO_LONG"
        case .headerFieldsTooLarge: "HEADER_FIELDS_TOO_LARGE"
        case .expectationFailed: "EXPECTATION_FAILED"
        case .notImplemented: "NOT_IMPLEMENTED"
        case .httpVersionNotSupported: "HTTP_VERSION_NOT_SUPPORTED"
        case .unrecognized(let text): text
        }
    }

    public var isKnown: Bool {
        if case .unrecognized = self { return false }
        return true
    }

    public var description: String { wireCode }
}
