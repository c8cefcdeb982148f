// Swift faces of Protos/payments/v1/payments.proto. One property per proto
// field (camelCase of the field name); field meanings are documented in the proto.

/// `payments.v1.VerifyTransactionRequest`.
public struct VerifyTransactionRequest: ProtobufMessage, Equatable {
    public static let protobufName = "payments.v1.VerifyTransactionRequest"
    public var userId = ""
    public var emailHash = ""
    public var productCode = ""
    public var appStoreProductId = ""
    public var transactionId = ""
    public var signedTransactionInfo = ""
    public var appAccountToken = ""
    public var emailMasked = ""
    public init() {}
}

/// `payments.v1.GrantOutcome`.
public struct GrantOutcome: ProtobufEnum {
    public var rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }
    public static let unspecified = Self(rawValue: 0)
    public static let granted = Self(rawValue: 1)
    public static let alreadyGranted = Self(rawValue: 2)
}

/// `payments.v1.VerifyTransactionResponse`.
public struct VerifyTransactionResponse: ProtobufMessage, Equatable {
    public static let protobufName = "payments.v1.VerifyTransactionResponse"
    public var outcome = GrantOutcome.unspecified
    public var productCode = ""
    public var transactionId = ""
    public var creditsAdded: Int64 = 0
    public var newBalance: Int64 = 0
    public var ledgerEventId = ""
    public init() {}
}

/// `payments.v1.TransactionStatus`: apple_iap_transactions.status.
public struct TransactionStatus: ProtobufEnum {
    public var rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }
    public static let unspecified = Self(rawValue: 0)
    public static let received = Self(rawValue: 1)
    public static let verified = Self(rawValue: 2)
    public static let granted = Self(rawValue: 3)
    public static let failed = Self(rawValue: 4)
    public static let refunded = Self(rawValue: 5)
    public static let refundedInsufficient = Self(rawValue: 6)
    public static let revoked = Self(rawValue: 7)
}

/// `payments.v1.Transaction`: one Apple transaction as recorded.
public struct Transaction: ProtobufMessage, Equatable {
    public static let protobufName = "payments.v1.Transaction"
    public var id = ""
    public var transactionId = ""
    public var originalTransactionId = ""
    public var userId = ""
    public var productCode = ""
    public var appStoreProductId = ""
    public var environment = ""
    public var status = TransactionStatus.unspecified
    public var credits: Int64 = 0
    public var purchaseDateUnixMs: Int64 = 0
    public var revocationDateUnixMs: Int64 = 0
    public var ledgerEventId = ""
    public var failureCode = ""
    public var overdueAmount: Int64 = 0
    public var createdAtUnixMs: Int64 = 0
    public var updatedAtUnixMs: Int64 = 0
    public var quantity: Int32 = 0
    public var creditsTakenBack: Int64 = 0
    public var revocationType = ""
    public var revocationPercentage: Int32 = 0
    public init() {}
}

/// `payments.v1.GetTransactionRequest`.
public struct GetTransactionRequest: ProtobufMessage, Equatable {
    public static let protobufName = "payments.v1.GetTransactionRequest"
    public var userId = ""
    public var transactionId = ""
    public init() {}
}

/// `payments.v1.GetTransactionResponse`.
public struct GetTransactionResponse: ProtobufMessage, Equatable {
    public static let protobufName = "payments.v1.GetTransactionResponse"
    public var transaction: Transaction?
    public init() {}
}

/// `payments.v1.HandleNotificationRequest`.
public struct HandleNotificationRequest: ProtobufMessage, Equatable {
    public static let protobufName = "payments.v1.HandleNotificationRequest"
    public var signedPayload = ""
    public init() {}
}

/// `payments.v1.HandleNotificationResponse`.
public struct HandleNotificationResponse: ProtobufMessage, Equatable {
    public static let protobufName = "payments.v1.HandleNotificationResponse"
    public var notificationUuid = ""
    public var notificationType = ""
    public var subtype = ""
    public var duplicate = false
    public var outcome = ""
    public init() {}
}

/// `payments.v1.GetAccountTokenRequest`.
public struct GetAccountTokenRequest: ProtobufMessage, Equatable {
    public static let protobufName = "payments.v1.GetAccountTokenRequest"
    public var userId = ""
    public init() {}
}

/// `payments.v1.GetAccountTokenResponse`.
public struct GetAccountTokenResponse: ProtobufMessage, Equatable {
    public static let protobufName = "payments.v1.GetAccountTokenResponse"
    public var appAccountToken = ""
    public init() {}
}

/// `payments.v1.ListTransactionsRequest`.
public struct ListTransactionsRequest: ProtobufMessage, Equatable {
    public static let protobufName = "payments.v1.ListTransactionsRequest"
    public var userId = ""
    public var pageSize: Int32 = 0
    public var pageToken = ""
    public init() {}
}

/// `payments.v1.ListTransactionsResponse`.
public struct ListTransactionsResponse: ProtobufMessage, Equatable {
    public static let protobufName = "payments.v1.ListTransactionsResponse"
    public var transactions: [Transaction] = []
    public var nextPageToken = ""
    public init() {}
}

/// `payments.v1.SetConsumptionConsentRequest`.
public struct SetConsumptionConsentRequest: ProtobufMessage, Equatable {
    public static let protobufName = "payments.v1.SetConsumptionConsentRequest"
    public var userId = ""
    public var consented = false
    public init() {}
}

/// `payments.v1.GetConsumptionConsentRequest`.
public struct GetConsumptionConsentRequest: ProtobufMessage, Equatable {
    public static let protobufName = "payments.v1.GetConsumptionConsentRequest"
    public var userId = ""
    public init() {}
}

/// `payments.v1.ConsumptionConsentResponse`: the stored consent.
public struct ConsumptionConsentResponse: ProtobufMessage, Equatable {
    public static let protobufName = "payments.v1.ConsumptionConsentResponse"
    public var consented = false
    public var recorded = false
    public init() {}
}

/// `payments.v1.VerifyReceiptRequest`: a StoreKit 1 app receipt to credit.
public struct VerifyReceiptRequest: ProtobufMessage, Equatable {
    public static let protobufName = "payments.v1.VerifyReceiptRequest"
    public var userId = ""
    public var emailHash = ""
    public var emailMasked = ""
    /// The base64 app receipt; never log it.
    public var receiptData = ""
    public init() {}
}

/// `payments.v1.ReceiptItemStatus`.
public struct ReceiptItemStatus: ProtobufEnum {
    public var rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }
    public static let unspecified = Self(rawValue: 0)
    public static let success = Self(rawValue: 1)
    public static let duplicate = Self(rawValue: 2)
    public static let failed = Self(rawValue: 3)
}

/// `payments.v1.ReceiptItemResult`: one transaction of a receipt.
public struct ReceiptItemResult: ProtobufMessage, Equatable {
    public static let protobufName = "payments.v1.ReceiptItemResult"
    public var status = ReceiptItemStatus.unspecified
    public var transactionId = ""
    public var productCode = ""
    public var creditsAdded: Int64 = 0
    public var errorGrpcCode: Int32 = 0
    public var errorReason = ""
    public var errorDetail = ""
    public init() {}
}

/// `payments.v1.VerifyReceiptResponse`.
public struct VerifyReceiptResponse: ProtobufMessage, Equatable {
    public static let protobufName = "payments.v1.VerifyReceiptResponse"
    public var results: [ReceiptItemResult] = []
    /// Transactions past the first 10, not looked at this time.
    public var deferredCount: UInt32 = 0
    public init() {}
}
