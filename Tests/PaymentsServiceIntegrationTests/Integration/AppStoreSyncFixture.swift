import AppStoreVerification
import CryptoPrimitives
import Foundation
import TestSupport
import XCTest

/// A `PaymentsCluster` whose PaymentsService talks to the App Store
/// stand-in (Tests/interop/app_store_standin.py) over HTTPS/HTTP2: the
/// stand-in signs with the cluster's local-testing CA (so the service's
/// verifier accepts its JWS), checks the JWT the service signs with a
/// throwaway .p8, and takes data and faults while the test runs.
final class AppStoreSyncFixture: @unchecked Sendable {
    static let appAppleId = "1234"
    /// Listed in APPLE_SANDBOX_USER_IDS (App Review / a tester).
    static let tester = UUID(uuidString: "7c9e6679-7425-40de-944b-e07fc1f90ae7")!

    let cluster: PaymentsCluster
    let standIn: AppStoreStandIn
    let key: (path: String, pem: String)
    private let directory: URL

    /// Every job off unless `jobs` turns it on (their settings by name).
    static func start(jobs: [String: String] = [:]) async throws -> AppStoreSyncFixture {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("asapi-sync-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let key = try await AppStoreAPIKeys.write()
        let authority = try LocalTestingCertificateAuthority()
        let publicKey = try ES256SigningKey(pkcs8PEM: Array(key.pem.utf8)).publicKeyPEM
        let standIn = try await AppStoreStandIn(
            config: [
                "workDir": directory.path, "apiPublicKeyPEM": publicKey, "keyId": AppStoreAPIKeys.keyID,
                "issuerId": AppStoreAPIKeys.issuerID,
                "bundleId": PaymentsCluster.bundleId, "appAppleId": Int(appAppleId)!,
                "signingCA": try authority.exportPEM(),
                "serverNames": ["localhost"], "environments": [String: Any](),
            ], directory: directory)
        var settings = [
            "APPLE_API_KEY_PATH": key.path, "APPLE_API_KEY_ID": AppStoreAPIKeys.keyID,
            "APPLE_API_ISSUER_ID": AppStoreAPIKeys.issuerID,
            "APPLE_API_PRODUCTION_URL": "https://127.0.0.1:\(standIn.productionPort)",
            "APPLE_API_SANDBOX_URL": "https://127.0.0.1:\(standIn.sandboxPort)", "APPLE_API_CA_PATH": standIn.caPath,
            "NOTIFICATION_RECOVERY_INTERVAL_SECONDS": "0", "RECONCILE_INTERVAL_SECONDS": "0",
            "REVOKED_SWEEP_INTERVAL_SECONDS": "0",
            "APPLE_SYNC_LEASE_SECONDS": "10",
        ]
        settings.merge(jobs) { $1 }
        do {
            let cluster = try await PaymentsCluster.start(
                environments: "Production,Sandbox", appAppleId: appAppleId, sandboxUserIds: tester.uuidString,
                authority: authority,
                paymentsEnvironment: settings)
            return AppStoreSyncFixture(cluster: cluster, standIn: standIn, key: key, directory: directory)
        } catch {
            _ = try? await offPool { standIn.stop() }
            throw error
        }
    }

    private init(cluster: PaymentsCluster, standIn: AppStoreStandIn, key: (path: String, pem: String), directory: URL) {
        self.cluster = cluster
        self.standIn = standIn
        self.key = key
        self.directory = directory
    }

    func shutdown() async {
        await cluster.shutdown()
        let standIn = self.standIn
        _ = try? await offPool { standIn.stop() }
        try? FileManager.default.removeItem(atPath: key.path)
        try? FileManager.default.removeItem(at: directory)
    }

    // MARK: Apple's data

    static var nowMilliseconds: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    /// A consumable purchase as the stand-in stores it (`customer` groups a
    /// customer's history, as one Apple account).
    static func transaction(
        _ transactionId: String, productCode: String, token: String?, quantity: Int = 1, customer: String,
        purchasedAgoMilliseconds: Int64 = 60_000, revoked: Bool = false
    ) -> [String: Any] {
        let purchased = nowMilliseconds - purchasedAgoMilliseconds
        var transaction: [String: Any] = [
            "transactionId": transactionId, "originalTransactionId": transactionId,
            "productId": PaymentsCluster.appStoreProductId(productCode),
            "type": "Consumable", "purchaseDate": purchased, "originalPurchaseDate": purchased, "quantity": quantity,
            "inAppOwnershipType": "PURCHASED", "transactionReason": "PURCHASE", "storefront": "USA",
            "storefrontId": "143441",
            "price": 3990, "currency": "USD", "_customer": customer,
        ]
        if let token { transaction["appAccountToken"] = token }
        if revoked {
            transaction["revocationDate"] = nowMilliseconds - 1_000
            transaction["revocationReason"] = 0
            transaction["revocationType"] = "REFUND_FULL"
        }
        return transaction
    }

    /// A notification Apple sends about `transactionId` (its payload carries
    /// the transaction as the stand-in holds it at that moment).
    static func notification(_ type: String, about transactionId: String, failed: Bool = true) -> [String: Any] {
        ["notificationType": type, "_transactionId": transactionId, "_failed": failed]
    }

    // MARK: What the stand-in saw

    /// Requests whose path starts with `prefix`, in arrival order.
    func requests(_ prefix: String, environment: String? = nil) async throws -> [[String: Any]] {
        try await standIn.requests().filter {
            ($0["path"] as? String ?? "").hasPrefix(prefix)
                && (environment == nil || $0["env"] as? String == environment)
        }
    }

    // MARK: Log hygiene

    /// Nothing of the key, a JWT or a JWS, nor a bearer token, in `text`.
    func assertNoSecrets(in text: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertFalse(text.isEmpty, "no log to check", file: file, line: line)
        XCTAssertFalse(
            text.contains("eyJ"), "a JWT or JWS (base64url of '{\"') reached the log", file: file, line: line)
        XCTAssertFalse(text.lowercased().contains("bearer"), "a bearer token reached the log", file: file, line: line)
        XCTAssertFalse(text.contains("PRIVATE KEY"), file: file, line: line)
        for body in AppStoreAPIKeys.bodyLines(key.pem) {
            XCTAssertFalse(text.contains(body), "the .p8 key reached the log", file: file, line: line)
        }
    }
}
