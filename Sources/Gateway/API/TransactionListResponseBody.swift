import StrictJSON

/// GET /api/v1/payments/apple/transactions: one page of the signed-in
/// user's own purchases, newest first, each as the status route shows it
/// (docs/protocols/payments/apple-iap-protocol.md).
public struct TransactionListResponseBody: JSONResponseBody, Equatable {
    public let transactions: [TransactionStatusResponseBody]
    /// Empty on the last page.
    public let nextPageToken: String

    public var json: JSONValue {
        var object = JSONObject()
        object.insert("transactions", .array(transactions.map(\.json)))
        object.insertIfPresent("nextPageToken", nextPageToken.isEmpty ? nil : .string(nextPageToken))
        return .object(object)
    }
}
