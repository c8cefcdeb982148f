import AppStoreVerification
import Foundation
import StrictJSON

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
        let token = settings.minter.mint(
            userId: userId, email: email, nowSeconds: now, lifetimeSeconds: DemoLimits.tokenLifetimeSeconds)
        print(
            "== 1. a signed-in user: HS256 bearer token minted for user \(userId) (email d***@example.com; the token is not shown)"
        )
        let auth = [("Authorization", "Bearer \(token)")]

        print("\n== 2. the app asks for its appAccountToken")
        let tokenAnswer = try exchange("GET", "/api/v1/payments/apple/account-token", headers: auth, expectStatus: 200)
        guard case .string(let accountToken)? = tokenAnswer["appAccountToken"], UUID(uuidString: accountToken) != nil
        else {
            throw WalkthroughFailure(description: "appAccountToken is not a UUID")
        }

        print("\n== 3. the app lists the packages")
        let packagesAnswer = try exchange("GET", "/api/v1/points/packages", headers: auth, expectStatus: 200)
        guard case .array(let packages)? = packagesAnswer["packages"],
            let package = packages.first(where: { $0["productCode"] == .string(settings.productCode) }),
            case .string(let appStoreProductId)? = package["appStoreProductId"],
            case .number(let creditsNumber)? = package["credits"], let credits = creditsNumber.int64Value
        else { throw WalkthroughFailure(description: "package \(settings.productCode) is not offered") }

        let transactionId = String(UInt64.random(in: 2_000_000_000_000_000...2_999_999_999_999_999))
        let purchaseMilliseconds = Int64(Date().timeIntervalSince1970 * 1000)
        let signedTransaction = try settings.authority.sign(
            payloadJSON: SignedPayloads.transaction(
                transactionId: transactionId, productId: appStoreProductId, bundleId: settings.bundleId,
                environment: settings.environment,
                appAccountToken: accountToken, purchaseDateMilliseconds: purchaseMilliseconds - 2_000,
                signedDateMilliseconds: purchaseMilliseconds))
        print(
            "\n== 4. StoreKit 2 returns a signed transaction (\(settings.environment), \(appStoreProductId), Consumable, id \(transactionId)); the app submits it"
        )
        let verifyBody = JSONObject([
            "productCode": .string(settings.productCode), "appStoreProductId": .string(appStoreProductId),
            "transactionId": .string(transactionId), "signedTransactionInfo": .string(signedTransaction),
            "appAccountToken": .string(accountToken),
        ])
        let granted = try exchange(
            "POST", "/api/v1/payments/apple/transactions/verify", headers: auth, json: verifyBody, expectStatus: 200)
        try expect(granted, "status", "granted")
        try expect(granted, "creditsAdded", credits)
        let balanceAfterGrant = Self.integer(granted["newBalance"]) ?? -1

        print("\n== 5. the balance shows the credits")
        let balance = try exchange("GET", "/api/v1/points/balance", headers: auth, expectStatus: 200)
        try expect(balance, "balance", balanceAfterGrant)

        print("\n== 6. the app resubmits the same transaction (a lost response): credited once only")
        let replay = try exchange(
            "POST", "/api/v1/payments/apple/transactions/verify", headers: auth, json: verifyBody, expectStatus: 200)
        try expect(replay, "status", "already_granted")
        try expect(replay, "creditsAdded", 0)
        try expect(replay, "newBalance", balanceAfterGrant)

        print("\n== 7. the app asks where the purchase stands")
        let status = try exchange(
            "GET", "/api/v1/payments/apple/transactions/\(transactionId)", headers: auth, expectStatus: 200)
        try expect(status, "status", "granted")

        let refundMilliseconds = Int64(Date().timeIntervalSince1970 * 1000)
        let refundedTransaction = try settings.authority.sign(
            payloadJSON: SignedPayloads.transaction(
                transactionId: transactionId, productId: appStoreProductId, bundleId: settings.bundleId,
                environment: settings.environment,
                appAccountToken: accountToken, purchaseDateMilliseconds: purchaseMilliseconds - 2_000,
                signedDateMilliseconds: refundMilliseconds,
                revocationDateMilliseconds: refundMilliseconds, revocationReason: 0))
        let notificationUUID = UUID().uuidString.lowercased()
        let signedPayload = try settings.authority.sign(
            payloadJSON: SignedPayloads.notification(
                type: "REFUND", notificationUUID: notificationUUID, bundleId: settings.bundleId,
                appAppleId: settings.appAppleId,
                environment: settings.environment, signedTransactionInfo: refundedTransaction,
                signedDateMilliseconds: refundMilliseconds))
        print("\n== 8. Apple refunds the purchase and posts a signed REFUND notification (\(notificationUUID))")
        _ = try exchange(
            "POST", "/api/v1/payments/apple/notifications", json: JSONObject(["signedPayload": .string(signedPayload)]),
            expectStatus: 200)

        print("\n== 9. the credits are taken back")
        let expectedBalance = max(0, balanceAfterGrant - credits)
        var afterRefund = JSONObject()
        for attempt in 1...DemoLimits.settleAttemptsMax {
            afterRefund = try exchange(
                "GET", "/api/v1/points/balance", headers: auth, expectStatus: 200, quiet: attempt > 1)
            if Self.integer(afterRefund["balance"]) == expectedBalance { break }
            usleep(DemoLimits.settlePauseMilliseconds * 1000)
        }
        try expect(afterRefund, "balance", expectedBalance)

        print("\n== 10. the purchase is marked refunded")
        let final = try exchange(
            "GET", "/api/v1/payments/apple/transactions/\(transactionId)", headers: auth, expectStatus: 200)
        try expect(final, "status", "refunded")
        print(
            "\nDemo passed: granted \(credits) credits once, replay answered already_granted, the refund took them back."
        )
    }

    /// One exchange, printed as method, path, status and JSON body.
    private func exchange(
        _ method: String, _ path: String, headers: [(String, String)] = [], json: JSONObject? = nil,
        expectStatus: Int, quiet: Bool = false
    ) throws -> JSONObject {
        var requestHeaders = headers
        var body: [UInt8]?
        if let json {
            body = JSONWriter.bytes(of: .object(json))
            requestHeaders.append(("Content-Type", "application/json"))
        }
        if !quiet {
            print("--> \(method) \(path)\(headers.isEmpty ? "" : "  (Authorization: Bearer <redacted>)")")
            if let json { print("    \(Self.printable(json))") }
        }
        let response = try client.send(method: method, path: path, headers: requestHeaders, body: body)
        let object = response.json ?? JSONObject()
        if !quiet {
            print(
                "<-- \(response.status) \(response.header("Content-Type") ?? "")  X-Request-Id: \(response.header("X-Request-Id") ?? "-")"
            )
            if !response.body.isEmpty { print("    \(response.json.map(Self.printable) ?? response.bodyText)") }
        }
        guard response.status == expectStatus else {
            throw WalkthroughFailure(
                description: "\(method) \(path): expected \(expectStatus), got \(response.status) \(response.bodyText)")
        }
        return object
    }

    private func expect(_ object: JSONObject, _ key: String, _ expected: String) throws {
        try expect(object, key, .string(expected), shown: expected)
    }

    private func expect(_ object: JSONObject, _ key: String, _ expected: Int64) throws {
        try expect(object, key, .integer(expected), shown: "\(expected)")
    }

    private func expect(_ object: JSONObject, _ key: String, _ expected: JSONValue, shown: String) throws {
        guard let actual = object[key], actual == expected else {
            throw WalkthroughFailure(
                description:
                    "\(key): expected \(shown), got \(object[key].map { JSONWriter.string(of: $0) } ?? "nothing")")
        }
        print("    ok: \(key) = \(shown)")
    }

    /// A JSON integer as Int64, or nil.
    private static func integer(_ value: JSONValue?) -> Int64? {
        guard case .number(let number)? = value else { return nil }
        return number.int64Value
    }

    /// The JSON with signed blobs shortened (never print a whole JWS).
    static func printable(_ object: JSONObject) -> String {
        var shown = JSONObject()
        for key in object.keys {
            guard let value = object[key] else { continue }
            if ["signedTransactionInfo", "signedPayload"].contains(key), case .string(let jws) = value {
                _ = shown.insert(key, .string("\(jws.prefix(16))… (\(jws.utf8.count) bytes, shortened)"))
            } else {
                _ = shown.insert(key, value)
            }
        }
        return JSONWriter.string(of: .object(shown))
    }
}
