import Foundation
import IAPCreditsClient

/// The real gateway client, with a switch that freezes a verify call for
/// ever: the app process "dies" at that point (the test then stops the
/// client and drops it). `.beforeSending` dies between payment and verify;
/// `.afterSending` dies after the gateway credited but before the answer
/// arrived.
final class KillableAPI: CreditsAPI, @unchecked Sendable {
    enum DeathPoint: Sendable {
        case beforeSending
        case afterSending
    }

    let real: GatewayClient
    let deathPoint: DeathPoint
    private let lock = NSLock()
    private var frozen: [CheckedContinuation<Void, Never>] = []
    private var reachedVerify = false

    init(real: GatewayClient, deathPoint: DeathPoint) {
        self.real = real
        self.deathPoint = deathPoint
    }

    /// True once a verify call reached the death point.
    var died: Bool { lock.withLock { reachedVerify } }

    /// Lets the frozen calls return (an error) after the test: the stopped
    /// client they belong to must then do nothing.
    func thaw() {
        let waiting = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            defer { frozen.removeAll() }
            return frozen
        }
        for continuation in waiting { continuation.resume() }
    }

    func accountToken() async throws(CreditsError) -> UUID { try await real.accountToken() }
    func packages() async throws(CreditsError) -> [CreditPackage] { try await real.packages() }
    func balance() async throws(CreditsError) -> CreditBalance { try await real.balance() }
    func transactionStatus(transactionId: String) async throws(CreditsError) -> TransactionStatus {
        try await real.transactionStatus(transactionId: transactionId)
    }

    func verify(_ request: VerifyTransactionRequest) async throws(CreditsError) -> VerifiedGrant {
        if deathPoint == .afterSending { _ = try? await real.verify(request) }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.withLock {
                reachedVerify = true
                frozen.append(continuation)
            }
        }
        throw CreditsError(.transport("the process died"))
    }
}
