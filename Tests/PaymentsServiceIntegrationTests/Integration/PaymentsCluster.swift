import AppStoreVerification
import Contracts
import Foundation
import PostgresClient
import RPCRuntime
import TestSupport
import XCTest

/// A real PointsService and a real PaymentsService as child processes, with
/// a private payments database of their own (created here, dropped by
/// `shutdown()`), so a saga worker under test never sees another test's
/// rows. The points database is shared: tests use fresh user ids and email
/// hashes. Blocking process work runs off the cooperative pool.
final class PaymentsCluster: @unchecked Sendable {
    static let bundleId = "com.meeyao.qianwen"
    /// The shipped Apple Inc. Root, trusted for receipts beside the test CA
    /// (as in production), so receipts Apple really signed reach the service's checks.
    static let appleIncRootPath = ServiceProcess.repositoryRoot.appendingPathComponent(
        "config/AppleIncRootCertificate.cer"
    ).path

    /// The catalog as shipped in config/packages.json.
    static let credits: [String: Int64] = [
        "new_user_pack": 60, "starter_pack": 100, "popular_pack": 210, "premium_pack": 415,
    ]

    let authority: LocalTestingCertificateAuthority
    let rootPaths: [String]
    let paymentsDatabaseName: String
    let paymentsURL: String
    let pointsURL: String
    let paymentsDatabase: PostgresPool
    let pointsDatabase: PostgresPool
    let points = RestartableService(executable: "PointsService")
    let payments = RestartableService(executable: "PaymentsService")
    private(set) var client: RPCClient?
    /// APPLE_ENVIRONMENTS and APPLE_APP_APPLE_ID of PaymentsService.
    private var appleEnvironments = "Sandbox"
    private var appAppleId: String?
    /// APPLE_SANDBOX_USER_IDS of PaymentsService (unset when empty).
    private var sandboxUserIds = ""
    /// With certificates the services run mutual TLS (PointsService as
    /// "points", PaymentsService as "payments", this cluster's client as
    /// "gateway"); without, INTERNAL_AUTH=off on 127.0.0.1.
    private(set) var internalPKI: InternalTestPKI?
    /// More settings of PaymentsService (the App Store Server API's, jobs).
    var paymentsEnvironment: [String: String] = [:]

    /// Creates the database and starts both services. `extraRoots` are
    /// trusted too (for the verifier failure tests' special chains).
    static func start(
        paymentsFaults: String? = nil, pointsFaults: String? = nil, extraRoots: [LocalTestingCertificateAuthority] = [],
        environments: String = "Sandbox", appAppleId: String? = nil, sandboxUserIds: String = "",
        internalPKI: InternalTestPKI? = nil,
        authority: LocalTestingCertificateAuthority? = nil, paymentsEnvironment: [String: String] = [:]
    ) async throws -> PaymentsCluster {
        let cluster = try await PaymentsCluster(extraRoots: extraRoots, authority: authority)
        cluster.internalPKI = internalPKI
        cluster.appleEnvironments = environments
        cluster.appAppleId = appAppleId
        cluster.sandboxUserIds = sandboxUserIds
        cluster.paymentsEnvironment = paymentsEnvironment
        try await cluster.startPoints(faults: pointsFaults)
        try await cluster.startPayments(faults: paymentsFaults)
        return cluster
    }

    private init(extraRoots: [LocalTestingCertificateAuthority], authority: LocalTestingCertificateAuthority?)
        async throws
    {
        self.authority = try authority ?? LocalTestingCertificateAuthority()
        var paths: [String] = []
        for root in [self.authority] + extraRoots {
            let path = NSTemporaryDirectory() + "/iap-test-root-\(UUID().uuidString).pem"
            try root.rootPEM.write(toFile: path, atomically: true, encoding: .utf8)
            paths.append(path)
        }
        rootPaths = paths
        let adminURL = try TestDatabases.url("PAYMENTS_DATABASE_URL")
        pointsURL = try TestDatabases.url("POINTS_DATABASE_URL")
        paymentsDatabaseName =
            "payments_t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
        guard let slash = adminURL.lastIndex(of: "/") else {
            throw ServiceProcessError(description: "unexpected PAYMENTS_DATABASE_URL")
        }
        paymentsURL = String(adminURL[...slash]) + paymentsDatabaseName
        let admin = PostgresPool(configuration: .init(connectionString: adminURL, connectionsMax: 1))
        let name = paymentsDatabaseName
        try await admin.withConnection { _ = try await $0.query("create database \(name)") }
        await admin.close()
        paymentsDatabase = PostgresPool(
            configuration: .init(connectionString: paymentsURL, connectionsMax: 4, acquireTimeout: .seconds(30)))
        pointsDatabase = PostgresPool(
            configuration: .init(connectionString: pointsURL, connectionsMax: 4, acquireTimeout: .seconds(30)))
    }

    // MARK: Processes

    /// Starts PointsService; on the port it had before when restarting, so
    /// the running PaymentsService finds it again.
    func startPoints(faults: String? = nil) async throws {
        var environment = ["DATABASE_URL": pointsURL, "LOG_LEVEL": "info"].merging(internalAuthEnvironment("points")) {
            $1
        }
        if let faults { environment["FAULT_POINTS"] = faults }
        try await points.start(environment: environment)
    }

    /// PaymentsService's settings (its admin commands read the same ones).
    var paymentsSettings: [String: String] {
        var environment = [
            "DATABASE_URL": paymentsURL, "POINTS_ADDR": "127.0.0.1:\(points.port)",
            "APPLE_BUNDLE_ID": Self.bundleId, "APPLE_ENVIRONMENTS": appleEnvironments,
            "APPLE_ROOT_CERTS": rootPaths.joined(separator: ","),
            "APPLE_RECEIPT_ROOT_CERTS": (rootPaths + [Self.appleIncRootPath]).joined(separator: ","),
            "SAGA_POLL_INTERVAL_MS": "100", "SAGA_LEASE_MS": "1000", "SAGA_RETRY_INITIAL_MS": "50",
            "SAGA_RETRY_MAX_MS": "500",
            "LOG_LEVEL": "info",
        ].merging(internalAuthEnvironment("payments")) { $1 }
        if let appAppleId { environment["APPLE_APP_APPLE_ID"] = appAppleId }
        if !sandboxUserIds.isEmpty { environment["APPLE_SANDBOX_USER_IDS"] = sandboxUserIds }
        environment.merge(paymentsEnvironment) { _, new in new }
        return environment
    }

    func startPayments(faults: String? = nil) async throws {
        var environment = paymentsSettings
        if let faults { environment["FAULT_POINTS"] = faults }
        try await payments.start(environment: environment)
        let previous = client
        client = try makeClient(identity: "gateway")
        await previous?.close()
    }

    /// A client of PaymentsService presenting `identity`'s certificate
    /// (nil: none) when the cluster runs mutual TLS.
    func makeClient(identity: String?) throws -> RPCClient {
        let tls = internalPKI.map { pki in
            TLSConfiguration.client(
                trustRootsPath: pki.caPath, serverName: "payments",
                certificateChainPath: identity.map(pki.certificatePath), privateKeyPath: identity.map(pki.keyPath))
        }
        return try RPCClient(
            targets: [HostAndPort(host: "127.0.0.1", port: payments.port)], configuration: .init(tls: tls))
    }

    /// The internal-authentication settings of service `name`.
    private func internalAuthEnvironment(_ name: String) -> [String: String] {
        guard let internalPKI else { return ["INTERNAL_AUTH": "off"] }
        return internalPKI.serviceEnvironment(name)
    }

    func killPayments() async throws { try await payments.kill() }
    func killPoints() async throws { try await points.kill() }
    var paymentsLogs: String { payments.logs }
    var pointsLogs: String { points.logs }

    /// Stops both services, closes the pools and drops the database.
    func shutdown() async {
        await client?.close()
        await payments.stop()
        await points.stop()
        await paymentsDatabase.close()
        await pointsDatabase.close()
        if let adminURL = try? TestDatabases.url("PAYMENTS_DATABASE_URL") {
            let admin = PostgresPool(configuration: .init(connectionString: adminURL, connectionsMax: 1))
            _ = try? await admin.withConnection {
                try await $0.query("drop database if exists \(self.paymentsDatabaseName) with (force)")
            }
            await admin.close()
        }
        for path in rootPaths { try? FileManager.default.removeItem(atPath: path) }
        internalPKI?.remove()
    }

    // MARK: Calls

    func rpc() throws -> RPCClient {
        guard let client else { throw ServiceProcessError(description: "PaymentsService is not running") }
        return client
    }

    func verify(_ request: VerifyTransactionRequest) async throws -> VerifyTransactionResponse {
        try await rpc().call(PaymentsMethods.verifyTransaction, request, timeout: .seconds(30))
    }

    func notify(_ signedPayload: String) async throws -> HandleNotificationResponse {
        var request = HandleNotificationRequest()
        request.signedPayload = signedPayload
        return try await rpc().call(PaymentsMethods.handleNotification, request, timeout: .seconds(30))
    }

    func accountToken(_ user: UUID) async throws -> String {
        var request = GetAccountTokenRequest()
        request.userId = user.uuidString.lowercased()
        return try await rpc().call(PaymentsMethods.getAccountToken, request, timeout: .seconds(30)).appAccountToken
    }

    func transaction(_ user: UUID, _ transactionId: String) async throws -> Contracts.Transaction {
        var request = GetTransactionRequest()
        request.userId = user.uuidString.lowercased()
        request.transactionId = transactionId
        guard
            let transaction = try await rpc().call(PaymentsMethods.getTransaction, request, timeout: .seconds(30))
                .transaction
        else {
            throw ServiceProcessError(description: "GetTransaction answered without a transaction")
        }
        return transaction
    }

    /// `PaymentsService redrive --transaction-id ID` as an operator runs it:
    /// its exit status and the JSON line it printed.
    func redrive(_ transactionId: String) async throws -> (status: Int32, output: String) {
        let outputPath = NSTemporaryDirectory() + "/redrive-\(UUID().uuidString).out"
        let arguments = [
            ServiceProcess.productsDirectory.appendingPathComponent("PaymentsService").path, "redrive",
            "--transaction-id", transactionId,
        ]
        // Passed in the environment, not on a command line: the database URL holds the cluster's password.
        let environment = [
            "DATABASE_URL": paymentsURL, "POINTS_ADDR": "127.0.0.1:\(points.port)", "LOG_LEVEL": "error",
        ]
        .merging(internalAuthEnvironment("payments")) { _, auth in auth }
        let status = try await offPool { try Command.run(arguments, outputPath: outputPath, environment: environment) }
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(atPath: outputPath)
        return (status, output)
    }

    /// `PaymentsService <arguments>` (an admin command) with the service's
    /// settings: its exit status, stdout and stderr (its log lines).
    func paymentsCommand(_ arguments: [String], settings: [String: String] = [:]) async throws -> (
        status: Int32, output: String, errors: String
    ) {
        let outputPath = NSTemporaryDirectory() + "/payments-command-\(UUID().uuidString).out"
        let errorPath = outputPath + ".err"
        let environment = paymentsSettings.merging(settings) { $1 }
        let command = [ServiceProcess.productsDirectory.appendingPathComponent("PaymentsService").path] + arguments
        let status = try await offPool {
            try Command.run(command, outputPath: outputPath, errorPath: errorPath, environment: environment)
        }
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        let errors = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(atPath: outputPath)
        try? FileManager.default.removeItem(atPath: errorPath)
        return (status, output, errors)
    }

    // MARK: Signed data

    static func randomTransactionId() -> String {
        String(UInt64.random(in: 2_000_000_000_000_000...8_999_999_999_999_999))
    }
    static func randomEmailHash() -> String {
        (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }
    static func appStoreProductId(_ productCode: String) -> String { "com.meeyao.qianwen.\(productCode)" }

    /// A StoreKit 2 consumable transaction payload (JSON text).
    static func transactionPayload(
        transactionId: String, productCode: String, appStoreProductId: String? = nil, environment: String = "Sandbox",
        bundleId: String = bundleId, appAccountToken: String? = nil, revocationReason: Int? = nil, quantity: Int = 1
    ) -> String {
        let nowMilliseconds = Int64(Date().timeIntervalSince1970 * 1000)
        var payload: [String: Any] = [
            "transactionId": transactionId, "originalTransactionId": transactionId, "bundleId": bundleId,
            "productId": appStoreProductId ?? Self.appStoreProductId(productCode),
            "purchaseDate": nowMilliseconds - 60_000,
            "originalPurchaseDate": nowMilliseconds - 60_000, "quantity": quantity, "type": "Consumable",
            // StoreKit signs a transaction when it is bought; a revoked view
            // of it is signed after the revocation. Notifications carry
            // "now" as their own signedDate.
            "inAppOwnershipType": "PURCHASED",
            "signedDate": revocationReason == nil ? nowMilliseconds - 60_000 : nowMilliseconds,
            "environment": environment,
            "transactionReason": "PURCHASE", "storefront": "USA", "storefrontId": "143441", "price": 1990,
            "currency": "USD",
        ]
        if let appAccountToken { payload["appAccountToken"] = appAccountToken }
        if let revocationReason {
            payload["revocationDate"] = nowMilliseconds - 1_000
            payload["revocationReason"] = revocationReason
        }
        return json(payload)
    }

    func signedTransaction(
        _ transactionId: String, productCode: String, appAccountToken: String? = nil, revocationReason: Int? = nil,
        environment: String = "Sandbox", quantity: Int = 1
    ) throws -> String {
        try authority.sign(
            payloadJSON: Self.transactionPayload(
                transactionId: transactionId, productCode: productCode, environment: environment,
                appAccountToken: appAccountToken,
                revocationReason: revocationReason, quantity: quantity))
    }

    /// A ONE_TIME_CHARGE for a consumable purchase (what Apple sends when a
    /// consumable is bought), its transaction carrying `appAccountToken`.
    func signedOneTimeCharge(
        _ transactionId: String, productCode: String, appAccountToken: String?, quantity: Int = 1,
        environment: String = "Sandbox",
        uuid: UUID = UUID()
    ) throws -> String {
        try signedNotification(
            "ONE_TIME_CHARGE", uuid: uuid,
            signedTransactionInfo: signedTransaction(
                transactionId, productCode: productCode, appAccountToken: appAccountToken, environment: environment,
                quantity: quantity),
            environment: environment)
    }

    /// An App Store Server Notification V2, signed; `signedTransactionInfo`
    /// goes into `data` when given.
    func signedNotification(
        _ type: String, subtype: String? = nil, uuid: UUID = UUID(), signedTransactionInfo: String? = nil,
        environment: String = "Sandbox", appAppleId: Int64 = 1234
    ) throws -> String {
        var data: [String: Any] = [
            "appAppleId": appAppleId, "bundleId": Self.bundleId, "bundleVersion": "1", "environment": environment,
            "status": 1,
        ]
        if let signedTransactionInfo { data["signedTransactionInfo"] = signedTransactionInfo }
        var payload: [String: Any] = [
            "notificationType": type, "notificationUUID": uuid.uuidString.lowercased(), "version": "2.0",
            "signedDate": Int64(Date().timeIntervalSince1970 * 1000), "data": data,
        ]
        if let subtype { payload["subtype"] = subtype }
        return try authority.sign(payloadJSON: Self.json(payload))
    }

    /// A REFUND for `transactionId` (the transaction payload carries the revocation).
    func signedRefund(_ transactionId: String, productCode: String, appAccountToken: String? = nil, uuid: UUID = UUID())
        throws -> String
    {
        try signedNotification(
            "REFUND", uuid: uuid,
            signedTransactionInfo: signedTransaction(
                transactionId, productCode: productCode, appAccountToken: appAccountToken, revocationReason: 0))
    }

    static func json(_ object: [String: Any]) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    func verifyRequest(
        user: UUID, emailHash: String = randomEmailHash(), productCode: String, transactionId: String,
        signed: String? = nil, appAccountToken: String = ""
    ) throws -> VerifyTransactionRequest {
        var request = VerifyTransactionRequest()
        request.userId = user.uuidString.lowercased()
        request.emailHash = emailHash
        request.productCode = productCode
        request.appStoreProductId = Self.appStoreProductId(productCode)
        request.transactionId = transactionId
        request.signedTransactionInfo = try signed ?? signedTransaction(transactionId, productCode: productCode)
        request.appAccountToken = appAccountToken
        request.emailMasked = "a***@example.com"
        return request
    }
}
