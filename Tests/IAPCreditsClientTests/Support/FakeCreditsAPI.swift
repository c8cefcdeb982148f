import Foundation
import IAPCreditsClient

/// A gateway in memory: credits a transaction once (`granted`, then
/// `already_granted`), answers scripted failures first, and logs every call
/// so tests can say "never called the server".
actor FakeCreditsAPI: CreditsAPI {
    let token: UUID
    var packageList: [CreditPackage]
    private(set) var verifyRequests: [VerifyTransactionRequest] = []
    private(set) var balanceCalls = 0
    private(set) var packagesCalls = 0
    private(set) var statusCalls: [String] = []
    private var verifyFailures: [CreditsError] = []
    private var credited: [String: Int64] = [:]
    private var balanceValue: Int64 = 0
    private var statuses: [String: TransactionStatus] = [:]
    private var accountTokenFailures: [CreditsError] = []
    private var packagesFailures: [CreditsError] = []
    private var statusFailures: [CreditsError] = []
    private(set) var accountTokenCalls = 0
    private let observer: (@Sendable (String) -> Void)?
    private var verifyHeld = false
    private var heldVerifies: [CheckedContinuation<Void, Never>] = []

    init(
        token: UUID = UUID(), packages: [CreditPackage] = Fixtures.packages,
        observer: (@Sendable (String) -> Void)? = nil
    ) {
        self.token = token
        self.packageList = packages
        self.observer = observer
    }

    /// Verify calls wait from now until `releaseVerifies()`.
    func holdVerifies() { verifyHeld = true }
    func releaseVerifies() {
        verifyHeld = false
        let held = heldVerifies
        heldVerifies.removeAll()
        for call in held { call.resume() }
    }
    var verifiesWaiting: Int { heldVerifies.count }

    /// The next verify calls fail with these, in order.
    func failVerify(_ errors: CreditsError...) { verifyFailures.append(contentsOf: errors) }
    func failAccountToken(_ errors: CreditsError...) { accountTokenFailures.append(contentsOf: errors) }
    func failPackages(_ errors: CreditsError...) { packagesFailures.append(contentsOf: errors) }
    func failStatus(_ errors: CreditsError...) { statusFailures.append(contentsOf: errors) }
    func setPackages(_ packages: [CreditPackage]) { packageList = packages }
    func setStatus(_ status: TransactionStatus) { statuses[status.transactionId] = status }
    var verifyCount: Int { verifyRequests.count }
    var balance: Int64 { balanceValue }
    func creditedIds() -> [String] { credited.keys.sorted() }

    func accountToken() async throws(CreditsError) -> UUID {
        observer?("accountToken")
        accountTokenCalls += 1
        if !accountTokenFailures.isEmpty { throw accountTokenFailures.removeFirst() }
        return token
    }

    func packages() async throws(CreditsError) -> [CreditPackage] {
        observer?("packages")
        packagesCalls += 1
        if !packagesFailures.isEmpty { throw packagesFailures.removeFirst() }
        return packageList
    }

    func balance() async throws(CreditsError) -> CreditBalance {
        observer?("balance")
        balanceCalls += 1
        return CreditBalance(balance: balanceValue, lifetimeEarned: balanceValue, lifetimeSpent: 0)
    }

    func verify(_ request: VerifyTransactionRequest) async throws(CreditsError) -> VerifiedGrant {
        observer?("verify")
        verifyRequests.append(request)
        if verifyHeld { await withCheckedContinuation { heldVerifies.append($0) } }
        if !verifyFailures.isEmpty { throw verifyFailures.removeFirst() }
        let ledger = "payment.apple_iap:\(request.transactionId)"
        if credited[request.transactionId] != nil {
            return VerifiedGrant(
                status: .alreadyGranted, productCode: request.productCode, transactionId: request.transactionId,
                creditsAdded: 0, newBalance: balanceValue, ledgerEventId: ledger)
        }
        let credits = Fixtures.allPackages.first { $0.productCode == request.productCode }?.credits ?? 0
        credited[request.transactionId] = credits
        balanceValue += credits
        return VerifiedGrant(
            status: .granted, productCode: request.productCode, transactionId: request.transactionId,
            creditsAdded: credits, newBalance: balanceValue, ledgerEventId: ledger)
    }

    func transactionStatus(transactionId: String) async throws(CreditsError) -> TransactionStatus {
        observer?("status")
        statusCalls.append(transactionId)
        if !statusFailures.isEmpty { throw statusFailures.removeFirst() }
        guard let status = statuses[transactionId] else {
            throw CreditsError(.problem(GatewayProblem(code: .notFound, status: 404, retryable: false)))
        }
        return status
    }
}
