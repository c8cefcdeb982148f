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

    public init(method: String, path: String, body: Data? = nil, decode: @escaping @Sendable (Data) throws -> Response)
    {
        self.method = method
        self.path = path
        self.body = body
        self.decode = decode
    }
}

/// The routes of docs/openapi.yaml the app uses (see docs/CLIENT.md,
/// "Adding a route", for one the gateway adds later).
public enum GatewayRoutes {
    public static let accountTokenPath = "/api/v1/payments/apple/account-token"
    public static let packagesPath = "/api/v1/points/packages"
    public static let balancePath = "/api/v1/points/balance"
    public static let verifyPath = "/api/v1/payments/apple/transactions/verify"
    public static let transactionPathPrefix = "/api/v1/payments/apple/transactions/"
    public static let ledgerPath = "/api/v1/points/ledger"
    public static let transactionsPath = "/api/v1/payments/apple/transactions"

    /// GET account-token: the user's stable appAccountToken.
    public static let accountToken = GatewayRoute<UUID>(method: "GET", path: accountTokenPath) { data in
        try JSONDecoder().decode(AccountTokenBody.self, from: data).appAccountToken
    }

    /// GET packages: what this user may buy, in display order.
    public static let packages = GatewayRoute<[CreditPackage]>(method: "GET", path: packagesPath) { data in
        let packages = try JSONDecoder().decode(PackageListBody.self, from: data).packages
        guard packages.count <= ClientLimits.packagesMax else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "too many packages"))
        }
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

    /// GET one page of the user's ledger; `pageToken` is the previous page's
    /// `nextPageToken` (nil for the first page). Nil when the token is not
    /// one the gateway issued (base64url) or the size is out of 1...200.
    public static func ledger(pageSize: Int? = nil, pageToken: String? = nil) -> GatewayRoute<LedgerPage>? {
        guard let query = pageQuery(pageSize: pageSize, sizeMax: 200, pageToken: pageToken) else { return nil }
        return GatewayRoute(method: "GET", path: ledgerPath + query) { data in
            let page = try JSONDecoder().decode(LedgerPage.self, from: data)
            guard page.entries.count <= 200 else {
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "page too large"))
            }
            return page
        }
    }

    /// GET one page of the user's purchases (sizes 1...100), as `ledger`.
    public static func transactions(pageSize: Int? = nil, pageToken: String? = nil) -> GatewayRoute<TransactionPage>? {
        guard let query = pageQuery(pageSize: pageSize, sizeMax: 100, pageToken: pageToken) else { return nil }
        return GatewayRoute(method: "GET", path: transactionsPath + query) { data in
            let page = try JSONDecoder().decode(TransactionPage.self, from: data)
            guard page.transactions.count <= 100 else {
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "page too large"))
            }
            return page
        }
    }

    /// "?pageSize=..&pageToken=.." (or "" with neither); nil for values the gateway refuses.
    static func pageQuery(pageSize: Int?, sizeMax: Int, pageToken: String?) -> String? {
        var parts: [String] = []
        if let pageSize {
            guard (1...sizeMax).contains(pageSize) else { return nil }
            parts.append("pageSize=\(pageSize)")
        }
        if let pageToken, !pageToken.isEmpty {
            guard pageToken.utf8.count <= 128,
                pageToken.utf8.allSatisfy({ byte in
                    (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
                        || byte == 0x2D || byte == 0x5F
                })
            else { return nil }
            parts.append("pageToken=\(pageToken)")
        }
        return parts.isEmpty ? "" : "?" + parts.joined(separator: "&")
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
