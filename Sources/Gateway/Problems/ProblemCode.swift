import HTTPServer

/// The stable machine-readable codes of the public API (the payment codes
/// plus the gateway's own), each with its HTTP status, title and whether the
/// app may resubmit the same transaction later (`retryable`: never a reason
/// to start a new purchase). Listed for the app, with what to do about each,
/// in docs/protocols/common/http-error-codes.md (a test keeps them equal).
public enum ProblemCode: String, Sendable, CaseIterable {
    case paymentProductNotFound = "PAYMENT_PRODUCT_NOT_FOUND"
    case paymentProductMismatch = "PAYMENT_PRODUCT_MISMATCH"
    case paymentTransactionInvalid = "PAYMENT_TRANSACTION_INVALID"
    case paymentTransactionRevoked = "PAYMENT_TRANSACTION_REVOKED"
    case paymentTransactionConflict = "PAYMENT_TRANSACTION_CONFLICT"
    case paymentStarterPackIneligible = "PAYMENT_STARTER_PACK_INELIGIBLE"
    /// A verified Sandbox/TestFlight purchase this deployment does not credit
    /// (it accepts Production and the user is not on its Sandbox allow-list).
    case paymentEnvironmentNotAllowed = "PAYMENT_ENVIRONMENT_NOT_ALLOWED"
    case paymentAppleUnavailable = "PAYMENT_APPLE_UNAVAILABLE"
    case paymentGrantFailed = "PAYMENT_GRANT_FAILED"
    /// A StoreKit 1 app receipt that does not read (not base64, truncated,
    /// not PKCS #7, past a bound); nothing was written.
    case paymentReceiptInvalid = "PAYMENT_RECEIPT_INVALID"
    /// The receipt route needs the App Store Server API, which this
    /// deployment has no key for. Not retryable: it changes with a
    /// deployment, not with time (the app keeps the receipt and stops).
    case paymentReceiptsUnavailable = "PAYMENT_RECEIPTS_UNAVAILABLE"
    case unauthenticated = "UNAUTHENTICATED"
    /// A body that is not well-formed for the route (400).
    case validationFailedMalformed = "VALIDATION_FAILED"
    /// A well-formed body whose values break the field rules (422).
    case validationFailedUnprocessable = "VALIDATION_FAILED_FIELDS"
    case notFound = "NOT_FOUND"
    case methodNotAllowed = "METHOD_NOT_ALLOWED"
    case unsupportedMediaType = "UNSUPPORTED_MEDIA_TYPE"
    case payloadTooLarge = "PAYLOAD_TOO_LARGE"
    case rateLimited = "RATE_LIMITED"
    case serviceUnavailable = "SERVICE_UNAVAILABLE"
    case internalError = "INTERNAL"
    // HTTP/1.1 framing failures the connection answers before routing.
    case requestTimeout = "REQUEST_TIMEOUT"
    case uriTooLong = "URI_TOO_LONG"
    case headerFieldsTooLarge = "HEADER_FIELDS_TOO_LARGE"
    case expectationFailed = "EXPECTATION_FAILED"
    case featureUnsupported = "NOT_IMPLEMENTED"
    case httpVersionNotSupported = "HTTP_VERSION_NOT_SUPPORTED"

    /// The `code` member sent to clients. Both validation cases send
    /// VALIDATION_FAILED; only the status (400 or 422) tells them apart.
    public var wireCode: String {
        self == .validationFailedUnprocessable ? "VALIDATION_FAILED" : rawValue
    }

    /// The HTTP status answered with this code.
    public var httpStatus: Int {
        switch self {
        case .paymentProductNotFound, .notFound: return 404
        case .paymentProductMismatch, .paymentTransactionInvalid, .validationFailedUnprocessable,
            .paymentReceiptInvalid:
            return 422
        case .paymentTransactionRevoked, .paymentTransactionConflict, .paymentStarterPackIneligible: return 409
        case .paymentEnvironmentNotAllowed: return 403
        case .paymentAppleUnavailable, .serviceUnavailable, .paymentReceiptsUnavailable: return 503
        case .paymentGrantFailed, .internalError: return 500
        case .unauthenticated: return 401
        case .validationFailedMalformed: return 400
        case .methodNotAllowed: return 405
        case .unsupportedMediaType: return 415
        case .payloadTooLarge: return 413
        case .rateLimited: return 429
        case .requestTimeout: return 408
        case .uriTooLong: return 414
        case .headerFieldsTooLarge: return 431
        case .expectationFailed: return 417
        case .featureUnsupported: return 501
        case .httpVersionNotSupported: return 505
        }
    }

    /// May the app resubmit the same request (the same StoreKit transaction)
    /// later with a chance of success? True means "keep the transaction
    /// unfinished and retry", never "buy again". Unknown failures say true:
    /// finishing a paid transaction on a transient error would lose credits.
    public var retryable: Bool {
        switch self {
        case .paymentAppleUnavailable, .paymentGrantFailed, .rateLimited, .serviceUnavailable, .internalError,
            .requestTimeout:
            return true
        // After the app refreshes its token, the same submission can succeed.
        case .unauthenticated:
            return true
        case .paymentProductNotFound, .paymentProductMismatch, .paymentTransactionInvalid,
            .paymentTransactionRevoked, .paymentTransactionConflict, .paymentStarterPackIneligible,
            .paymentEnvironmentNotAllowed, .paymentReceiptInvalid, .paymentReceiptsUnavailable,
            .validationFailedMalformed, .validationFailedUnprocessable, .notFound, .methodNotAllowed,
            .unsupportedMediaType, .payloadTooLarge, .uriTooLong, .headerFieldsTooLarge, .expectationFailed,
            .featureUnsupported, .httpVersionNotSupported:
            return false
        }
    }

    /// The `Retry-After` (seconds) a problem with this code carries unless
    /// it sets its own: every retryable 429 and 503 has one, so the app and
    /// any proxy back off; nothing else has.
    public var retryAfterSeconds: Int64? {
        guard retryable else { return nil }
        switch httpStatus {
        case 429: return GatewayLimits.rateLimitedRetryAfterSeconds
        case 503: return GatewayLimits.unavailableRetryAfterSeconds
        default: return nil
        }
    }

    /// A short, stable human summary (RFC 9457 `title`).
    public var title: String {
        switch self {
        case .paymentProductNotFound: return "Product not found"
        case .paymentProductMismatch: return "Product does not match the transaction"
        case .paymentTransactionInvalid: return "Transaction is invalid"
        case .paymentTransactionRevoked: return "Transaction was refunded or revoked"
        case .paymentTransactionConflict: return "Transaction conflicts with an earlier one"
        case .paymentStarterPackIneligible: return "Starter pack already purchased"
        case .paymentEnvironmentNotAllowed: return "Sandbox/TestFlight purchases are not credited by this deployment"
        case .paymentAppleUnavailable: return "Apple is unavailable"
        case .paymentGrantFailed: return "Credits could not be granted yet"
        case .paymentReceiptInvalid: return "App receipt is invalid"
        case .paymentReceiptsUnavailable: return "App receipts are not accepted by this deployment"
        case .unauthenticated: return "Authentication required"
        case .validationFailedMalformed: return "Request is malformed"
        case .validationFailedUnprocessable: return "Request failed validation"
        case .notFound: return "Not found"
        case .methodNotAllowed: return "Method not allowed"
        case .unsupportedMediaType: return "Unsupported media type"
        case .payloadTooLarge: return "Payload too large"
        case .rateLimited: return "Too many requests"
        case .serviceUnavailable: return "Service unavailable"
        case .internalError: return "Internal error"
        case .requestTimeout: return "Request timeout"
        case .uriTooLong: return "Request target too long"
        case .headerFieldsTooLarge: return "Header fields too large"
        case .expectationFailed: return "Expectation failed"
        case .featureUnsupported: return "Not implemented"
        case .httpVersionNotSupported: return "HTTP version not supported"
        }
    }

    /// The RFC 9457 `type`: an absolute URN, one per case (so the 400 and 422
    /// validation problems have distinct types).
    public var typeURI: String {
        "urn:iap-credits:problem:" + rawValue.lowercasedASCII.replacingUnderscoresWithHyphens
    }
}

extension String {
    fileprivate var replacingUnderscoresWithHyphens: String {
        String(map { $0 == "_" ? "-" : $0 })
    }
}
