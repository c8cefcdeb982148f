import Foundation

/// A paid purchase the gateway has not yet credited, kept by the library
/// until it is (then the StoreKit transaction is finished and the record
/// removed). It holds the signed transaction because resubmitting needs it;
/// nothing else of it is secret. It never holds a bearer token.
///
/// Stored only in the app's private storage (`FilePurchaseRecordStore`
/// writes mode 0600 files in a 0700 folder); `description`,
/// `debugDescription` and mirrors leave the signed transaction out.
public struct PendingPurchaseRecord: Sendable, Hashable, Codable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The record format; a file with another version is not read.
    public static let formatVersion = 1

    public let transactionId: String
    public let productCode: String
    public let appStoreProductId: String
    public let signedTransactionInfo: String
    /// The appAccountToken StoreKit recorded with the purchase: only the
    /// user it belongs to may submit it.
    public let appAccountToken: UUID?
    public let recordedAtUnixMilliseconds: Int64
    /// Verify calls made for it so far, over all launches.
    public var submissionCount: Int
    /// The last failure's problem code (wire text), "transport" or "unexpected_answer".
    public var lastFailure: String?

    public init(
        transactionId: String, productCode: String, appStoreProductId: String, signedTransactionInfo: String,
        appAccountToken: UUID?, recordedAtUnixMilliseconds: Int64, submissionCount: Int = 0, lastFailure: String? = nil
    ) {
        self.transactionId = transactionId
        self.productCode = productCode
        self.appStoreProductId = appStoreProductId
        self.signedTransactionInfo = signedTransactionInfo
        self.appAccountToken = appAccountToken
        self.recordedAtUnixMilliseconds = recordedAtUnixMilliseconds
        self.submissionCount = submissionCount
        self.lastFailure = lastFailure
    }

    /// The record of a StoreKit transaction bought as `productCode`.
    public init(transaction: StoreTransaction, productCode: String, now: Date) {
        self.init(
            transactionId: transaction.id, productCode: productCode, appStoreProductId: transaction.productID,
            signedTransactionInfo: transaction.signedTransactionInfo, appAccountToken: transaction.appAccountToken,
            recordedAtUnixMilliseconds: Int64((now.timeIntervalSince1970 * 1000).rounded()))
    }

    /// This record with StoreKit's current copy of its transaction (one that
    /// now carries a refund, say): package code, timestamps and counters kept.
    public func replacing(signedTransactionInfo: String) -> PendingPurchaseRecord {
        copy(productCode: productCode, signedTransactionInfo: signedTransactionInfo)
    }

    /// This record submitted as another package (the packages re-keyed its
    /// App Store product): everything else kept.
    public func replacing(productCode: String) -> PendingPurchaseRecord {
        copy(productCode: productCode, signedTransactionInfo: signedTransactionInfo)
    }

    private func copy(productCode: String, signedTransactionInfo: String) -> PendingPurchaseRecord {
        PendingPurchaseRecord(
            transactionId: transactionId, productCode: productCode, appStoreProductId: appStoreProductId,
            signedTransactionInfo: signedTransactionInfo, appAccountToken: appAccountToken,
            recordedAtUnixMilliseconds: recordedAtUnixMilliseconds, submissionCount: submissionCount,
            lastFailure: lastFailure)
    }

    /// The verify request that resubmits it.
    public var verifyRequest: VerifyTransactionRequest {
        VerifyTransactionRequest(
            productCode: productCode, appStoreProductId: appStoreProductId, transactionId: transactionId,
            signedTransactionInfo: signedTransactionInfo, appAccountToken: appAccountToken)
    }

    /// Apple's transaction ids are decimal digits (the gateway's rule: 1 to
    /// 32); the file store also uses the id as a file name, so nothing else
    /// is accepted.
    public static func isValidTransactionId(_ text: String) -> Bool {
        (1...32).contains(text.utf8.count)
            && text.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    // MARK: Codable with a version

    private enum CodingKeys: String, CodingKey {
        case version, transactionId, productCode, appStoreProductId, signedTransactionInfo, appAccountToken,
            recordedAtUnixMilliseconds, submissionCount, lastFailure
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let version = try container.decode(Int.self, forKey: .version)
        guard version == Self.formatVersion else {
            throw DecodingError.dataCorruptedError(
                forKey: .version, in: container, debugDescription: "record format \(version)")
        }
        transactionId = try container.decode(String.self, forKey: .transactionId)
        guard Self.isValidTransactionId(transactionId) else {
            throw DecodingError.dataCorruptedError(
                forKey: .transactionId, in: container, debugDescription: "not a transaction id")
        }
        productCode = try container.decode(String.self, forKey: .productCode)
        appStoreProductId = try container.decode(String.self, forKey: .appStoreProductId)
        signedTransactionInfo = try container.decode(String.self, forKey: .signedTransactionInfo)
        appAccountToken = try container.decodeIfPresent(UUID.self, forKey: .appAccountToken)
        recordedAtUnixMilliseconds = try container.decode(Int64.self, forKey: .recordedAtUnixMilliseconds)
        submissionCount = try container.decode(Int.self, forKey: .submissionCount)
        lastFailure = try container.decodeIfPresent(String.self, forKey: .lastFailure)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.formatVersion, forKey: .version)
        try container.encode(transactionId, forKey: .transactionId)
        try container.encode(productCode, forKey: .productCode)
        try container.encode(appStoreProductId, forKey: .appStoreProductId)
        try container.encode(signedTransactionInfo, forKey: .signedTransactionInfo)
        try container.encodeIfPresent(appAccountToken, forKey: .appAccountToken)
        try container.encode(recordedAtUnixMilliseconds, forKey: .recordedAtUnixMilliseconds)
        try container.encode(submissionCount, forKey: .submissionCount)
        try container.encodeIfPresent(lastFailure, forKey: .lastFailure)
    }

    // MARK: Redaction

    public var description: String {
        "PendingPurchaseRecord(transactionId: \(transactionId), productCode: \(productCode), submissions: \(submissionCount)"
            + "\(lastFailure.map { ", lastFailure: \($0)" } ?? ""), signedTransactionInfo: <redacted>)"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(
            self,
            children: ["transactionId": transactionId, "productCode": productCode, "submissionCount": submissionCount],
            displayStyle: .struct)
    }
}
