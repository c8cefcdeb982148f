import AppStoreVerification
import Foundation

/// Why the walkthrough stopped: a step answered something other than what
/// the API promises.
struct WalkthroughFailure: Error, CustomStringConvertible {
    let description: String
}

/// A whole purchase as an app and Apple would drive it through the gateway:
/// token, account token, packages, a signed StoreKit 2 transaction verified
/// twice (granted, then already_granted), its status, a signed REFUND
/// notification and the clawback. Prints every exchange; throws on the
/// first answer that differs from the expected one.
struct PurchaseWalkthrough {
    struct Settings {
        var gatewayHost: String
        var gatewayPort: Int
        var authority: LocalTestingCertificateAuthority
        var minter: HS256TokenMinter
        var bundleId: String
        var appAppleId: Int64?
        var environment: String
        var productCode: String
    }

    let settings: Settings
    private let client: DemoHTTPClient

    init(settings: Settings) {
        self.settings = settings
        client = DemoHTTPClient(host: settings.gatewayHost, port: settings.gatewayPort)
    }

    func run() throws {
        let userId = UUID().uuidString.lowercased()
        let email = "demo-\(userId.prefix(8))@example.com"
        let now = Int64(Date().timeIntervalSince1970)
        let token = settings.minter.mint(userId: userId, email: email, nowSeconds: now, lifetimeSeconds: DemoLimits.tokenLifetimeSeconds)
        print("== 1. a signed-in user: HS256 bearer token minted for user \(userId) (email d***@example.com; the token is not shown)")
        let auth = [("Authorization", "Bearer \(token)")]

        print("\n== 2. the app asks for its appAccountToken")
        let tokenAnswer = try exchange("GET", "/api/v1/payments/apple/account-token", headers: auth, expectStatus: 200)
        guard let accountToken = tokenAnswer["appAccountToken"] as? String, UUID(uuidString: accountToken) != nil else {
            throw WalkthroughFailure(description: "appAccountToken is not a UUID")
        }

        print("\n== 3. the app lists the packages")
        let packagesAnswer = try exchange("GET", "/api/v1/points/packages", headers: auth, expectStatus: 200)
        let packages = packagesAnswer["packages"] as? [[String: Any]] ?? []
        guard let package = packages.first(where: { $0["productCode"] as? String == settings.productCode }),
              let appStoreProductId = package["appStoreProductId"] as? String, let credits = package["credits"] as? Int
        else { throw WalkthroughFailure(description: "package \(settings.productCode) is not offered") }

        let transactionId = String(UInt64.random(in: 2_000_000_000_000_000...2_999_999_999_999_999))
        let purchaseMilliseconds = Int64(Date().timeIntervalSince1970 * 1000)
        let signedTransaction = try settings.authority.sign(payloadJSON: SignedPayloads.transaction(
            transactionId: transactionId, productId: appStoreProductId, bundleId: settings.bundleId, environment: settings.environment,
            appAccountToken: accountToken, purchaseDateMilliseconds: purchaseMilliseconds - 2_000, signedDateMilliseconds: purchaseMilliseconds))
        print("\n== 4. StoreKit 2 returns a signed transaction (\(settings.environment), \(appStoreProductId), Consumable, id \(transactionId)); the app submits it")
        let verifyBody: [String: Any] = [
            "productCode": settings.productCode, "appStoreProductId": appStoreProductId, "transactionId": transactionId,
            "signedTransactionInfo": signedTransaction, "appAccountToken": accountToken,
        ]
        let granted = try exchange("POST", "/api/v1/payments/apple/transactions/verify", headers: auth, json: verifyBody, expectStatus: 200)
        try expect(granted, "status", "granted")
        try expect(granted, "creditsAdded", credits)
        let balanceAfterGrant = granted["newBalance"] as? Int ?? -1

        print("\n== 5. the balance shows the credits")
        let balance = try exchange("GET", "/api/v1/points/balance", headers: auth, expectStatus: 200)
        try expect(balance, "balance", balanceAfterGrant)

        print("\n== 6. the app resubmits the same transaction (a lost response): credited once only")
        let replay = try exchange("POST", "/api/v1/payments/apple/transactions/verify", headers: auth, json: verifyBody, expectStatus: 200)
        try expect(replay, "status", "already_granted")
        try expect(replay, "creditsAdded", 0)
        try expect(replay, "newBalance", balanceAfterGrant)

        print("\n== 7. the app asks where the purchase stands")
        let status = try exchange("GET", "/api/v1/payments/apple/transactions/\(transactionId)", headers: auth, expectStatus: 200)
        try expect(status, "status", "granted")

        let refundMilliseconds = Int64(Date().timeIntervalSince1970 * 1000)
        let refundedTransaction = try settings.authority.sign(payloadJSON: SignedPayloads.transaction(
            transactionId: transactionId, productId: appStoreProductId, bundleId: settings.bundleId, environment: settings.environment,
            appAccountToken: accountToken, purchaseDateMilliseconds: purchaseMilliseconds - 2_000, signedDateMilliseconds: refundMilliseconds,
            revocationDateMilliseconds: refundMilliseconds, revocationReason: 0))
        let notificationUUID = UUID().uuidString.lowercased()
        let signedPayload = try settings.authority.sign(payloadJSON: SignedPayloads.notification(
            type: "REFUND", notificationUUID: notificationUUID, bundleId: settings.bundleId, appAppleId: settings.appAppleId,
            environment: settings.environment, signedTransactionInfo: refundedTransaction, signedDateMilliseconds: refundMilliseconds))
        print("\n== 8. Apple refunds the purchase and posts a signed REFUND notification (\(notificationUUID))")
        _ = try exchange("POST", "/api/v1/payments/apple/notifications", json: ["signedPayload": signedPayload], expectStatus: 200)

        print("\n== 9. the credits are taken back")
        let expectedBalance = max(0, balanceAfterGrant - credits)
        var afterRefund: [String: Any] = [:]
        for attempt in 1...DemoLimits.settleAttemptsMax {
            afterRefund = try exchange("GET", "/api/v1/points/balance", headers: auth, expectStatus: 200, quiet: attempt > 1)
            if afterRefund["balance"] as? Int == expectedBalance { break }
            usleep(DemoLimits.settlePauseMilliseconds * 1000)
        }
        try expect(afterRefund, "balance", expectedBalance)

        print("\n== 10. the purchase is marked refunded")
        let final = try exchange("GET", "/api/v1/payments/apple/transactions/\(transactionId)", headers: auth, expectStatus: 200)
        try expect(final, "status", "refunded")
        print("\nDemo passed: granted \(credits) credits once, replay answered already_granted, the refund took them back.")
    }

    /// One exchange, printed as method, path, status and JSON body.
    private func exchange(
        _ method: String, _ path: String, headers: [(String, String)] = [], json: [String: Any]? = nil,
        expectStatus: Int, quiet: Bool = false
    ) throws -> [String: Any] {
        var requestHeaders = headers
        var body: [UInt8]?
        if let json {
            body = Array(try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys]))
            requestHeaders.append(("Content-Type", "application/json"))
        }
        if !quiet {
            print("--> \(method) \(path)\(headers.isEmpty ? "" : "  (Authorization: Bearer <redacted>)")")
            if let json { print("    \(Self.printable(json))") }
        }
        let response = try client.send(method: method, path: path, headers: requestHeaders, body: body)
        let object = response.json ?? [:]
        if !quiet {
            print("<-- \(response.status) \(response.header("Content-Type") ?? "")  X-Request-Id: \(response.header("X-Request-Id") ?? "-")")
            if !response.body.isEmpty { print("    \(response.json.map(Self.printable) ?? response.bodyText)") }
        }
        guard response.status == expectStatus else {
            throw WalkthroughFailure(description: "\(method) \(path): expected \(expectStatus), got \(response.status) \(response.bodyText)")
        }
        return object
    }

    private func expect(_ object: [String: Any], _ key: String, _ expected: some Equatable) throws {
        guard let actual = object[key], String(describing: actual) == String(describing: expected) else {
            throw WalkthroughFailure(description: "\(key): expected \(expected), got \(object[key].map { String(describing: $0) } ?? "nothing")")
        }
        print("    ok: \(key) = \(expected)")
    }

    /// Pretty JSON with signed blobs shortened (never print a whole JWS).
    static func printable(_ object: [String: Any]) -> String {
        var shown = object
        for key in ["signedTransactionInfo", "signedPayload"] {
            if let jws = shown[key] as? String { shown[key] = "\(jws.prefix(16))… (\(jws.utf8.count) bytes, shortened)" }
        }
        guard let data = try? JSONSerialization.data(withJSONObject: shown, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return "\(shown)"
        }
        return String(decoding: data, as: UTF8.self)
    }
}
