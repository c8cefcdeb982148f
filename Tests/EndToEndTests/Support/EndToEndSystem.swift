import AppStoreVerification
import Foundation
import PostgresClient
import TestSupport
import XCTest

/// The three services started as processes of this package (each on
/// 127.0.0.1 port 0), PaymentsService in a schema of its own, PointsService
/// on the shared points database, the Gateway in front, with a local
/// testing CA whose root PaymentsService trusts, and mutual TLS between
/// them as in production (an internal CA in `caDirectory/internal`). One per test process,
/// stopped when the test bundle finishes. Everything sent that must never
/// reach a log (tokens, JWS, emails) is remembered for the log checks.
final class EndToEndSystem: @unchecked Sendable {
    static let bundleId = "com.meeyao.qianwen"
    static let appAppleId: Int64 = 987_654
    static let issuer = "https://auth.e2e.test"
    static let audience = "iap-credits-e2e"
    /// App Review's account: the one user in APPLE_SANDBOX_USER_IDS, so its
    /// Sandbox purchases are credited next to Production.
    static let reviewerId = UUID()

    let authority: LocalTestingCertificateAuthority
    let tokens: TestTokens
    let points: ServiceProcess
    let payments: ServiceProcess
    let gateway: ServiceProcess
    let pointsDatabase: PostgresPool
    let paymentsDatabase: PostgresPool
    let schema: String
    let paymentsURL: String
    /// Holds ca.pem and root.pem (the Demo's CA folder layout).
    let caDirectory: String

    private let lock = NSLock()
    private var secretsSent: [String] = []
    private var requestIds: [(path: String, id: String)] = []

    // MARK: One shared system

    private actor Shared {
        var system: EndToEndSystem?
        /// A failed start fails every later test at once instead of retrying.
        var failure: (any Error)?
        func get() async throws -> EndToEndSystem {
            if let system { return system }
            if let failure { throw failure }
            let started: EndToEndSystem
            do {
                started = try await EndToEndSystem.start()
            } catch {
                failure = error
                throw error
            }
            system = started
            await MainActor.run { XCTestObservationCenter.shared.addTestObserver(StopAtBundleEnd(system: started)) }
            return started
        }
    }

    private static let shared = Shared()

    static func get() async throws -> EndToEndSystem { try await shared.get() }

    private final class StopAtBundleEnd: NSObject, XCTestObservation, @unchecked Sendable {
        let system: EndToEndSystem
        init(system: EndToEndSystem) { self.system = system }
        func testBundleDidFinish(_ testBundle: Bundle) { system.stop() }
    }

    // MARK: Start and stop

    private init(
        authority: LocalTestingCertificateAuthority, tokens: TestTokens, points: ServiceProcess,
        payments: ServiceProcess,
        gateway: ServiceProcess, pointsDatabase: PostgresPool, paymentsDatabase: PostgresPool, schema: String,
        paymentsURL: String, caDirectory: String
    ) {
        self.authority = authority
        self.tokens = tokens
        self.points = points
        self.payments = payments
        self.gateway = gateway
        self.pointsDatabase = pointsDatabase
        self.paymentsDatabase = paymentsDatabase
        self.schema = schema
        self.paymentsURL = paymentsURL
        self.caDirectory = caDirectory
    }

    private static func start() async throws -> EndToEndSystem {
        let pointsURL = try TestDatabases.url("POINTS_DATABASE_URL")
        let paymentsBaseURL = try TestDatabases.url("PAYMENTS_DATABASE_URL")
        let schema = "e2e_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(12)
        let setup = PostgresPool(configuration: .init(connectionString: paymentsBaseURL, connectionsMax: 1))
        try await setup.withConnection { _ = try await $0.execute("create schema \(schema)") }
        await setup.close()
        let paymentsURL =
            paymentsBaseURL + (paymentsBaseURL.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(schema)"
        do {
            return try await start(pointsURL: pointsURL, paymentsURL: paymentsURL, schema: schema)
        } catch {
            // Processes already started die with their ServiceProcess; the schema goes here.
            let cleanup = PostgresPool(configuration: .init(connectionString: paymentsBaseURL, connectionsMax: 1))
            _ = try? await cleanup.withConnection { try await $0.execute("drop schema if exists \(schema) cascade") }
            await cleanup.close()
            throw error
        }
    }

    private static func start(pointsURL: String, paymentsURL: String, schema: String) async throws -> EndToEndSystem {

        let authority = try LocalTestingCertificateAuthority()
        let caDirectory = NSTemporaryDirectory() + "e2e-ca-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: caDirectory, withIntermediateDirectories: true)
        try Data(try authority.exportPEM().utf8).write(to: URL(fileURLWithPath: caDirectory + "/ca.pem"))
        try Data(authority.rootPEM.utf8).write(to: URL(fileURLWithPath: caDirectory + "/root.pem"))
        let internalPKI = try await InternalTestPKI.makeOffPool(
            ["points", "payments", "gateway", "chat"], in: caDirectory + "/internal")

        let secret = Self.randomHex(32)
        let tokens = TestTokens(secret: secret, issuer: issuer, audience: audience)
        let points = try ServiceProcess(
            executable: "PointsService",
            environment: [
                "DATABASE_URL": pointsURL, "PACKAGES_FILE": "config/packages.json", "LOG_LEVEL": "info",
                // The chat service spends credits (DatabaseState.spend calls Spend as it).
                "POINTS_SPEND_CALLERS": "chat",
            ].merging(internalPKI.serviceEnvironment("points")) { $1 })
        let payments = try ServiceProcess(
            executable: "PaymentsService",
            environment: [
                "DATABASE_URL": paymentsURL, "POINTS_ADDR": "127.0.0.1:\(points.port)", "LOG_LEVEL": "info",
                "APPLE_BUNDLE_ID": bundleId, "APPLE_APP_APPLE_ID": String(appAppleId),
                "APPLE_ENVIRONMENTS": "Production,Sandbox,Xcode",
                "APPLE_ROOT_CERTS": "config/AppleRootCA-G3.cer,\(caDirectory)/root.pem", "APPLE_LOCAL_TESTING": "1",
                "APPLE_SANDBOX_USER_IDS": reviewerId.uuidString.lowercased(),
                "SAGA_POLL_INTERVAL_MS": "100", "SAGA_RETRY_INITIAL_MS": "100", "SAGA_RETRY_MAX_MS": "1000",
            ].merging(internalPKI.serviceEnvironment("payments")) { $1 })
        let gateway = try ServiceProcess(
            executable: "Gateway",
            environment: [
                "POINTS_ADDR": "127.0.0.1:\(points.port)", "PAYMENTS_ADDR": "127.0.0.1:\(payments.port)",
                "LOG_LEVEL": "info",
                "JWT_HS256_SECRET": secret, "JWT_ISSUER": issuer, "JWT_AUDIENCE": audience,
                "EMAIL_HASH_SECRET": randomHex(32),
            ].merging(internalPKI.gatewayEnvironment()) { $1 })
        let system = EndToEndSystem(
            authority: authority, tokens: tokens, points: points, payments: payments, gateway: gateway,
            pointsDatabase: PostgresPool(configuration: .init(connectionString: pointsURL, connectionsMax: 2)),
            paymentsDatabase: PostgresPool(configuration: .init(connectionString: paymentsURL, connectionsMax: 2)),
            schema: schema, paymentsURL: paymentsURL, caDirectory: caDirectory)
        try await system.waitUntilReady()
        return system
    }

    private func waitUntilReady() async throws {
        for _ in 0..<EndToEndLimits.readinessAttemptsMax {
            if let answer = try? await send("GET", "/readyz"), answer.status == 200 { return }
            try await Task.sleep(for: .milliseconds(EndToEndLimits.pollPauseMilliseconds))
        }
        throw HTTPExchangeError(description: "the gateway never became ready: \(gateway.logs.suffix(2000))")
    }

    /// Stops the services (SIGTERM, graceful) and drops the payments schema.
    func stop() {
        gateway.stop()
        payments.stop()
        points.stop()
        let psql = [
            "/usr/bin/psql", paymentsURL.components(separatedBy: "?")[0], "-qc",
            "drop schema if exists \(schema) cascade",
        ]
        _ = try? Command.run(psql)
        try? FileManager.default.removeItem(atPath: caDirectory)
    }

    /// The three admin listeners (/metrics, /livez, /readyz); nil if one is off.
    var adminPorts: (gateway: Int, payments: Int, points: Int)? {
        guard let gateway = gateway.adminPort, let payments = payments.adminPort, let points = points.adminPort else {
            return nil
        }
        return (gateway, payments, points)
    }

    static func randomHex(_ bytes: Int) -> String {
        (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    // MARK: Requests

    /// Remembers text that must never appear in any service log.
    func neverLog(_ secret: String) {
        lock.withLock { secretsSent.append(secret) }
    }

    var secrets: [String] { lock.withLock { secretsSent } }
    var requestIdsSeen: [(path: String, id: String)] { lock.withLock { requestIds } }

    func send(
        _ method: String, _ path: String, token: String? = nil, json: [String: Any]? = nil,
        body: [UInt8]? = nil, contentType: String? = nil, headers: [(String, String)] = []
    ) async throws -> HTTPAnswer {
        var allHeaders = headers
        if let token {
            allHeaders.append(("Authorization", "Bearer \(token)"))
            neverLog(token)
        }
        var payload = body
        if let json {
            payload = Array(try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys]))
        }
        if let type = contentType ?? (json != nil ? "application/json" : nil) {
            allHeaders.append(("Content-Type", type))
        }
        let answer = try await HTTPExchange.send(
            port: gateway.port, method: method, path: path, headers: allHeaders, body: payload)
        if let id = answer.header("X-Request-Id") { lock.withLock { requestIds.append((path, id)) } }
        return answer
    }

    /// A fresh signed-in user (random id and email unless given).
    func user(id: UUID = UUID(), email: String? = nil) -> TestUser {
        let address = email ?? "e2e.\(UUID().uuidString.prefix(8).lowercased())@example.com"
        neverLog(address)
        let token = tokens.valid(userId: id, email: address)
        neverLog(token)
        return TestUser(id: id, email: address, token: token)
    }

    func accountToken(_ user: TestUser) async throws -> String {
        let answer = try await send("GET", "/api/v1/payments/apple/account-token", token: user.token)
        guard answer.status == 200, let token = answer.json["appAccountToken"] as? String else {
            throw HTTPExchangeError(description: "account-token answered \(answer.status) \(answer.text)")
        }
        return token
    }

    static func productId(_ productCode: String) -> String { "com.meeyao.qianwen.\(productCode)" }

    static func randomTransactionId() -> String {
        String(UInt64.random(in: 2_000_000_000_000_000...2_999_999_999_999_999))
    }

    /// A StoreKit 2 signed transaction from the trusted local CA; in Xcode by
    /// default, as the demo buys (credited for every user in local-testing
    /// mode, while Sandbox next to Production is credited only to `reviewerId`).
    func signedTransaction(
        transactionId: String, productId: String, appAccountToken: String?, environment: String = "Xcode",
        revocationDateMilliseconds: Int64? = nil, authority signer: LocalTestingCertificateAuthority? = nil
    ) throws -> String {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var payload: [String: Any] = [
            "transactionId": transactionId, "originalTransactionId": transactionId, "bundleId": Self.bundleId,
            "productId": productId,
            "purchaseDate": now - 5_000, "originalPurchaseDate": now - 5_000, "quantity": 1, "type": "Consumable",
            // StoreKit signed the purchase when it was bought; a revoked view
            // is signed after the revocation (Apple orders words by signedDate).
            "inAppOwnershipType": "PURCHASED", "signedDate": revocationDateMilliseconds == nil ? now - 5_000 : now,
            "environment": environment, "transactionReason": "PURCHASE",
            "storefront": "USA", "storefrontId": "143441", "price": 1990, "currency": "USD",
        ]
        if let appAccountToken { payload["appAccountToken"] = appAccountToken }
        if let revocationDateMilliseconds {
            payload["revocationDate"] = revocationDateMilliseconds
            payload["revocationReason"] = 0
        }
        let jws = try (signer ?? authority).sign(payloadJSON: String(decoding: TestTokens.json(payload), as: UTF8.self))
        neverLog(jws)
        return jws
    }

    /// POST verify for `productCode` with a freshly signed transaction (or `jws`).
    func verify(
        _ user: TestUser, productCode: String, transactionId: String = randomTransactionId(),
        appStoreProductId: String? = nil,
        jws: String? = nil, appAccountToken: String? = nil
    ) async throws -> HTTPAnswer {
        let productId = appStoreProductId ?? Self.productId(productCode)
        let signed =
            try jws
            ?? signedTransaction(transactionId: transactionId, productId: productId, appAccountToken: appAccountToken)
        var body: [String: Any] = [
            "productCode": productCode, "appStoreProductId": productId, "transactionId": transactionId,
            "signedTransactionInfo": signed,
        ]
        if let appAccountToken { body["appAccountToken"] = appAccountToken }
        return try await send("POST", "/api/v1/payments/apple/transactions/verify", token: user.token, json: body)
    }

    /// POSTs a signed App Store Server Notification V2 about a transaction.
    func notify(
        type: String, transactionId: String, productId: String, appAccountToken: String?,
        notificationUUID: UUID = UUID()
    ) async throws -> HTTPAnswer {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let transaction = try signedTransaction(
            transactionId: transactionId, productId: productId, appAccountToken: appAccountToken,
            revocationDateMilliseconds: type == "REFUND" || type == "REVOKE" ? now : nil)
        let payload: [String: Any] = [
            "notificationType": type, "notificationUUID": notificationUUID.uuidString.lowercased(), "version": "2.0",
            "signedDate": now,
            "data": [
                "bundleId": Self.bundleId, "bundleVersion": "1", "appAppleId": Self.appAppleId, "environment": "Xcode",
                "signedTransactionInfo": transaction,
            ] as [String: Any],
        ]
        let jws = try authority.sign(payloadJSON: String(decoding: TestTokens.json(payload), as: UTF8.self))
        neverLog(jws)
        return try await send("POST", "/api/v1/payments/apple/notifications", json: ["signedPayload": jws])
    }
}

/// A signed-in app user.
struct TestUser: Sendable {
    let id: UUID
    let email: String
    let token: String
}

/// Bounds of the end-to-end tests' waiting loops.
enum EndToEndLimits {
    static let readinessAttemptsMax = 240
    static let settleAttemptsMax = 100
    static let pollPauseMilliseconds = 100
}
