import AppStoreVerification
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import IAPCreditsClient
import IAPCreditsClientTestSupport
import PostgresClient
import TestSupport
import XCTest

/// The real system for the client library: PointsService, PaymentsService
/// (in a schema of its own, trusting a local testing CA, APPLE_LOCAL_TESTING=1)
/// and the Gateway, started as processes on 127.0.0.1, once per test
/// process. The gateway can be stopped and started again on the same port
/// (an outage the app lives through).
final class LiveGateway: @unchecked Sendable {
    static let bundleId = "com.meeyao.qianwen"
    static let appAppleId: Int64 = 987_654
    static let issuer = "https://auth.client-lib.test"
    static let audience = "iap-credits-client-lib"
    /// Local testing purchases are credited for everyone in local-testing mode.
    static let environment = "Xcode"

    let authority: LocalTestingCertificateAuthority
    let jwtSecret: String
    let points: ServiceProcess
    let payments: ServiceProcess
    let pointsDatabase: PostgresPool
    let paymentsDatabase: PostgresPool
    let gatewayPort: Int
    private let gatewayEnvironment: [String: String]
    private let schema: String
    private let paymentsURL: String
    private let caDirectory: String
    private let lock = NSLock()
    private var currentGateway: ServiceProcess?
    private var sentSecrets: [String] = []
    /// One session for the tests' own requests (readiness, notifications).
    let http = URLSessionTransport()

    var baseURL: URL { URL(string: "http://127.0.0.1:\(gatewayPort)")! }

    // MARK: One per test process

    private actor Shared {
        var system: LiveGateway?
        var failure: (any Error)?
        func get() async throws -> LiveGateway {
            if let system { return system }
            if let failure { throw failure }
            do {
                let started = try await LiveGateway.start()
                system = started
                await MainActor.run { XCTestObservationCenter.shared.addTestObserver(StopAtBundleEnd(system: started)) }
                return started
            } catch {
                failure = error
                throw error
            }
        }
    }

    private static let shared = Shared()

    static func get() async throws -> LiveGateway { try await shared.get() }

    private final class StopAtBundleEnd: NSObject, XCTestObservation, @unchecked Sendable {
        let system: LiveGateway
        init(system: LiveGateway) { self.system = system }
        func testBundleDidFinish(_ testBundle: Bundle) { system.stop() }
    }

    private init(
        authority: LocalTestingCertificateAuthority, jwtSecret: String, points: ServiceProcess,
        payments: ServiceProcess,
        gateway: ServiceProcess, gatewayEnvironment: [String: String], pointsURL: String, paymentsURL: String,
        schema: String, caDirectory: String
    ) {
        self.authority = authority
        self.jwtSecret = jwtSecret
        self.points = points
        self.payments = payments
        self.currentGateway = gateway
        self.gatewayPort = gateway.port
        self.gatewayEnvironment = gatewayEnvironment
        self.pointsDatabase = PostgresPool(configuration: .init(connectionString: pointsURL, connectionsMax: 2))
        self.paymentsDatabase = PostgresPool(configuration: .init(connectionString: paymentsURL, connectionsMax: 2))
        self.paymentsURL = paymentsURL
        self.schema = schema
        self.caDirectory = caDirectory
    }

    private static func start() async throws -> LiveGateway {
        let pointsURL = try TestDatabases.url("POINTS_DATABASE_URL")
        let paymentsBaseURL = try TestDatabases.url("PAYMENTS_DATABASE_URL")
        let schema = "client_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(12)
        let setup = PostgresPool(configuration: .init(connectionString: paymentsBaseURL, connectionsMax: 1))
        try await setup.withConnection { _ = try await $0.execute("create schema \(schema)") }
        await setup.close()
        let paymentsURL =
            paymentsBaseURL + (paymentsBaseURL.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(schema)"

        let authority = try LocalTestingCertificateAuthority()
        let caDirectory = NSTemporaryDirectory() + "client-lib-ca-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: caDirectory, withIntermediateDirectories: true)
        try Data(authority.rootPEM.utf8).write(to: URL(fileURLWithPath: caDirectory + "/root.pem"))
        let secret = TestText.randomHex(32)
        let (points, payments, gateway, gatewayEnvironment) = try await offPool {
            let points = try ServiceProcess(
                executable: "PointsService",
                environment: [
                    "DATABASE_URL": pointsURL, "PACKAGES_FILE": "config/packages.json", "LOG_LEVEL": "info",
                    // The client library is under test here; internal mTLS has tests of its own.
                    "INTERNAL_AUTH": "off",
                ])
            let payments = try ServiceProcess(
                executable: "PaymentsService",
                environment: [
                    "DATABASE_URL": paymentsURL, "POINTS_ADDR": "127.0.0.1:\(points.port)", "LOG_LEVEL": "info",
                    "APPLE_BUNDLE_ID": bundleId, "APPLE_APP_APPLE_ID": String(appAppleId),
                    "APPLE_ENVIRONMENTS": "Production,Sandbox,Xcode",
                    "APPLE_ROOT_CERTS": "config/AppleRootCA-G3.cer,\(caDirectory)/root.pem", "APPLE_LOCAL_TESTING": "1",
                    "SAGA_POLL_INTERVAL_MS": "100", "SAGA_RETRY_INITIAL_MS": "100", "SAGA_RETRY_MAX_MS": "1000",
                    "INTERNAL_AUTH": "off",
                ])
            let gatewayEnvironment = [
                "POINTS_ADDR": "127.0.0.1:\(points.port)", "PAYMENTS_ADDR": "127.0.0.1:\(payments.port)",
                "LOG_LEVEL": "info",
                "JWT_HS256_SECRET": secret, "JWT_ISSUER": issuer, "JWT_AUDIENCE": audience,
                "EMAIL_HASH_SECRET": TestText.randomHex(32),
                "INTERNAL_AUTH": "off",
            ]
            let gateway = try ServiceProcess(executable: "Gateway", environment: gatewayEnvironment)
            return (points, payments, gateway, gatewayEnvironment)
        }
        let system = LiveGateway(
            authority: authority, jwtSecret: secret, points: points, payments: payments, gateway: gateway,
            gatewayEnvironment: gatewayEnvironment, pointsURL: pointsURL, paymentsURL: paymentsURL,
            schema: schema, caDirectory: caDirectory)
        try await system.waitUntilReady()
        return system
    }

    /// Polls /readyz (bounded).
    func waitUntilReady() async throws {
        for _ in 0..<LiveGatewayLimits.readinessAttemptsMax {
            if let (response, _) = try? await http.send(URLRequest(url: baseURL.appendingPathComponent("readyz"))),
                response.statusCode == 200
            {
                return
            }
            try await Task.sleep(nanoseconds: LiveGatewayLimits.pollPauseNanoseconds)
        }
        throw ServiceProcessError(description: "the gateway never became ready: \(gatewayLogs.suffix(2000))")
    }

    func stop() {
        lock.withLock { currentGateway }?.stop()
        payments.stop()
        points.stop()
        _ = try? Command.run([
            "/usr/bin/psql", paymentsURL.components(separatedBy: "?")[0], "-qc",
            "drop schema if exists \(schema) cascade",
        ])
        try? FileManager.default.removeItem(atPath: caDirectory)
    }

    // MARK: The gateway's outage

    /// SIGTERM the gateway and wait until it is gone.
    func stopGateway() async throws {
        guard let gateway = lock.withLock({ currentGateway }) else { return }
        _ = try await offPool { gateway.stop() }
    }

    /// Start a new gateway on the same port and wait until it is ready.
    func restartGateway() async throws {
        let environment = gatewayEnvironment
        let port = gatewayPort
        let gateway = try await offPool {
            try ServiceProcess(
                executable: "Gateway", arguments: ["--listen", "127.0.0.1:\(port)"], environment: environment)
        }
        lock.withLock { currentGateway = gateway }
        try await waitUntilReady()
    }

    var gatewayLogs: String { lock.withLock { currentGateway }?.logs ?? "" }

    /// Everything the three services logged (this gateway instance only).
    var allLogs: String { points.logs + payments.logs + gatewayLogs }

    // MARK: Users and Apple

    /// A signed-in user: its id, and a token source as an app would give the library.
    func user() -> LiveUser {
        let id = UUID()
        let email = "client.\(UUID().uuidString.prefix(8).lowercased())@example.com"
        let token = TestTokens(secret: jwtSecret, issuer: Self.issuer, audience: Self.audience).sign(claims: [
            "iss": Self.issuer, "aud": Self.audience, "sub": id.uuidString.lowercased(), "email": email,
            "iat": Int64(Date().timeIntervalSince1970), "exp": Int64(Date().timeIntervalSince1970) + 3_600,
        ])
        neverLog(token)
        neverLog(email)
        return LiveUser(id: id, email: email, token: token)
    }

    func gatewayClient(for user: LiveUser) -> GatewayClient {
        let token = user.token
        return GatewayClient(baseURL: baseURL, timeoutSeconds: 10, tokenSource: { _ in token })
    }

    /// A ScriptedStoreFront that signs as Apple would, with the local CA.
    func storeFront() -> ScriptedStoreFront {
        let products = ["new_user_pack", "starter_pack", "popular_pack", "premium_pack"].map { code in
            StoreProduct(
                id: "com.meeyao.qianwen.\(code)", displayName: code, displayPrice: "$\(code.count).99",
                price: Decimal(code.count),
                currencyCode: "USD")
        }
        return ScriptedStoreFront(products: products) { [self] facts in try self.signedTransaction(facts) }
    }

    /// A StoreKit 2 signed transaction (Apple's field names and shapes).
    func signedTransaction(_ facts: ScriptedStoreFront.TransactionFacts) throws -> String {
        var payload: [String: Any] = [
            "transactionId": facts.id, "originalTransactionId": facts.id, "bundleId": Self.bundleId,
            "productId": facts.productID,
            "purchaseDate": facts.purchaseDateMilliseconds, "originalPurchaseDate": facts.purchaseDateMilliseconds,
            "quantity": 1,
            "type": "Consumable", "inAppOwnershipType": "PURCHASED", "environment": Self.environment,
            "transactionReason": "PURCHASE",
            "storefront": "USA", "storefrontId": "143441", "price": 1990, "currency": "USD",
            // Apple orders its words by signedDate: a refunded view is signed after the refund.
            "signedDate": facts.revocationDateMilliseconds ?? facts.purchaseDateMilliseconds,
        ]
        if let token = facts.appAccountToken { payload["appAccountToken"] = token.uuidString.lowercased() }
        if let revoked = facts.revocationDateMilliseconds {
            payload["revocationDate"] = revoked
            payload["revocationReason"] = 0
        }
        let jws = try authority.sign(payloadJSON: TestText.json(payload))
        neverLog(jws)
        return jws
    }

    /// Apple's REFUND notification (V2) for a transaction, POSTed to the gateway.
    func notifyRefund(transactionId: String, productID: String, appAccountToken: UUID?) async throws -> Int {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let transaction = try signedTransaction(
            .init(
                id: transactionId, productID: productID, appAccountToken: appAccountToken,
                purchaseDateMilliseconds: now - 60_000,
                revocationDateMilliseconds: now))
        let payload: [String: Any] = [
            "notificationType": "REFUND", "notificationUUID": UUID().uuidString.lowercased(), "version": "2.0",
            "signedDate": now,
            "data": [
                "bundleId": Self.bundleId, "bundleVersion": "1", "appAppleId": Self.appAppleId,
                "environment": Self.environment,
                "signedTransactionInfo": transaction,
            ] as [String: Any],
        ]
        let signed = try authority.sign(payloadJSON: TestText.json(payload))
        neverLog(signed)
        var request = URLRequest(url: baseURL.appendingPathComponent("api/v1/payments/apple/notifications"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(TestText.json(["signedPayload": signed]).utf8)
        return try await http.send(request).0.statusCode
    }

    // MARK: Log hygiene

    func neverLog(_ secret: String) { lock.withLock { sentSecrets.append(secret) } }
    var secrets: [String] { lock.withLock { sentSecrets } }
}

struct LiveUser: Sendable {
    let id: UUID
    let email: String
    let token: String
}

enum LiveGatewayLimits {
    static let readinessAttemptsMax = 300
    static let pollPauseNanoseconds: UInt64 = 100_000_000
    static let settleAttemptsMax = 150
}
