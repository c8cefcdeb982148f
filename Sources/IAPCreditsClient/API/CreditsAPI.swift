import Foundation

/// The gateway routes the purchase flow needs. `GatewayClient` is the real
/// one; tests count calls through a fake.
public protocol CreditsAPI: Sendable {
    /// The user's stable appAccountToken (GET account-token).
    func accountToken() async throws(CreditsError) -> UUID
    /// Packages this user may buy, in display order (the new user pack only while eligible).
    func packages() async throws(CreditsError) -> [CreditPackage]
    func balance() async throws(CreditsError) -> CreditBalance
    /// Submits a paid transaction; a 200 means credited (now or before).
    func verify(_ request: VerifyTransactionRequest) async throws(CreditsError) -> VerifiedGrant
    /// Where one of the user's purchases stands (recovery after a lost answer).
    func transactionStatus(transactionId: String) async throws(CreditsError) -> TransactionStatus
}
