extension GatewayCommand {
    /// The authenticated user's id, when the command has one (for logs).
    var userId: String? {
        switch self {
        case .getBalance(let user), .listPackages(let user), .getAccountToken(let user),
            .getConsumptionConsent(let user):
            return user.userId
        case .verifyTransaction(let user, _), .getTransaction(let user, _), .setConsumptionConsent(let user, _),
            .verifyReceipt(let user, _):
            return user.userId
        case .listLedger(let user, _), .listTransactions(let user, _): return user.userId
        case .handleNotification, .health, .readiness: return nil
        }
    }
}
