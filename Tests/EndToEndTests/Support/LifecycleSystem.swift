import AppStoreVerification
import Foundation
import PostgresClient
import TestSupport
import XCTest

/// The three services and the gateway as processes, like `EndToEndSystem`,
/// but owned by one test so PointsService and PaymentsService can be killed
/// (SIGKILL) and restarted on the same ports while the gateway keeps
/// serving. Apple's side is played with full control of what it signs:
/// `signedDate`, revocation terms, quantity. PaymentsService runs as a
/// Sandbox-only (staging) deployment in a payments schema of its own.
final class LifecycleSystem: @unchecked Sendable {
    static let bundleId = EndToEndSystem.bundleId
    static let appAppleId = EndToEndSystem.appAppleId
    static let issuer = "https://auth.lifecycle.test"
    static let audience = "iap-credits-lifecycle"
    /// The catalog as shipped in config/packages.json.
    static let credits: [String: Int64] = [
        "new_user_pack": 60, "starter_pack": 100, "popular_pack": 210, "premium_pack": 415,
    ]

    let authority: LocalTestingCertificateAuthority
    let tokens: TestTokens
    let pointsDatabase: PostgresPool
    let paymentsDatabase: PostgresPool
    private let pointsURL: String
    private let paymentsURL: String
    private let schema: String
    private let rootPath: String
    /// Mutual TLS between the services, as in production.
    private let internalPKI: InternalTestPKI
    private let jwtSecret = EndToEndSystem.randomHex(32)
    private let emailSecret = EndToEndSystem.randomHex(32)
    let points = RestartableService(executable: "PointsService")
    let payments = RestartableService(executable: "PaymentsService")
    private(set) var gateway: ServiceProcess?
    private var paymentsFaults: String?
    private var pointsFaults: String?
    private var pointsCatalog = "config/packages.json"

    private init(
        authority: LocalTestingCertificateAuthority, pointsURL: String, paymentsURL: String, schema: String,
        rootPath: String,
        internalPKI: InternalTestPKI
    ) {
        self.authority = authority
        self.internalPKI = internalPKI
        self.tokens = TestTokens(secret: jwtSecret, issuer: Self.issuer, audience: Self.audience)
        self.pointsURL = pointsURL
        self.paymentsURL = paymentsURL
        self.schema = schema
        self.rootPath = rootPath
        pointsDatabase = PostgresPool(configuration: .init(connectionString: pointsURL, connectionsMax: 2))
        paymentsDatabase = PostgresPool(configuration: .init(connectionString: paymentsURL, connectionsMax: 2))
    }

    /// Starts everything; `body` runs with the system, which is stopped and
    /// whose schema is dropped afterwards whatever happens.
    static func with(
        pointsFaults: String? = nil, paymentsFaults: String? = nil, pointsCatalog: String? = nil,
        _ body: (LifecycleSystem) async throws -> Void
    ) async throws {
        let pointsURL = try TestDatabases.url("POINTS_DATABASE_URL")
        let base = try TestDatabases.url("PAYMENTS_DATABASE_URL")
        let schema = "lifecycle_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(12)
        let setup = PostgresPool(configuration: .init(connectionString: base, connectionsMax: 1))
        try await setup.withConnection { _ = try await $0.execute("create schema \(schema)") }
        await setup.close()
        let paymentsURL = base + (base.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(schema)"
        let authority = try LocalTestingCertificateAuthority()
        let rootPath = NSTemporaryDirectory() + "lifecycle-root-\(UUID().uuidString).pem"
        try authority.rootPEM.write(toFile: rootPath, atomically: true, encoding: .utf8)
        let internalPKI = try await InternalTestPKI.makeOffPool(["points", "payments", "gateway"])
        let system = LifecycleSystem(
            authority: authority, pointsURL: pointsURL, paymentsURL: paymentsURL, schema: schema, rootPath: rootPath,
            internalPKI: internalPKI)
        system.pointsFaults = pointsFaults
        system.paymentsFaults = paymentsFaults
        if let pointsCatalog { system.pointsCatalog = pointsCatalog }
        var failure: (any Error)?
        do {
            try await system.startPoints()
            try await system.startPayments()
            try await system.startGateway()
            try await body(system)
        } catch {
            failure = error
        }
        await system.stop(base: base)
        if let failure { throw failure }
    }

    // MARK: Processes

    func startPoints(faults: String? = nil, catalog: String? = nil) async throws {
        if let catalog { pointsCatalog = catalog }
        var environment = ["DATABASE_URL": pointsURL, "PACKAGES_FILE": pointsCatalog, "LOG_LEVEL": "info"]
            .merging(internalPKI.serviceEnvironment("points")) { $1 }
        if let faults = faults ?? pointsFaults { environment["FAULT_POINTS"] = faults }
        try await points.start(environment: environment)
    }

    func startPayments(faults: String? = nil) async throws {
        var environment = [
            "DATABASE_URL": paymentsURL, "POINTS_ADDR": "127.0.0.1:\(points.port)", "LOG_LEVEL": "info",
            "APPLE_BUNDLE_ID": Self.bundleId, "APPLE_ENVIRONMENTS": "Sandbox", "APPLE_ROOT_CERTS": rootPath,
            "SAGA_POLL_INTERVAL_MS": "100", "SAGA_LEASE_MS": "2000", "SAGA_RETRY_INITIAL_MS": "50",
            "SAGA_RETRY_MAX_MS": "400",
        ].merging(internalPKI.serviceEnvironment("payments")) { $1 }
        if let faults = faults ?? paymentsFaults { environment["FAULT_POINTS"] = faults }
        try await payments.start(environment: environment)
    }

    private func startGateway() async throws {
        let settings = [
            "POINTS_ADDR": "127.0.0.1:\(points.port)", "PAYMENTS_ADDR": "127.0.0.1:\(payments.port)",
            "LOG_LEVEL": "info",
            "JWT_HS256_SECRET": jwtSecret, "JWT_ISSUER": Self.issuer, "JWT_AUDIENCE": Self.audience,
            "EMAIL_HASH_SECRET": emailSecret,
        ].merging(internalPKI.gatewayEnvironment()) { $1 }
        gateway = try await offPool { try ServiceProcess(executable: "Gateway", environment: settings) }
        for _ in 0..<EndToEndLimits.readinessAttemptsMax {
            if let answer = try? await send("GET", "/readyz"), answer.status == 200 { return }
            try await Task.sleep(for: .milliseconds(EndToEndLimits.pollPauseMilliseconds))
        }
        throw HTTPExchangeError(description: "the gateway never became ready")
    }

    func killPoints() async throws { try await points.kill() }
    func killPayments() async throws { try await payments.kill() }
    var paymentsLogs: String { payments.logs }

    private func stop(base: String) async {
        let running = gateway
        _ = try? await offPool { running?.stop() }
        await payments.stop()
        await points.stop()
        await pointsDatabase.close()
        await paymentsDatabase.close()
        let cleanup = PostgresPool(configuration: .init(connectionString: base, connectionsMax: 1))
        _ = try? await cleanup.withConnection { try await $0.execute("drop schema if exists \(self.schema) cascade") }
        await cleanup.close()
        try? FileManager.default.removeItem(atPath: rootPath)
        internalPKI.remove()
    }

    // MARK: The app

    func send(_ method: String, _ path: String, token: String? = nil, json: [String: Any]? = nil) async throws
        -> HTTPAnswer
    {
        guard let gateway else { throw HTTPExchangeError(description: "the gateway is not running") }
        var headers: [(String, String)] = []
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        var body: [UInt8]?
        if let json {
            body = Array(try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys]))
            headers.append(("Content-Type", "application/json"))
        }
        return try await HTTPExchange.send(port: gateway.port, method: method, path: path, headers: headers, body: body)
    }

    func user(email: String? = nil) -> TestUser {
        let id = UUID()
        let address = email ?? "life.\(UUID().uuidString.prefix(8).lowercased())@example.com"
        return TestUser(id: id, email: address, token: tokens.valid(userId: id, email: address))
    }

    func accountToken(_ user: TestUser) async throws -> String {
        let answer = try await send("GET", "/api/v1/payments/apple/account-token", token: user.token)
        guard answer.status == 200, let token = answer.json["appAccountToken"] as? String else {
            throw HTTPExchangeError(description: "account-token answered \(answer.status) \(answer.text)")
        }
        return token
    }

    /// POST verify with `jws` for `productCode`.
    func verify(_ user: TestUser, productCode: String, transactionId: String, jws: String) async throws -> HTTPAnswer {
        try await send(
            "POST", "/api/v1/payments/apple/transactions/verify", token: user.token,
            json: [
                "productCode": productCode, "appStoreProductId": EndToEndSystem.productId(productCode),
                "transactionId": transactionId,
                "signedTransactionInfo": jws,
            ])
    }

    // MARK: Apple

    /// How Apple revoked a transaction, as its signed transaction says.
    struct Revocation {
        var type: String? = "REFUND_FULL"
        var percentage: Int? = nil
        var reason: Int = 0
    }

    /// A StoreKit 2 consumable transaction signed at `signedAt` (ms).
    func signedTransaction(
        _ transactionId: String, productCode: String, signedAt: Int64, quantity: Int = 1,
        appAccountToken: String? = nil,
        revocation: Revocation? = nil
    ) throws -> String {
        var payload: [String: Any] = [
            "transactionId": transactionId, "originalTransactionId": transactionId, "bundleId": Self.bundleId,
            "productId": EndToEndSystem.productId(productCode), "purchaseDate": signedAt - 1_000,
            "originalPurchaseDate": signedAt - 1_000,
            "quantity": quantity, "type": "Consumable", "inAppOwnershipType": "PURCHASED", "signedDate": signedAt,
            "environment": "Sandbox",
            "transactionReason": "PURCHASE", "storefront": "USA", "storefrontId": "143441", "price": 1990,
            "currency": "USD",
        ]
        if let appAccountToken { payload["appAccountToken"] = appAccountToken }
        if let revocation {
            payload["revocationDate"] = signedAt
            payload["revocationReason"] = revocation.reason
            if let type = revocation.type { payload["revocationType"] = type }
            if let percentage = revocation.percentage { payload["revocationPercentage"] = percentage }
        }
        return try authority.sign(payloadJSON: String(decoding: TestTokens.json(payload), as: UTF8.self))
    }

    /// An App Store Server Notification V2 signed at `signedAt`.
    func signedNotification(_ type: String, uuid: UUID = UUID(), signedAt: Int64, transaction: String) throws -> String
    {
        let payload: [String: Any] = [
            "notificationType": type, "notificationUUID": uuid.uuidString.lowercased(), "version": "2.0",
            "signedDate": signedAt,
            "data": [
                "bundleId": Self.bundleId, "bundleVersion": "1", "appAppleId": Self.appAppleId,
                "environment": "Sandbox",
                "signedTransactionInfo": transaction,
            ] as [String: Any],
        ]
        return try authority.sign(payloadJSON: String(decoding: TestTokens.json(payload), as: UTF8.self))
    }

    func deliver(_ signedPayload: String) async throws -> HTTPAnswer {
        try await send("POST", "/api/v1/payments/apple/notifications", json: ["signedPayload": signedPayload])
    }

    // MARK: State

    func balance(_ user: UUID) async throws -> Int64 {
        try await pointsDatabase.withConnection {
            try await $0.query("select balance from user_points where user_id = $1::uuid", [.uuid(user)]).first?.int64(
                "balance") ?? 0
        }
    }

    func ledgerCount(event: String) async throws -> Int64 {
        try await pointsDatabase.withConnection {
            try await $0.query("select count(*) as n from points_ledger where event_id = $1", [.text(event)]).first!
                .int64("n")
        }
    }

    func ledgerAmounts(user: UUID, changeType: String) async throws -> [Int64] {
        try await pointsDatabase.withConnection {
            try await $0.query(
                "select amount from points_ledger where user_id = $1::uuid and change_type = $2 order by seq",
                [.uuid(user), .text(changeType)]
            ).map { try $0.int64("amount") }
        }
    }

    /// The signed sum of the ledger rows of one purchase (their biz_id is its row id).
    func creditsHeld(transactionId: String) async throws -> Int64 {
        let rowId = try await paymentsDatabase.withConnection {
            try await $0.query(
                "select id::text as id from apple_iap_transactions where transaction_id = $1", [.text(transactionId)]
            )
            .first?.string("id")
        }
        guard let rowId else { return 0 }
        return try await pointsDatabase.withConnection {
            try await $0.query(
                "select coalesce(sum(direction * amount), 0)::bigint as held from points_ledger where biz_id = $1",
                [.text(rowId)]
            ).first!.int64("held")
        }
    }

    /// (status, pending_action) of a transaction's row.
    func row(_ transactionId: String) async throws -> (status: String, pending: String?)? {
        try await paymentsDatabase.withConnection {
            guard
                let row = try await $0.query(
                    "select status, pending_action from apple_iap_transactions where transaction_id = $1",
                    [.text(transactionId)]
                ).first
            else { return nil }
            return (try row.string("status"), try row.optionalString("pending_action"))
        }
    }

    /// Waits (bounded) until no row of this run owes a step.
    func settle(timeout: Duration = .seconds(30)) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let owed = try? await paymentsDatabase.withConnection {
                try await $0.query("select count(*) as n from apple_iap_transactions where pending_action is not null")
                    .first!.int64("n")
            }
            if owed == 0 { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    /// The ledger invariants (`LedgerInvariants`).
    func assertLedgerInvariants(_ user: UUID, file: StaticString = #filePath, line: UInt = #line) async throws {
        let violations = try await LedgerInvariants.violations(pool: pointsDatabase, user: user)
        XCTAssertEqual(violations, [], file: file, line: line)
    }
}
