import StrictJSON

/// The 200 answer of the receipt route (apple-iap-protocol.md, 3.7): one
/// result per transaction the receipt listed that is not another
/// account's (those are left out), in the receipt's order, each on its
/// own; `ack` is true when there is at least one. `success` = credited by
/// this call, `duplicate` = credited before (both: finish the StoreKit
/// transaction), `failed` = the problem code a verify of that transaction
/// would have answered, and whether resubmitting the same receipt later
/// could credit it (`retryable`).
public struct VerifyReceiptResponseBody: JSONResponseBody, Equatable {
    public struct Item: Sendable, Equatable {
        public enum Status: String, Sendable {
            case success, duplicate, failed
        }

        public let status: Status
        public let transactionId: String
        /// Nil when not known (a failure before the catalog was consulted).
        public let productCode: String?
        public let creditsAdded: Int64
        /// Failed items only.
        public let errorCode: ProblemCode?
        public let errorDetail: String?

        public var retryable: Bool { errorCode?.retryable ?? false }

        /// Checks the invariants: no negative credits, only `success` adds,
        /// exactly the failed items carry a code.
        public init(
            status: Status, transactionId: String, productCode: String?, creditsAdded: Int64, errorCode: ProblemCode?,
            errorDetail: String?
        ) throws(ResponseInvariantViolation) {
            guard creditsAdded >= 0, status == .success || creditsAdded == 0 else {
                throw ResponseInvariantViolation("receipt item with credits it did not add")
            }
            guard (status == .failed) == (errorCode != nil) else {
                throw ResponseInvariantViolation("receipt item status and error disagree")
            }
            guard !transactionId.isEmpty else {
                throw ResponseInvariantViolation("receipt item without a transaction id")
            }
            self.status = status
            self.transactionId = transactionId
            self.productCode = productCode
            self.creditsAdded = creditsAdded
            self.errorCode = errorCode
            self.errorDetail = errorDetail
        }

        var json: JSONValue {
            var object = JSONObject([
                "status": .string(status.rawValue),
                "transactionId": .string(transactionId),
                "productCode": productCode.map(JSONValue.string) ?? .null,
                "creditsAdded": .integer(creditsAdded),
            ])
            if let errorCode {
                _ = object.insert("errorCode", .string(errorCode.wireCode))
                _ = object.insert("retryable", .bool(errorCode.retryable))
                if let errorDetail { _ = object.insert("detail", .string(errorDetail)) }
            }
            return .object(object)
        }
    }

    public let results: [Item]
    /// Transactions of the receipt past the first 10, not looked at this
    /// time: the app finishes the credited ones and sends the receipt again.
    public let deferredCount: Int

    public init(results: [Item], deferredCount: Int = 0) {
        self.results = results
        self.deferredCount = deferredCount
    }

    public var json: JSONValue {
        let succeeded = results.filter { $0.status != .failed }.count
        return .object(
            JSONObject([
                "ack": .bool(!results.isEmpty),
                "matchedCount": .integer(Int64(results.count)),
                "successCount": .integer(Int64(succeeded)),
                "failedCount": .integer(Int64(results.count - succeeded)),
                "deferredCount": .integer(Int64(deferredCount)),
                "results": .array(results.map(\.json)),
            ]))
    }
}
