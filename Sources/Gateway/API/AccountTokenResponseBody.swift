import StrictJSON

/// GET /api/v1/payments/apple/account-token: the stable UUID the app passes
/// to StoreKit as appAccountToken for this user.
public struct AccountTokenResponseBody: JSONResponseBody, Equatable {
    public let appAccountToken: String

    public init(appAccountToken: String) { self.appAccountToken = appAccountToken }

    public var json: JSONValue {
        .object(JSONObject(["appAccountToken": .string(appAccountToken)]))
    }
}
