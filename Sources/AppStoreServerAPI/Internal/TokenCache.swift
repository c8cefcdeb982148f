import Locking

/// Hands out the JWT for the next request: a fresh one, or the last one
/// while it is younger than `reuseSeconds` (then it still has at least
/// `lifetime - reuse` seconds to live). Thread-safe.
final class TokenCache: Sendable {
    private let signer: AppStoreAPITokenSigner
    private let reuseSeconds: Int64
    private let nowSeconds: @Sendable () -> Int64
    private let last = Mutex<(token: String, issuedAt: Int64)?>(nil)

    init(signer: AppStoreAPITokenSigner, reuseSeconds: Int64, nowSeconds: @escaping @Sendable () -> Int64) {
        precondition(reuseSeconds >= 0 && reuseSeconds * 2 <= signer.lifetimeSeconds)
        self.signer = signer
        self.reuseSeconds = reuseSeconds
        self.nowSeconds = nowSeconds
    }

    func token() throws(AppStoreServerAPIError) -> String {
        let now = nowSeconds()
        if let cached = last.withLock({ $0 }), now >= cached.issuedAt, now - cached.issuedAt < reuseSeconds {
            return cached.token
        }
        let token = try signer.token(issuedAtSeconds: now)
        last.withLock { $0 = (token, now) }
        return token
    }
}
