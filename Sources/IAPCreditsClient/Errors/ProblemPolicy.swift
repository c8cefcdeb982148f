/// The one table of what each problem code means to the app: the fate of
/// the StoreKit transaction when a verify answers it, and the advice shown
/// to the user. Exhaustive: a new case does not compile until it is placed.
///
/// | code | status | transaction | advice |
/// |---|---|---|---|
/// | PAYMENT_TRANSACTION_REVOKED | 409 | finish (Apple refunded or revoked it; nothing will ever be credited) | nothing to do |
/// | PAYMENT_APPLE_UNAVAILABLE, PAYMENT_GRANT_FAILED, SERVICE_UNAVAILABLE, INTERNAL, RATE_LIMITED, REQUEST_TIMEOUT, UNAUTHENTICATED | 503, 500, 503, 500, 429, 408, 401 | keep, retry with backoff | retry later |
/// | PAYMENT_PRODUCT_NOT_FOUND, PAYMENT_PRODUCT_MISMATCH, PAYMENT_TRANSACTION_INVALID, PAYMENT_TRANSACTION_CONFLICT, PAYMENT_STARTER_PACK_INELIGIBLE | 404, 422, 422, 409, 409 | keep, report | contact support |
/// | PAYMENT_RECEIPT_INVALID, PAYMENT_RECEIPTS_UNAVAILABLE | 422, 503 | keep, report (the StoreKit 1 receipt route's; never answered to this library's StoreKit 2 submissions) | contact support |
/// | PAYMENT_ENVIRONMENT_NOT_ALLOWED | 403 | keep, report | nothing to do (a test purchase; no money was taken) |
/// | VALIDATION_FAILED, NOT_FOUND, METHOD_NOT_ALLOWED, UNSUPPORTED_MEDIA_TYPE, PAYLOAD_TOO_LARGE, URI_TOO_LONG, HEADER_FIELDS_TOO_LARGE, EXPECTATION_FAILED, NOT_IMPLEMENTED, HTTP_VERSION_NOT_SUPPORTED | 400/422, 404, 405, 415, 413, 414, 431, 417, 501, 505 | keep, report (the app and the gateway disagree: a bug or a misconfigured deployment, not a judgement of the purchase) | contact support |
/// | any code this library does not know | — | keep, retry with backoff | retry later |
public struct ProblemPolicy: Sendable, Hashable {
    public let disposition: TransactionDisposition
    public let advice: RecoveryAdvice

    public init(disposition: TransactionDisposition, advice: RecoveryAdvice) {
        self.disposition = disposition
        self.advice = advice
    }

    static let retry = ProblemPolicy(disposition: .keepAndRetry, advice: .retryLater)
    static let support = ProblemPolicy(disposition: .keepAndReport, advice: .contactSupport)
}

extension ProblemCode {
    /// Whether this answer means the app's package list is out of date
    /// (the new user pack already bought by this email identity, a product
    /// the catalog no longer sells as the app thinks): the client refreshes
    /// it, so the offer is hidden before the user pays for it again
    /// (docs/protocols/payments/apple-iap-protocol.md 4.2).
    public var meansOffersChanged: Bool {
        switch self {
        case .paymentStarterPackIneligible, .paymentProductNotFound, .paymentProductMismatch: true
        default: false
        }
    }

    /// This code's row of the table above.
    public var policy: ProblemPolicy {
        switch self {
        case .paymentTransactionRevoked:
            return ProblemPolicy(disposition: .finish, advice: .nothingToDo)
        // Verified and kept by the backend, or not judged at all: the same
        // transaction resubmitted later can be credited.
        case .paymentAppleUnavailable, .paymentGrantFailed, .serviceUnavailable, .internalError, .rateLimited,
            .requestTimeout, .unauthenticated:
            return .retry
        // Judged and refused: paid but not credited, so never finished silently.
        case .paymentProductNotFound, .paymentProductMismatch, .paymentTransactionInvalid,
            .paymentTransactionConflict, .paymentStarterPackIneligible, .paymentReceiptInvalid,
            .paymentReceiptsUnavailable:
            return .support
        case .paymentEnvironmentNotAllowed:
            return ProblemPolicy(disposition: .keepAndReport, advice: .nothingToDo)
        case .validationFailed, .notFound, .methodNotAllowed, .unsupportedMediaType, .payloadTooLarge, .uriTooLong,
            .headerFieldsTooLarge, .expectationFailed, .notImplemented, .httpVersionNotSupported:
            return .support
        // Unknown: the safe side is to keep the transaction and try again.
        case .unrecognized:
            return .retry
        }
    }
}
