import Foundation

/// One gateway route: method, path, JSON body and how to read its 200
/// answer. Every route the library calls is one of `GatewayRoutes`; a route
/// the gateway adds later (purchase history, the ledger) is one more
/// `GatewayRoute` value plus its model, sent with `GatewayClient.send`.
public struct GatewayRoute<Response: Sendable>: Sendable {
    public let method: String
    /// The path below the gateway's base URL, starting with "/".
    public let path: String
    /// The JSON body (nil for GET).
    public let body: Data?
    /// Reads a 200 body; throwing makes the answer `unexpectedAnswer`.
    public let decode: @Sendable (Data) throws -> Response

    public init(method: String, path: String, body: Data? = nil, decode: @escaping @Sendable (Data) throws -> Response) {
        self.method = method
        self.path = path
        self.body = body
        self.decode = decode
    }
}

/// The routes of docs/openapi.yaml the app uses. Only routes the gateway
/// serves are here: purchase history and the ledger are added once the
/// gateway has them (see docs/CLIENT.md, "Adding a route").
public enum GatewayRoutes {
    public static let accountTokenPath = "/api/v1/payments/apple/account-token"
    public static let packagesPath = "/api/v1/points/packages"
    public static let balancePath = "/api/v1/points/balance"
    public static let verifyPath = "/api/v1/payments/apple/transactions/verify"
    public static let transactionPathPrefix = "/api/v1/payments/apple/transactions/"

    /// GET account-token: the user's stable appAccountToken.
    public static let accountToken = GatewayRoute<UUID>(method: "GET", path: accountTokenPath) { data in
        try JSONDecoder().decode(AccountTokenBody.self, from: data).appAccountToken
    }

    /// GET packages: what this user may buy, in display order.
    public static let packages = GatewayRoute<[CreditPackage]>(method: "GET", path: packagesPath) { data in
        let packages = try JSONDecoder().decode(PackageListBody.self, from: data).packages
        guard packages.count <= ClientLimits.packagesMax else { throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "too many packages")) }
        return packages
    }

    /// GET balance.
    public static let balance = GatewayRoute<CreditBalance>(method: "GET", path: balancePath) { data in
        try JSONDecoder().decode(CreditBalance.self, from: data)
    }

    /// POST verify; an answer about another transaction, or one breaking the
    /// grant invariants, is not trusted.
    public static func verify(_ request: VerifyTransactionRequest) throws -> GatewayRoute<VerifiedGrant> {
        let body = try JSONEncoder().encode(request)
        let expected = request.transactionId
        return GatewayRoute(method: "POST", path: verifyPath, body: body) { data in
            let grant = try JSONDecoder().decode(VerifiedGrant.self, from: data)
            guard grant.isConsistent(forTransactionId: expected) else {
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "inconsistent grant"))
            }
            return grant
        }
    }

    /// GET one of the user's transactions (nil when the id is not decimal digits).
    public static func transaction(id transactionId: String) -> GatewayRoute<TransactionStatus>? {
        guard PendingPurchaseRecord.isValidTransactionId(transactionId) else { return nil }
        return GatewayRoute(method: "GET", path: transactionPathPrefix + transactionId) { data in
            try JSONDecoder().decode(TransactionStatus.self, from: data)
        }
    }
}

private struct AccountTokenBody: Decodable {
    let appAccountToken: UUID
}
