import AppStoreVerification
import Foundation
import Logging
import ServiceKit

/// The environment check of `verify`: asks `SandboxCreditPolicy` and, on a
/// refusal, logs the user id (so an operator can add App Review's account to
/// APPLE_SANDBOX_USER_IDS) and throws before anything is written.
extension PaymentProcessor {
    func checkCreditPolicy(_ transaction: JWSTransaction, userId: UUID, log: Logger) throws(PaymentsError) {
        // `checkClaims` already refused a payload without an environment.
        let environment = transaction.environment ?? AppStoreEnvironment(rawValue: "")
        let decision = creditPolicy.decide(environment: environment, userId: userId)
        guard decision != .credit else { return }
        log.notice(
            "refused a purchase this deployment does not credit",
            ["environment": environment.rawValue, "why": decision.logCode])
        throw .environmentNotAllowed(environment: environment.rawValue)
    }
}
