/// A request that passed routing, authentication and body validation: what
/// the gateway must now ask the backends. The user always comes from the
/// verified token, never from the request.
public enum GatewayCommand: Sendable, Equatable {
    case getBalance(AuthenticatedUser)
    case listPackages(AuthenticatedUser)
    case listLedger(AuthenticatedUser, PageQuery)
    case listTransactions(AuthenticatedUser, PageQuery)
    case verifyTransaction(AuthenticatedUser, VerifyTransactionRequestBody)
    case verifyReceipt(AuthenticatedUser, VerifyReceiptRequestBody)
    case getTransaction(AuthenticatedUser, transactionId: String)
    case getAccountToken(AuthenticatedUser)
    case getConsumptionConsent(AuthenticatedUser)
    case setConsumptionConsent(AuthenticatedUser, ConsumptionConsentRequestBody)
    case handleNotification(NotificationRequestBody)
    case health
    case readiness
}
