import Foundation
import IAPCreditsClient
import IAPCreditsClientTestSupport

/// The PRD 4.1 catalog, StoreKit's products for it, and small helpers.
enum Fixtures {
    static let allPackages: [CreditPackage] = [
        CreditPackage(
            productCode: "new_user_pack", appStoreProductId: "com.meeyao.qianwen.new_user_pack", kind: .starter,
            credits: 60,
            displayName: "New user pack", price: "0.99", currency: "USD"),
        CreditPackage(
            productCode: "starter_pack", appStoreProductId: "com.meeyao.qianwen.starter_pack", kind: .regular,
            credits: 100,
            displayName: "Starter pack", price: "1.99", currency: "USD"),
        CreditPackage(
            productCode: "popular_pack", appStoreProductId: "com.meeyao.qianwen.popular_pack", kind: .regular,
            credits: 210,
            displayName: "Popular pack", price: "3.99", currency: "USD"),
        CreditPackage(
            productCode: "premium_pack", appStoreProductId: "com.meeyao.qianwen.premium_pack", kind: .regular,
            credits: 415,
            displayName: "Premium pack", price: "7.99", currency: "USD"),
    ]
    static let packages = allPackages

    /// StoreKit's products, priced in yuan (the App Store's price wins over the backend's USD reference).
    static let products: [StoreProduct] = [
        StoreProduct(
            id: "com.meeyao.qianwen.new_user_pack", displayName: "新手包", displayPrice: "¥6.00", price: 6,
            currencyCode: "CNY"),
        StoreProduct(
            id: "com.meeyao.qianwen.starter_pack", displayName: "入门包", displayPrice: "¥12.00", price: 12,
            currencyCode: "CNY"),
        StoreProduct(
            id: "com.meeyao.qianwen.popular_pack", displayName: "热门包", displayPrice: "¥25.00", price: 25,
            currencyCode: "CNY"),
        StoreProduct(
            id: "com.meeyao.qianwen.premium_pack", displayName: "高级包", displayPrice: "¥50.00", price: 50,
            currencyCode: "CNY"),
    ]

    /// A stand-in for a JWS: unit tests never verify it, they only check it travels and never leaks.
    static let signer: ScriptedStoreFront.Signer = { facts in
        "eyJhbGciOiJFUzI1NiJ9.\(facts.id)-\(facts.productID)\(facts.revocationDateMilliseconds == nil ? "" : "-revoked").c2lnbmF0dXJl"
    }

    static func store(products: [StoreProduct] = products) -> ScriptedStoreFront {
        ScriptedStoreFront(products: products, signer: signer)
    }

    static func problem(_ code: ProblemCode, status: Int = 500, retryable: Bool? = nil) -> CreditsError {
        CreditsError(.problem(GatewayProblem(code: code, status: status, retryable: retryable)), requestID: "req-1")
    }

    static func transaction(
        id: String = "2000000000000001", productID: String = "com.meeyao.qianwen.starter_pack",
        token: UUID? = nil, revoked: Bool = false
    ) -> StoreTransaction {
        StoreTransaction(
            id: id, originalID: id, productID: productID, appAccountToken: token,
            purchaseDate: Date(timeIntervalSince1970: 1_700_000_000),
            revocationDate: revoked ? Date(timeIntervalSince1970: 1_700_000_100) : nil,
            signedTransactionInfo: "eyJhbGciOiJFUzI1NiJ9.payload-\(id).c2ln")
    }

    /// A configuration whose retries come fast and without jitter.
    static func fastConfiguration(attempts: Int = 5) -> CreditsClientConfiguration {
        CreditsClientConfiguration(
            retrySchedule: RetrySchedule(
                initialDelayMilliseconds: 20, maximumDelayMilliseconds: 80, attemptsPerSessionMax: attempts),
            unitRandom: { 0.5 })
    }

    /// Every error a verify can fail with: each known code, an unknown one,
    /// no answer, a garbled answer, no token.
    static var everyVerifyFailure: [CreditsError] {
        ProblemCode.allKnown.map { problem($0) } + [
            problem(.unrecognized("PAYMENT_SOMETHING_NEW"), status: 400, retryable: false),
            CreditsError(.transport("offline")), CreditsError(.unexpectedAnswer(status: 502)),
            CreditsError(.notSignedIn),
        ]
    }
}

/// Polls (bounded) until `condition` holds.
func eventually(timeoutMilliseconds: Int = 5_000, _ condition: @Sendable () async -> Bool) async -> Bool {
    for _ in 0..<(timeoutMilliseconds / 10) {
        if await condition() { return true }
        try? await Task.sleep(nanoseconds: 10_000_000)
    }
    return await condition()
}

/// Records call names in order, from several actors.
final class CallLog: @unchecked Sendable {
    private let lock = NSLock()
    private var names: [String] = []
    func note(_ name: String) { lock.withLock { names.append(name) } }
    var calls: [String] { lock.withLock { names } }
}

/// A wall clock the test moves by hand.
final class ManualClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current = Date(timeIntervalSince1970: 1_700_000_000)
    var now: Date { lock.withLock { current } }
    func advance(seconds: Double) { lock.withLock { current += seconds } }
}
