/// Apple's `errorCode` in an error body (`{"errorCode": 4040010,
/// "errorMessage": "..."}`, App Store Server API "Error codes"). A struct of
/// `static let`s so unknown codes still round-trip. Listed: the codes this
/// client's callers act on.
public struct APIErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }

    // 400
    public static let generalBadRequest = APIErrorCode(rawValue: 4_000_000)
    public static let invalidAppIdentifier = APIErrorCode(rawValue: 4_000_002)
    public static let invalidRequestRevision = APIErrorCode(rawValue: 4_000_005)
    public static let invalidTransactionId = APIErrorCode(rawValue: 4_000_006)
    public static let invalidOriginalTransactionId = APIErrorCode(rawValue: 4_000_008)
    public static let startDateTooFarInPast = APIErrorCode(rawValue: 4_000_012)
    public static let startDateAfterEndDate = APIErrorCode(rawValue: 4_000_013)
    public static let invalidPaginationToken = APIErrorCode(rawValue: 4_000_014)
    public static let invalidStartDate = APIErrorCode(rawValue: 4_000_015)
    public static let invalidEndDate = APIErrorCode(rawValue: 4_000_016)
    public static let paginationTokenExpired = APIErrorCode(rawValue: 4_000_017)
    public static let invalidNotificationType = APIErrorCode(rawValue: 4_000_018)
    public static let multipleFiltersSupplied = APIErrorCode(rawValue: 4_000_019)
    public static let invalidTestNotificationToken = APIErrorCode(rawValue: 4_000_020)
    public static let invalidProductType = APIErrorCode(rawValue: 4_000_022)
    public static let invalidRevoked = APIErrorCode(rawValue: 4_000_030)
    public static let invalidCustomerConsented = APIErrorCode(rawValue: 4_000_035)
    public static let invalidDeliveryStatus = APIErrorCode(rawValue: 4_000_036)
    public static let invalidSampleContentProvided = APIErrorCode(rawValue: 4_000_041)
    public static let invalidAppAccountTokenUUID = APIErrorCode(rawValue: 4_000_183)
    public static let transactionIdIsNotOriginalTransactionId = APIErrorCode(rawValue: 4_000_187)
    // 404
    public static let accountNotFound = APIErrorCode(rawValue: 4_040_001)
    public static let accountNotFoundRetryable = APIErrorCode(rawValue: 4_040_002)
    public static let appNotFound = APIErrorCode(rawValue: 4_040_003)
    public static let appNotFoundRetryable = APIErrorCode(rawValue: 4_040_004)
    public static let originalTransactionIdNotFound = APIErrorCode(rawValue: 4_040_005)
    public static let originalTransactionIdNotFoundRetryable = APIErrorCode(rawValue: 4_040_006)
    public static let serverNotificationURLNotFound = APIErrorCode(rawValue: 4_040_007)
    public static let testNotificationNotFound = APIErrorCode(rawValue: 4_040_008)
    /// TransactionIdNotFoundError: not in this environment for this bundle id.
    public static let transactionIdNotFound = APIErrorCode(rawValue: 4_040_010)
    public static let appTransactionDoesNotExist = APIErrorCode(rawValue: 4_040_019)
    // 429
    public static let rateLimitExceeded = APIErrorCode(rawValue: 4_290_000)
    // 500
    public static let generalInternal = APIErrorCode(rawValue: 5_000_000)
    public static let generalInternalRetryable = APIErrorCode(rawValue: 5_000_001)

    /// Apple's "...RetryableError" codes: the same request may succeed later.
    public var isRetryable: Bool {
        self == .accountNotFoundRetryable || self == .appNotFoundRetryable
            || self == .originalTransactionIdNotFoundRetryable || self == .generalInternalRetryable
            || self == .rateLimitExceeded
    }

    public var description: String { String(rawValue) }
}
