import AppStoreServerAPI
import AppStoreVerification
import Foundation
import Synchronization
import TestSupport

/// A stand-in with known data, a client configured for it, and a verifier
/// that trusts the test PKI the stand-in signs with.
final class StandInFixture: @unchecked Sendable {
    static let appAppleId: Int64 = 1_234_567_890
    /// Customer A's 45 production transactions (3 pages): ids 2000000000000001...045.
    static let historyCount = 45
    static func productionId(_ index: Int) -> String { String(2_000_000_000_000_000 + index) }
    /// Only in sandbox.
    static let sandboxOnlyId = "3000000000000001"
    /// Revoked among customer A's: every 10th.
    static func isRevoked(_ index: Int) -> Bool { index % 10 == 0 }
    /// Customer B, a subscriber: an original and its renewal.
    static let subscriptionOriginalId = "2100000000000001"
    static let subscriptionRenewalId = "2100000000000002"
    static let notificationCount = 45
    static let orderId = "MQ7TEST01"

    let directory: URL
    let keyPath: String
    let keyPEM: [UInt8]
    let credentials: AppStoreAPICredentials
    let authority: LocalTestingCertificateAuthority
    let verifier: SignedDataVerifier
    let standIn: AppStoreStandIn
    let events = EventLog()

    init() async throws {
        directory = try TestKeys.directory()
        (keyPath, keyPEM) = try TestKeys.writeP8(in: directory)
        credentials = try AppStoreAPICredentials.load(
            keyPath: keyPath, keyID: TestKeys.keyID, issuerID: TestKeys.issuerID, bundleID: TestKeys.bundleID)
        authority = try LocalTestingCertificateAuthority()
        verifier = try SignedDataVerifier(
            configuration: VerifierConfiguration(
                bundleId: TestKeys.bundleID, appAppleId: Self.appAppleId, allowedEnvironments: [.production, .sandbox],
                trustedRoots: [authority.rootDER]))
        standIn = try await AppStoreStandIn(
            config: try Self.config(credentials: credentials, authority: authority, directory: directory),
            directory: directory)
    }

    static func config(credentials: AppStoreAPICredentials, authority: LocalTestingCertificateAuthority, directory: URL)
        throws -> [String: Any]
    {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let day: Int64 = 86_400_000
        var production: [[String: Any]] = []
        for index in 1...historyCount {
            var transaction: [String: Any] = [
                "transactionId": productionId(index), "originalTransactionId": productionId(index),
                "productId": index % 2 == 0 ? "credits.100" : "credits.500", "type": "Consumable",
                "purchaseDate": now - Int64(historyCount - index + 1) * day / 4,
                "originalPurchaseDate": now - Int64(historyCount - index + 1) * day / 4,
                "quantity": 1, "inAppOwnershipType": "PURCHASED", "transactionReason": "PURCHASE",
                "storefront": "USA", "storefrontId": "143441", "price": 990, "currency": "USD", "_customer": "A",
            ]
            if isRevoked(index) {
                transaction["revocationDate"] = now - Int64(historyCount - index) * day / 8
                transaction["revocationReason"] = 0
                transaction["revocationType"] = "REFUND_FULL"
            }
            production.append(transaction)
        }
        for (id, original) in [
            (subscriptionOriginalId, subscriptionOriginalId), (subscriptionRenewalId, subscriptionOriginalId),
        ] {
            production.append([
                "transactionId": id, "originalTransactionId": original, "productId": "pro.monthly",
                "type": "Auto-Renewable Subscription", "subscriptionGroupIdentifier": "21000000",
                "purchaseDate": now - (id == original ? 40 : 10) * day, "originalPurchaseDate": now - 40 * day,
                "expiresDate": now + 20 * day, "quantity": 1, "inAppOwnershipType": "PURCHASED", "_customer": "B",
            ])
        }
        var notifications: [[String: Any]] = []
        for index in 1...notificationCount {
            notifications.append([
                "notificationType": index % 3 == 0 ? "REFUND" : "ONE_TIME_CHARGE",
                "notificationUUID": UUID().uuidString.lowercased(),
                "_firstSendAttempt": now - Int64(notificationCount - index + 1) * 3_600_000,
                "_failed": index % 4 == 0, "_transactionId": productionId(index),
            ])
        }
        let sandbox: [[String: Any]] = [
            [
                "transactionId": sandboxOnlyId, "originalTransactionId": sandboxOnlyId, "productId": "credits.100",
                "type": "Consumable", "purchaseDate": now - day, "originalPurchaseDate": now - day, "quantity": 1,
                "inAppOwnershipType": "PURCHASED",
            ]
        ]
        return [
            "workDir": directory.path,
            "apiPublicKeyPEM": credentials.signingKey.publicKeyPEM,
            "keyId": credentials.keyID, "issuerId": credentials.issuerID, "bundleId": credentials.bundleID,
            "appAppleId": appAppleId,
            "signingCA": try authority.exportPEM(),
            "serverNames": ["localhost"],
            "environments": [
                "Production": [
                    "transactions": production, "notifications": notifications,
                    "orders": [orderId: [productionId(1), productId2]],
                ],
                "Sandbox": ["transactions": sandbox],
            ],
        ]
    }

    static let productId2 = productionId(2)

    /// A configuration for this stand-in (short waits so retry tests stay quick).
    func configuration(
        credentials: AppStoreAPICredentials? = nil, trustRootsPath: String? = nil, productionHost: String = "localhost",
        limits configure: (inout AppStoreServerAPILimits) -> Void = { _ in }
    ) -> AppStoreServerAPIConfiguration {
        var limits = AppStoreServerAPILimits()
        limits.backoffInitial = .milliseconds(50)
        limits.backoffMax = .milliseconds(200)
        limits.requestTimeout = .seconds(10)
        limits.connectTimeout = .seconds(5)
        configure(&limits)
        let events = self.events
        return AppStoreServerAPIConfiguration(
            credentials: credentials ?? self.credentials,
            productionURL: "https://\(productionHost):\(standIn.productionPort)",
            sandboxURL: "https://localhost:\(standIn.sandboxPort)",
            trustRootsPath: trustRootsPath ?? standIn.caPath, connectAddressOverride: "127.0.0.1", limits: limits,
            eventSink: { event in events.append(event.description) })
    }

    func client(_ configuration: AppStoreServerAPIConfiguration? = nil) throws -> AppStoreServerAPIClient {
        try AppStoreServerAPIClient(configuration: configuration ?? self.configuration())
    }

    func stop() async {
        let standIn = self.standIn
        _ = try? await offPool { standIn.stop() }
    }
}

/// What the client reported through its event sink.
final class EventLog: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

/// Offline verification (the synchronous entry points; in async code the
/// verifier's async, online overloads would be picked).
extension StandInFixture {
    func verifyTransaction(_ jws: String) throws -> JWSTransaction { try verifier.verifyTransaction(jws) }
    func verifyNotification(_ jws: String) throws -> NotificationPayload { try verifier.verifyNotification(jws) }
    func verifyAppTransaction(_ jws: String) throws -> AppTransaction { try verifier.verifyAppTransaction(jws) }
}
